"""Entity mutation results and the batching of entity upserts (placeholder guids across batches)."""

from __future__ import annotations

import heapq
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from atlas_sync import fastjson

log = logging.getLogger("atlas_sync.atlas")


@dataclass
class MutationResult:
    """Merged ``EntityMutationResponse`` of one or more requests.

    ``guid_assignments`` maps each placeholder guid sent ("-1", ...) to the real guid. ``created`` /
    ``updated`` / ``partial_updated`` / ``deleted`` / ``purged`` hold entity headers, each guid once; an
    entity created by one batch and touched again by a later batch (e.g. as the other end of a new
    relationship) is listed only under ``created``. Entities Atlas found unchanged appear in no list
    (but do appear in ``guid_assignments``). ``requests`` counts HTTP requests made (retries excluded).
    """

    guid_assignments: dict[str, str] = field(default_factory=dict)
    created: list[dict[str, Any]] = field(default_factory=list)
    updated: list[dict[str, Any]] = field(default_factory=list)
    partial_updated: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[dict[str, Any]] = field(default_factory=list)
    purged: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0

    _KEYS = {
        "CREATE": "created",
        "UPDATE": "updated",
        "PARTIAL_UPDATE": "partial_updated",
        "DELETE": "deleted",
        "PURGE": "purged",
    }

    def merge(self, response: dict[str, Any] | None) -> None:
        """Fold one ``EntityMutationResponse`` body into this result."""
        if not response:
            return
        self.guid_assignments.update(response.get("guidAssignments") or {})
        mutated = response.get("mutatedEntities") or {}
        seen = self._seen()
        for op, attr in self._KEYS.items():
            target: list[dict[str, Any]] = getattr(self, attr)
            for header in mutated.get(op) or []:
                guid = header.get("guid")
                if guid in seen[attr] or (attr == "updated" and guid in seen["created"]):
                    continue
                target.append(header)
                seen[attr].add(guid)
        # an entity updated by an earlier batch and created by this one (rare) is listed as created only
        dropped = seen["updated"] & seen["created"]
        if dropped:
            self.updated = [h for h in self.updated if h.get("guid") not in dropped]
            seen["updated"] -= dropped

    def _seen(self) -> dict[str, set[Any]]:
        """Guids listed per list, kept across merges (merging k batches stays linear); rebuilt if a
        caller replaced or edited a list."""
        seen: dict[str, set[Any]] = self.__dict__.setdefault("_seen_guids", {})
        for attr in self._KEYS.values():
            target = getattr(self, attr)
            if attr not in seen or len(seen[attr]) != len(target):
                seen[attr] = {h.get("guid") for h in target}
        return seen

    @property
    def created_guids(self) -> list[str]:
        return [str(h.get("guid")) for h in self.created]

    @property
    def updated_guids(self) -> list[str]:
        return [str(h.get("guid")) for h in self.updated + self.partial_updated]

    @property
    def deleted_guids(self) -> list[str]:
        return [str(h.get("guid")) for h in self.deleted]

    @property
    def purged_guids(self) -> list[str]:
        return [str(h.get("guid")) for h in self.purged]

    def as_dict(self) -> dict[str, Any]:
        return {
            "guidAssignments": dict(self.guid_assignments),
            "created": self.created_guids,
            "updated": self.updated_guids,
            "deleted": self.deleted_guids,
            "purged": self.purged_guids,
            "requests": self.requests,
        }


_DECODER = json.JSONDecoder()
_ASSIGNMENTS_KEY = b'"guidAssignments"'


def guid_assignments_only(content: bytes) -> dict[str, Any]:
    """``{"guidAssignments": {...}}`` of an ``EntityMutationResponse`` body, without parsing its
    ``mutatedEntities`` (entity headers: most of the bytes) when ``guidAssignments`` is its last
    member, as Atlas (and the emulator) write it; otherwise the whole body, parsed."""
    at = content.rfind(_ASSIGNMENTS_KEY)
    if at > 0:
        text = content[at + len(_ASSIGNMENTS_KEY) :].decode("utf-8")
        colon = text.find(":")
        if colon >= 0 and not text[:colon].strip():
            start = colon + 1
            while start < len(text) and text[start] in " \t\r\n":
                start += 1
            try:
                value, end = _DECODER.raw_decode(text, start)
            except ValueError:
                value, end = None, 0
            # one closing brace left: the key was a member of the outermost object (the last one)
            if (
                isinstance(value, dict)
                and text[end:].strip() == "}"
                and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
            ):
                return {"guidAssignments": value}
    parsed = json.loads(content)
    if isinstance(parsed, dict):
        return {"guidAssignments": parsed.get("guidAssignments") or {}}
    return {}


