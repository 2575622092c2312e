"""Split an input text into OpenLineage events: one event, a JSON array of events, or JSON lines."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from atlas_sync.errors import InputError


@dataclass(frozen=True)
class RawEvent:
    """One event and where it came from (for error messages and problems)."""

    event: Any
    file: str | None
    line: int | None
    path: str


def parse_events(text: str, *, file: str | None = None) -> list[RawEvent]:
    """Parse ``text`` (one JSON event, an array of events, or one event per line)."""
    stripped = text.strip()
    if not stripped:
        raise InputError("empty file: no OpenLineage events", file=file)
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        # "Extra data" after a complete value means JSON lines (or concatenated events).
        if exc.msg != "Extra data":
            raise InputError(
                f"invalid JSON: {exc.msg}", file=file, line=exc.lineno, column=exc.colno
            ) from None
        return _json_lines(text, file)
    except RecursionError:
        raise InputError("JSON nested too deeply", file=file) from None
    if isinstance(data, list):
        return [RawEvent(e, file, None, f"$[{i}]") for i, e in enumerate(data)]
    return [RawEvent(data, file, None, "$")]


def _json_lines(text: str, file: str | None) -> list[RawEvent]:
    out: list[RawEvent] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(RawEvent(json.loads(line), file, lineno, "$"))
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON line: {exc.msg}",
                file=file,
                line=lineno,
                column=exc.colno,
                hint="JSON lines input needs one complete event per line",
            ) from None
        except RecursionError:
            raise InputError("JSON nested too deeply", file=file, line=lineno) from None
    return out
