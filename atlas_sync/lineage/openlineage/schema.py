"""Validation of OpenLineage events against the part of the spec (2.x) that atlas-sync reads.

Why our own compact JSON schema and not openlineage-python: the client's attrs models are built for
*producing* events and do not validate a dict on the way in, and the spec's JSON schema files are not
shipped in any package. The schema below is written from the spec (RunEvent 2-0-2, JobEvent,
DatasetEvent, SchemaDatasetFacet, ColumnLineageDatasetFacet 1-2-0, SymlinksDatasetFacet,
SQLJobFacet) and covers only what the converter reads; anything else (unknown facets, extra
properties) is allowed and ignored, as the spec requires of consumers. ``jsonschema`` gives precise
JSON paths for the error messages.

The spec validates each facet against its own schema, apart from the event, and its consumers (Marquez)
keep a run whose facets they cannot read. So by default an event is rejected only when its core is
unusable; a facet that breaks its schema is dropped alone (:func:`drop_bad_facets`, a warning naming
its JSON path and the rule). ``strict`` validation keeps the whole-event rejection.

Two rules of the spec's core are checked outside the schema, and only they can be waived
(``lenient_events``, for producers that break them): every event has an ``eventTime`` (an ISO 8601
date-time: it orders a job's runs), and a run's ``runId`` is a UUID.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator, ValidationError

from atlas_sync.errors import InputError

_STR = {"type": "string"}
_NONEMPTY = {"type": "string", "minLength": 1}

_TRANSFORMATION = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": _STR,
        "subtype": {"type": ["string", "null"]},
        "description": {"type": ["string", "null"]},
        "masking": {"type": ["boolean", "null"]},
    },
}
_INPUT_FIELD = {
    "type": "object",
    "required": ["namespace", "name", "field"],
    "properties": {
        "namespace": _NONEMPTY,
        "name": _NONEMPTY,
        "field": _STR,
        "transformations": {"type": ["array", "null"], "items": _TRANSFORMATION},
    },
}
_SCHEMA_FIELD: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": _STR,
        "type": {"type": ["string", "null"]},
        "description": {"type": ["string", "null"]},
        "fields": {"type": ["array", "null"], "items": {"$ref": "#/$defs/schemaField"}},
    },
}
_DOCUMENTATION = {"type": "object", "properties": {"description": _STR}}
_OWNERSHIP = {
    "type": "object",
    "properties": {
        "owners": {
            "type": ["array", "null"],
            "items": {"type": "object", "required": ["name"], "properties": {"name": _STR, "type": _STR}},
        }
    },
}
_TAGS = {
    "type": "object",
    "properties": {
        "tags": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "required": ["key", "value"],
                "properties": {"key": _STR, "value": _STR, "source": _STR, "field": _STR},
            },
        }
    },
}
# The facets the converter reads, each with its own schema: in lenient mode (the default) a facet that
# breaks its schema is dropped on its own (see :func:`drop_bad_facets`), as the spec validates each facet
# separately from the event; ``strict`` checks them as part of the event, rejecting the whole event.
DATASET_FACET_SCHEMAS: dict[str, dict[str, Any]] = {
    "schema": {
        "type": "object",
        "properties": {"fields": {"type": ["array", "null"], "items": {"$ref": "#/$defs/schemaField"}}},
    },
    "columnLineage": {
        "type": "object",
        "required": ["fields"],
        "properties": {
            "fields": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "required": ["inputFields"],
                    "properties": {
                        "inputFields": {"type": "array", "items": _INPUT_FIELD},
                        "transformationDescription": {"type": ["string", "null"]},
                        "transformationType": {"type": ["string", "null"]},
                    },
                },
            },
            "dataset": {"type": ["array", "null"], "items": _INPUT_FIELD},
        },
    },
    "documentation": _DOCUMENTATION,
    "ownership": _OWNERSHIP,
    "tags": _TAGS,
    "symlinks": {
        "type": "object",
        "properties": {
            "identifiers": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["namespace", "name"],
                    "properties": {"namespace": _NONEMPTY, "name": _NONEMPTY, "type": _STR},
                },
            }
        },
    },
}
JOB_FACET_SCHEMAS: dict[str, dict[str, Any]] = {
    "sql": {"type": "object", "properties": {"query": _STR}},
    "documentation": _DOCUMENTATION,
    "ownership": _OWNERSHIP,
    "tags": _TAGS,
    "jobType": {"type": "object"},
}
# the spec's name of each facet, for the warnings
FACET_SPEC_NAMES = {
    "schema": "SchemaDatasetFacet",
    "columnLineage": "ColumnLineageDatasetFacet",
    "symlinks": "SymlinksDatasetFacet",
    "sql": "SQLJobFacet",
    "documentation": "DocumentationJobFacet / DocumentationDatasetFacet",
    "ownership": "OwnershipJobFacet / OwnershipDatasetFacet",
    "tags": "TagsJobFacet / TagsDatasetFacet",
    "jobType": "JobTypeJobFacet",
}
_FACETS_CONTAINER = {"type": ["object", "null"]}


def _event_schemas(dataset_facets: dict[str, Any], job_facets: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """One schema per event kind, picked by shape (cheaper and clearer than a oneOf over all three)."""
    dataset = {
        "type": "object",
        "required": ["namespace", "name"],
        "properties": {"namespace": _NONEMPTY, "name": _NONEMPTY, "facets": dataset_facets},
    }
    job = {
        "type": "object",
        "required": ["namespace", "name"],
        "properties": {"namespace": _NONEMPTY, "name": _NONEMPTY, "facets": job_facets},
    }
    datasets = {"type": ["array", "null"], "items": dataset}
    bodies: dict[str, dict[str, Any]] = {
        "RunEvent": {
            "type": "object",
            "required": ["run", "job"],
            "properties": {
                "eventType": {
                    "type": ["string", "null"],
                    "enum": ["START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER", None],
                },
                "eventTime": _STR,
                "run": {"type": "object", "required": ["runId"], "properties": {"runId": _NONEMPTY}},
                "job": job,
                "inputs": datasets,
                "outputs": datasets,
            },
        },
        # static lineage, no run
        "JobEvent": {
            "type": "object",
            "required": ["job"],
            "properties": {"job": job, "inputs": datasets, "outputs": datasets},
        },
        "DatasetEvent": {"type": "object", "required": ["dataset"], "properties": {"dataset": dataset}},
    }
    return {
        name: {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": _DEFS, **body}
        for name, body in bodies.items()
    }


_DEFS = {"schemaField": _SCHEMA_FIELD}
# strict: the facets are part of the event (the whole event is rejected for one bad facet)
EVENT_SCHEMAS = _event_schemas(
    {**_FACETS_CONTAINER, "properties": DATASET_FACET_SCHEMAS},
    {**_FACETS_CONTAINER, "properties": JOB_FACET_SCHEMAS},
)
# lenient: the core only (event type, run, job, datasets' namespace and name)
CORE_SCHEMAS = _event_schemas({}, {})
_STRICT = {name: Draft202012Validator(schema) for name, schema in EVENT_SCHEMAS.items()}
_CORE = {name: Draft202012Validator(schema) for name, schema in CORE_SCHEMAS.items()}
# The same schemas compiled by jsonschema-rs: ~100x faster for "is it valid?", the question asked of
# nearly every event (~2 us against ~250 us per event: a quarter of the endpoint's CPU per request).
# jsonschema (above) still words the error, path and rule of an invalid one.
_FAST_STRICT = {name: jsonschema_rs.validator_for(schema) for name, schema in EVENT_SCHEMAS.items()}
_FAST_CORE = {name: jsonschema_rs.validator_for(schema) for name, schema in CORE_SCHEMAS.items()}
_FACET_VALIDATORS = {
    where: {name: Draft202012Validator({"$defs": _DEFS, **schema}) for name, schema in schemas.items()}
    for where, schemas in (("dataset", DATASET_FACET_SCHEMAS), ("job", JOB_FACET_SCHEMAS))
}


def _json_path(base: str, parts: Any) -> str:
    out = base
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _rule(err: ValidationError) -> str:
    """The broken rule in words (jsonschema's message, with 'required' shortened)."""
    if err.validator == "required":
        return err.message.replace("is a required property", "is required")
    return err.message


def event_kind(event: dict[str, Any]) -> str | None:
    """RunEvent (has ``run``), JobEvent (``job`` without ``run``), DatasetEvent (``dataset``)."""
    if "run" in event or "eventType" in event:
        return "RunEvent"
    if "job" in event:
        return "JobEvent"
    if "dataset" in event:
        return "DatasetEvent"
    return None


def validate_event(
    event: Any,
    *,
    file: str | None = None,
    line: int | None = None,
    path: str = "$",
    strict: bool = False,
    lenient_events: bool = False,
) -> None:
    """Raise :class:`InputError` (naming file, line and JSON path) when ``event`` is not a usable event.

    By default only the core is checked: event type, ``eventTime`` (a date-time), run (its ``runId`` a
    UUID), job, and each dataset's namespace and name; facets are checked one by one by
    :func:`drop_bad_facets`. ``strict`` checks the facets atlas-sync reads as part of the event, so one
    bad facet rejects the event. ``lenient_events`` accepts an event without ``eventTime`` (or with
    one that is not a date-time) and a ``runId`` that is not a UUID.
    """
    if not isinstance(event, dict):
        raise InputError(
            f"an OpenLineage event must be a JSON object, not {type(event).__name__}",
            file=file,
            line=line,
            path=path,
        )
    kind = event_kind(event)
    if kind is None:
        raise InputError(
            "not an OpenLineage RunEvent, JobEvent or DatasetEvent (needs 'run' and 'job', or 'dataset')",
            file=file,
            line=line,
            path=path,
            hint="see https://openlineage.io/spec",
        )
    if _fast_valid((_FAST_STRICT if strict else _FAST_CORE)[kind], event):
        err = None
    else:
        err = next(iter((_STRICT if strict else _CORE)[kind].iter_errors(event)), None)
    if err is None:
        if not lenient_events:
            _check_spec_core(event, kind, file=file, line=line, path=path)
        return
    where = _json_path(path, err.absolute_path)
    if err.validator == "enum":
        msg = f"{err.instance!r} is not an event type (START, RUNNING, COMPLETE, ABORT, FAIL, OTHER)"
    else:
        msg = _rule(err)
    raise InputError(
        f"{kind}: {msg}", file=file, line=line, path=where, hint="see https://openlineage.io/spec"
    )


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_LENIENT_HINT = (
    "the OpenLineage spec requires it (https://openlineage.io/spec); to accept such events anyway, pass "
    "--lenient-events (`openlineage serve|consume`) or -o lenient_events=true (the reader)"
)


def _check_spec_core(
    event: dict[str, Any], kind: str, *, file: str | None, line: int | None, path: str
) -> None:
    """The spec's ``eventTime`` (every event; an ISO 8601 date-time) and ``run.runId`` (a UUID)."""
    t = event.get("eventTime")
    if t is None:
        raise InputError(
            f"{kind}: 'eventTime' is required", file=file, line=line, path=path, hint=_LENIENT_HINT
        )
    try:
        datetime.fromisoformat(t)
    except ValueError:
        raise InputError(
            f"{kind}: eventTime {t!r} is not an ISO 8601 date-time",
            file=file,
            line=line,
            path=f"{path}.eventTime",
            hint=_LENIENT_HINT,
        ) from None
    run = event.get("run")
    if kind == "RunEvent" and isinstance(run, dict) and not _UUID.fullmatch(str(run.get("runId"))):
        raise InputError(
            f"{kind}: runId {run.get('runId')!r} is not a UUID",
            file=file,
            line=line,
            path=f"{path}.run.runId",
            hint=_LENIENT_HINT,
        )


def _fast_valid(validator: Any, instance: Any) -> bool:
    try:
        return bool(validator.is_valid(instance))
    except (ValueError, TypeError, OverflowError, RecursionError):
        return False  # e.g. an integer beyond 64 bits: jsonschema decides


@dataclass(frozen=True)
class FacetIssue:
    """A facet dropped from an event: its JSON path, and where and how it broke its schema."""

    path: str
    where: str
    rule: str

    def __str__(self) -> str:
        at = "" if self.where == self.path else f"{self.where}: "
        return f"{self.path} dropped ({at}{self.rule})"


def _clean_facets(facets: Any, where: str, path: str, issues: list[FacetIssue]) -> dict[str, Any] | None:
    """``facets`` without the ones that break their schema (the same object when all are good)."""
    if facets is None:
        return None
    if not isinstance(facets, dict):
        issues.append(FacetIssue(path, path, f"facets must be an object, not {type(facets).__name__}"))
        return None
    validators = _FACET_VALIDATORS[where]
    bad: list[str] = []
    fixed: dict[str, Any] = {}
    for name, value in facets.items():
        v = validators.get(name)
        if v is None or value is None:
            continue  # a facet atlas-sync does not read, or an absent one
        errors = list(v.iter_errors(value))
        if not errors:
            continue
        fpath = f"{path}.{name}"
        kept = None
        if where == "dataset" and name == "columnLineage":
            kept = _clean_column_lineage(value, errors, fpath, issues)
        elif name in _LIST_FACETS:
            kept = _clean_list_facet(value, _LIST_FACETS[name], errors, fpath, name, issues)
        if kept is not None:
            fixed[name] = kept
            continue
        err = errors[0]
        rule = f"{_rule(err)}, {FACET_SPEC_NAMES[name]}"
        issues.append(FacetIssue(fpath, _json_path(fpath, err.absolute_path), rule))
        bad.append(name)
    if not bad and not fixed:
        return facets
    return {k: fixed.get(k, v) for k, v in facets.items() if k not in bad}


# Facets that are a list of independent entries (a tag, an owner): a bad entry is dropped on its own.
_LIST_FACETS = {"tags": "tags", "ownership": "owners"}


def _clean_list_facet(
    facet: Any, key: str, errors: list[ValidationError], path: str, name: str, issues: list[FacetIssue]
) -> dict[str, Any] | None:
    """``facet`` without its bad ``key`` entries (each dropped with its own warning), or ``None`` when
    the facet's own shape is broken (then it is dropped whole)."""
    bad: dict[int, ValidationError] = {}
    for err in errors:
        parts = tuple(err.absolute_path)
        if len(parts) < 2 or parts[0] != key or not isinstance(parts[1], int):
            return None
        bad.setdefault(parts[1], err)
    for i, err in sorted(bad.items()):
        issues.append(
            FacetIssue(
                f"{path}.{key}[{i}]",
                _json_path(path, err.absolute_path),
                f"{_rule(err)}, {FACET_SPEC_NAMES[name]}; the facet's other entries are kept",
            )
        )
    return {**facet, key: [e for i, e in enumerate(facet[key]) if i not in bad]}


def _entry_of(parts: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The column-lineage entry an error sits in: one input field of an output column
    (``fields.<col>.inputFields[i]``), one output column (``fields.<col>``), one dataset-level input
    (``dataset[i]``); ``None`` when the facet's own shape is broken."""
    if len(parts) >= 4 and parts[0] == "fields" and parts[2] == "inputFields" and isinstance(parts[3], int):
        return parts[:4]
    if len(parts) >= 2 and parts[0] == "fields":
        return parts[:2]
    if len(parts) >= 2 and parts[0] == "dataset" and isinstance(parts[1], int):
        return parts[:2]
    return None


def _clean_column_lineage(
    facet: Any, errors: list[ValidationError], path: str, issues: list[FacetIssue]
) -> dict[str, Any] | None:
    """``facet`` without its bad entries (each dropped with its own warning), or ``None`` when the
    facet itself is malformed (then it is dropped whole)."""
    entries: dict[tuple[Any, ...], ValidationError] = {}
    for err in errors:
        entry = _entry_of(tuple(err.absolute_path))
        if entry is None:
            return None
        entries.setdefault(entry, err)
    # an output column that is bad as a whole drops its input-field entries with it
    columns = {e[1] for e in entries if len(e) == 2 and e[0] == "fields"}
    fields = dict(facet["fields"])
    dropped_inputs: dict[str, set[int]] = {}
    dataset_drop: set[int] = set()
    for entry, err in entries.items():
        if len(entry) == 4 and entry[1] in columns:
            continue
        issues.append(
            FacetIssue(
                _json_path(path, entry),
                _json_path(path, err.absolute_path),
                f"{_rule(err)}, {FACET_SPEC_NAMES['columnLineage']}; the facet's other entries are kept",
            )
        )
        if entry[0] == "dataset":
            dataset_drop.add(entry[1])
        elif len(entry) == 2:
            fields.pop(entry[1], None)
        else:
            dropped_inputs.setdefault(entry[1], set()).add(entry[3])
    for col, drop in dropped_inputs.items():
        spec = fields[col]
        fields[col] = {**spec, "inputFields": [f for i, f in enumerate(spec["inputFields"]) if i not in drop]}
    out = {**facet, "fields": fields}
    if dataset_drop:
        out["dataset"] = [d for i, d in enumerate(facet.get("dataset") or []) if i not in dataset_drop]
    return out


def _clean_node(node: Any, where: str, path: str, issues: list[FacetIssue]) -> Any:
    if not isinstance(node, dict) or "facets" not in node:
        return node
    facets = _clean_facets(node["facets"], where, path + ".facets", issues)
    if facets is node["facets"]:
        return node
    return {**node, "facets": facets}


def drop_bad_facets(event: dict[str, Any], path: str = "$") -> tuple[dict[str, Any], list[FacetIssue]]:
    """``event`` without the facets (of those atlas-sync reads) that break their schema, and what was dropped.

    The event itself is never changed: a cleaned copy shares everything that was good. Expects an
    event whose core :func:`validate_event` accepted.
    """
    issues: list[FacetIssue] = []
    if not isinstance(event, dict):
        return event, issues
    out = event
    for key, where in (("job", "job"), ("dataset", "dataset")):
        if key in event:
            node = _clean_node(event[key], where, f"{path}.{key}", issues)
            if node is not event[key]:
                out = {**out, key: node}
    for key in ("inputs", "outputs"):
        items = event.get(key)
        if not isinstance(items, list):
            continue
        cleaned = [_clean_node(d, "dataset", f"{path}.{key}[{i}]", issues) for i, d in enumerate(items)]
        if any(c is not d for c, d in zip(cleaned, items, strict=True)):
            out = {**out, key: cleaned}
    return out, issues
