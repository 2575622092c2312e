"""Reader options, which may arrive as text from ``-o name=value`` (what each reader takes is declared in
``atlas_sync.lineage.reader_options``)."""

from __future__ import annotations

from typing import Any

from atlas_sync.errors import InputError


def positive_int(value: Any, default: int, name: str) -> int:
    """An integer option >= 1 (``default`` when unset)."""
    if value is None or value == "":
        return default
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if n < 1:
        raise InputError(f"option {name} must be a positive integer, not {value!r}")
    return n
