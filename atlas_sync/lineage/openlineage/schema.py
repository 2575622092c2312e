"""Validation of OpenLineage events against the part of the spec (2.x) that atlas-sync reads.

Why our own compact JSON schema and not openlineage-python: the client's attrs models are built for
*producing* events and do not validate a dict on the way in, and the spec's JSON schema files are not
shipped in any package. The schema below is written from the spec (RunEvent 2-0-2, JobEvent,
DatasetEvent, SchemaDatasetFacet, ColumnLineageDatasetFacet 1-2-0, SymlinksDatasetFacet,
SQLJobFacet) and covers only what the converter reads; anything else (unknown facets, extra
properties) is allowed and ignored, as the spec requires of consumers. ``jsonschema`` gives precise
JSON paths for the error messages.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

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
_DATASET_FACETS = {
    "type": ["object", "null"],
    "properties": {
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
    },
}
_DATASET = {
    "type": "object",
    "required": ["namespace", "name"],
    "properties": {"namespace": _NONEMPTY, "name": _NONEMPTY, "facets": _DATASET_FACETS},
}
_JOB = {
    "type": "object",
    "required": ["namespace", "name"],
    "properties": {
        "namespace": _NONEMPTY,
        "name": _NONEMPTY,
        "facets": {
            "type": ["object", "null"],
            "properties": {"sql": {"type": "object", "properties": {"query": _STR}}},
        },
    },
}

_RUN_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["run", "job"],
    "properties": {
        "eventType": {
            "type": ["string", "null"],
            "enum": ["START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER", None],
        },
        "eventTime": _STR,
        "run": {"type": "object", "required": ["runId"], "properties": {"runId": _NONEMPTY}},
        "job": _JOB,
        "inputs": {"type": ["array", "null"], "items": _DATASET},
        "outputs": {"type": ["array", "null"], "items": _DATASET},
    },
}
_JOB_EVENT: dict[str, Any] = {  # static lineage, no run
    "type": "object",
    "required": ["job"],
    "properties": {
        "job": _JOB,
        "inputs": {"type": ["array", "null"], "items": _DATASET},
        "outputs": {"type": ["array", "null"], "items": _DATASET},
    },
}
_DATASET_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["dataset"],
    "properties": {"dataset": _DATASET},
}

# One schema per event kind, picked by shape (cheaper and clearer than a oneOf over all three).
EVENT_SCHEMAS: dict[str, dict[str, Any]] = {
    name: {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"schemaField": _SCHEMA_FIELD},
        **body,
    }
    for name, body in (("RunEvent", _RUN_EVENT), ("JobEvent", _JOB_EVENT), ("DatasetEvent", _DATASET_EVENT))
}
_VALIDATORS = {name: Draft202012Validator(schema) for name, schema in EVENT_SCHEMAS.items()}


def _json_path(base: str, parts: Any) -> str:
    out = base
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def event_kind(event: dict[str, Any]) -> str | None:
    """RunEvent (has ``run``), JobEvent (``job`` without ``run``), DatasetEvent (``dataset``)."""
    if "run" in event or "eventType" in event:
        return "RunEvent"
    if "job" in event:
        return "JobEvent"
    if "dataset" in event:
        return "DatasetEvent"
    return None


def validate_event(event: Any, *, file: str | None = None, line: int | None = None, path: str = "$") -> None:
    """Raise :class:`InputError` (naming file, line and JSON path) when ``event`` is not a usable event."""
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
    err = next(iter(_VALIDATORS[kind].iter_errors(event)), None)
    if err is None:
        return
    where = _json_path(path, err.absolute_path)
    if err.validator == "required":
        msg = err.message.replace("is a required property", "is required")
    elif err.validator == "enum":
        msg = f"{err.instance!r} is not an event type (START, RUNNING, COMPLETE, ABORT, FAIL, OTHER)"
    else:
        msg = err.message
    raise InputError(
        f"{kind}: {msg}", file=file, line=line, path=where, hint="see https://openlineage.io/spec"
    )