def is_placeholder(guid: Any) -> bool:
    """Atlas treats a guid starting with '-' as unassigned (a placeholder)."""
    return isinstance(guid, str) and guid.startswith("-")


def _walk_refs(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        guid = value.get("guid")
        if isinstance(guid, str) and is_placeholder(guid):
            out.add(guid)
        for v in value.values():
            if isinstance(v, dict | list):
                _walk_refs(v, out)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, dict | list):
                _walk_refs(v, out)


def placeholder_refs(entity: dict[str, Any]) -> set[str]:
    """Placeholder guids this entity references in its attributes (its own guid excluded)."""
    out: set[str] = set()
    for key in ("attributes", "relationshipAttributes"):
        _walk_refs(entity.get(key) or {}, out)
    out.discard(str(entity.get("guid")))
    return out


def order_for_batching(entities: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stable order in which every entity comes after the placeholders it references.

    Callers normally list datasets before the processes that use them, and then this returns the
    input unchanged. A forward reference across a batch boundary would make Atlas answer 404
    ATLAS-404-00-00A ("Referenced entity -7 is not found"), so reorder; reference cycles are left in
    their given order (they must then fit in one batch).
    """
    index_of = {e.get("guid"): i for i, e in enumerate(entities) if is_placeholder(e.get("guid"))}
    deps: list[set[int]] = []
    forward = False
    for i, entity in enumerate(entities):
        d = {index_of[g] for g in placeholder_refs(entity) if g in index_of and index_of[g] != i}
        forward = forward or any(j > i for j in d)
        deps.append(d)
    if not forward:
        return list(entities)
    dependents: list[list[int]] = [[] for _ in entities]
    remaining = [len(d) for d in deps]
    for i, d in enumerate(deps):
        for j in d:
            dependents[j].append(i)
    ready = [i for i, n in enumerate(remaining) if n == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for k in dependents[i]:
            remaining[k] -= 1
            if remaining[k] == 0:
                heapq.heappush(ready, k)
    if len(order) < len(entities):
        placed = set(order)
        cyclic = [i for i in range(len(entities)) if i not in placed]
        log.warning("%d entities reference each other in a cycle; they must fit in one batch", len(cyclic))
        order.extend(cyclic)
    return [entities[i] for i in order]


def encode_entity(entity: dict[str, Any]) -> bytes:
    """The entity as it goes into a request body (compact JSON, UTF-8)."""
    return fastjson.dumps(entity)


def entity_size(entity: dict[str, Any]) -> int:
    """Bytes this entity adds to a request body."""
    return len(encode_entity(entity)) + 1


def split_batches(
    entities: Sequence[dict[str, Any]], batch_size: int, max_bytes: int
) -> Iterator[list[dict[str, Any]]]:
    """Consecutive batches of at most ``batch_size`` entities and about ``max_bytes`` of JSON.

    An entity larger than ``max_bytes`` on its own is sent alone.
    """
    batch: list[dict[str, Any]] = []
    size = 0
    for entity in entities:
        n = entity_size(entity)
        if batch and (len(batch) >= batch_size or size + n > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(entity)
        size += n
    if batch:
        yield batch


def _rewrite(value: Any, assigned: dict[str, str]) -> Any:
    """``value`` with assigned placeholder guids replaced by real ones; shares unchanged parts."""
    if isinstance(value, dict):
        changed: dict[str, Any] | None = None
        for key, v in value.items():
            if key == "guid" and is_placeholder(v) and v in assigned:
                new: Any = assigned[v]
            elif isinstance(v, dict | list):
                new = _rewrite(v, assigned)
            else:
                continue
            if new is not v:
                if changed is None:
                    changed = dict(value)
                changed[key] = new
        return value if changed is None else changed
    if isinstance(value, list):
        items = [_rewrite(v, assigned) if isinstance(v, dict | list) else v for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def rewrite_placeholders(entity: dict[str, Any], assigned: dict[str, str]) -> dict[str, Any]:
    """A copy of ``entity`` whose references to already-created placeholders use the real guids.

    The entity's own guid is kept: a repeated placeholder is matched by qualifiedName anyway.
    """
    if not assigned:
        return entity
    out = entity
    for key in ("attributes", "relationshipAttributes"):
        if key in entity and entity[key]:
            new = _rewrite(entity[key], assigned)
            if new is not entity[key]:
                if out is entity:
                    out = dict(entity)
                out[key] = new
    return out
