"""Names for people: what Atlas's UI writes on a process's node (its ``name``; the qualifiedName keeps the
identity, with its digest)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def process_display_name(process: Mapping[str, Any], job: str) -> str:
    """``<job>: <statement type> <targets>`` for a statement the reader named by its identity
    (``etl:tab3:e4deccc6`` -> ``etl: INSERT tab3``): the job first, so two jobs writing one table stay
    apart where Atlas's UI cuts a label short (18 characters). Any other process keeps its name."""
    name = str(process.get("name") or process.get("id") or "")
    attrs = process.get("attributes") or {}
    outputs = [str(o) for o in process.get("outputs") or []]
    if process.get("kind") != "statement" or name != process.get("id") or not outputs:
        return name
    verb = str(attrs.get("statementType") or "write")
    return f"{job}: {verb} {', '.join(outputs)}"
