"""JSON on the hot paths (spooled entities, request bodies, the graph reader's items).

pydantic-core's encoder and parser (which pydantic already brings) are two to three times faster than
the standard library's ``json`` there. What they give reads back as ``json`` would: the same values,
``NaN`` and ``Infinity`` written as ``json`` writes them. The text is not always byte-identical
(``1e-07`` is written ``1e-7``), so digests, which must stay stable, keep ``json``
(:mod:`atlas_sync.reconcile.digest`). What pydantic-core refuses and ``json`` takes (a lone surrogate
escape such as ``"\\ud800"``) goes through ``json``, so the results and errors are ``json``'s.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json, to_json


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON, as ``json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()``."""
    try:
        return to_json(obj, inf_nan_mode="constants")
    except ValueError:  # (PydanticSerializationError too): json's result, or json's error
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def dumps_text(obj: Any) -> str:
    """Compact JSON text: the same document as ``json.dumps(obj)``."""
    try:
        return to_json(obj, inf_nan_mode="constants").decode()
    except ValueError:  # a lone surrogate: json escapes it
        return json.dumps(obj, separators=(",", ":"))


def loads(data: str | bytes) -> Any:
    """The value of a JSON document, as ``json.loads(data)`` gives it (``NaN`` and ``Infinity`` taken)."""
    try:
        return from_json(data)
    except ValueError:
        return json.loads(data)


def loads_strict(data: bytes) -> Any:
    """The value of a UTF-8 JSON document without ``NaN`` or ``Infinity``.

    Raises ValueError for anything else (bad UTF-8, a byte order mark, a syntax error) and for a lone
    surrogate escape, which UTF-8 cannot carry."""
    return from_json(data, allow_inf_nan=False)
