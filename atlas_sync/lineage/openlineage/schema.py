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
from jsonschema.exceptions import ValidationError

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

EVENT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {"schemaField": _SCHEMA_FIELD},
    "type": "object",
    "oneOf": [
        {  # RunEvent
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
        },
        {  # JobEvent (static lineage, no run)
            "required": ["job"],
            "not": {"required": ["run"]},
            "properties": {
                "job": _JOB,
                "inputs": {"type": ["array", "null"], "items": _DATASET},
                "outputs": {"type": ["array", "null"], "items": _DATASET},
            },
        },
        {  # DatasetEvent
            "required": ["dataset"],
            "not": {"anyOf": [{"required": ["run"]}, {"required": ["job"]}]},
            "properties": {"dataset": _DATASET},
        },
    ],
}

_VALIDATOR = Draft202012Validator(EVENT_SCHEMA)


def _json_path(base: str, parts: Any) -> str:
    out = base
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _best(error: ValidationError) -> ValidationError:
    # oneOf failures: report the branch the event was meant to be (the deepest, most specific error).
    if error.validator == "oneOf" and error.context:
        return _best(max(error.context, key=lambda e: (len(e.absolute_path), -len(e.message))))
    return error


def validate_event(event: Any, *, file: str | None = None, line: int | None = None, path: str = "$") -> None:
    """Raise :class:`InputError` (naming file, line and JSON path) when ``event`` is not a usable event."""
    if not isinstance(event, dict):
        raise InputError(
            f"an OpenLineage event must be a JSON object, not {type(event).__name__}",
            file=file,
            line=line,
            path=path,
        )
    errors = list(_VALIDATOR.iter_errors(event))
    if not errors:
        return
    err = _best(errors[0])
    where = _json_path(path, err.absolute_path)
    if err.validator == "oneOf":
        msg = "not an OpenLineage RunEvent, JobEvent or DatasetEvent (needs 'run' and 'job', or 'dataset')"
    elif err.validator == "required":
        msg = err.message.replace("is a required property", "is required")
    elif err.validator == "enum":
        msg = f"{err.instance!r} is not an event type (START, RUNNING, COMPLETE, ABORT, FAIL, OTHER)"
    else:
        msg = err.message
    raise InputError(msg, file=file, line=line, path=where, hint="see https://openlineage.io/spec")
