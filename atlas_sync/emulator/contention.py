"""Opt-in write contention, as a real Atlas on JanusGraph/BerkeleyJE shows it.

The emulator runs one request at a time, so concurrent writes never collide in it. A real Atlas
2.1.0 does: two bulk writes in flight that touch the same entities (write them, or add a
relationship to them) wait on each other's graph locks until BerkeleyJE's lock timeout, and one
fails at commit (``LockTimeoutException`` -> ``Could not commit transaction``), answered as HTTP 500
by Atlas's ``AllExceptionMapper``. With contention on, an entity write that arrives while another
write touching one of the same entities is in flight gets that 500 and changes nothing; writes
``hold_seconds`` their entities after they are applied (a slow commit), so overlaps are likely.

Entities are compared by qualifiedName; a guid is mapped to the qualifiedName seen with it in an
earlier write (or kept as the guid).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

_WRITES = ("/api/atlas/v2/entity", "/api/atlas/v2/entity/bulk")


@dataclass
class Contention:
    hold_seconds: float = 0.0
    collisions: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _busy: dict[int, set[str]] = field(default_factory=dict, repr=False)
    _qn_of: dict[str, str] = field(default_factory=dict, repr=False)
    _next: int = 0

    def touched(self, method: str, path: str, query: Mapping[str, list[str]], body: bytes) -> set[str]:
        """Entities an entity write touches (empty for anything else)."""
        if method == "DELETE" and path.startswith("/api/atlas/v2/entity/"):
            guids = list(query.get("guid") or [])
            if path.startswith("/api/atlas/v2/entity/guid/"):
                guids.append(path.rsplit("/", 1)[1])
            return {self._name(g) for g in guids}
        if method not in ("POST", "PUT") or path not in _WRITES:
            return set()
        try:
            doc = json.loads(body or b"{}")
        except ValueError:
            return set()
        out: set[str] = set()
        for e in _entities(doc):
            qn = (e.get("attributes") or {}).get("qualifiedName")
            guid = e.get("guid")
            out.add(f"qn:{qn}" if isinstance(qn, str) else self._name(guid))
            for section in ("attributes", "relationshipAttributes"):
                for ref in _refs(e.get(section)):
                    out.add(ref if ref.startswith("qn:") else self._name(ref))
        out.discard("")
        return out

    def _name(self, guid: Any) -> str:
        if not isinstance(guid, str) or guid.startswith("-"):
            return ""
        qn = self._qn_of.get(guid)
        return f"qn:{qn}" if qn is not None else f"guid:{guid}"

    def claim(self, keys: set[str]) -> int | None:
        """A ticket for a write touching ``keys``, or None when a write in flight touches one of them."""
        with self._lock:
            if any(not keys.isdisjoint(other) for other in self._busy.values()):
                self.collisions += 1
                return None
            self._next += 1
            self._busy[self._next] = keys
            return self._next

    def release(self, ticket: int, body: bytes, response: bytes) -> None:
        """End a write; learn the guids it assigned (for later writes that refer by guid)."""
        with self._lock:
            self._busy.pop(ticket, None)
        try:
            doc, answer = json.loads(body or b"{}"), json.loads(response or b"{}")
        except ValueError:
            return
        if not isinstance(answer, dict):
            return
        assigned = answer.get("guidAssignments") or {}
        for e in _entities(doc):
            qn = (e.get("attributes") or {}).get("qualifiedName")
            guid = assigned.get(e.get("guid"), e.get("guid"))
            if isinstance(qn, str) and isinstance(guid, str) and not guid.startswith("-"):
                self._qn_of[guid] = qn


def _entities(doc: Any) -> list[dict[str, Any]]:
    if not isinstance(doc, dict):
        return []
    found = doc.get("entities") if "entities" in doc else [doc.get("entity")]
    return [e for e in found or [] if isinstance(e, dict)]


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, list):
        for v in value:
            yield from _refs(v)
    elif isinstance(value, dict):
        unique = value.get("uniqueAttributes")
        if isinstance(unique, dict) and isinstance(unique.get("qualifiedName"), str):
            yield f"qn:{unique['qualifiedName']}"
        elif isinstance(value.get("guid"), str):  # an object id, with or without its typeName
            yield value["guid"]
        else:  # an attributes map or a struct: references may sit in its values
            for v in value.values():
                if isinstance(v, dict | list):
                    yield from _refs(v)
