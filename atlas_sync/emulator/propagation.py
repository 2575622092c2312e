"""Classification propagation along relationships (``propagateTags``), as a real Atlas 2.1.0 shows it.

A classification with ``propagate`` (Atlas's default) reaches every entity connected to its entity through
relationships whose ``propagateTags`` allows the direction: ``dataset_process_inputs`` (TWO_TO_ONE) takes it
from an input to the process, ``process_dataset_outputs`` (ONE_TO_TWO) on to the outputs, so it flows along
table lineage, and through ``hive_column_lineage`` (or any Process between columns) to columns;
``AtlasGlossarySemanticAssignment`` (ONE_TO_TWO) takes a term's classification to the entities it is
assigned to. Each target shows it in ``classifications`` with ``entityGuid`` = the classified entity.

What removes it (each seen on a real 2.1.0): deleting the classification, updating it to ``propagate:
false``, blocking it on a relationship (``blockedPropagatedClassifications``) or setting a relationship's
``propagateTags`` to NONE (``PUT /v2/relationship``), deleting its entity when
``removePropagationsOnEntityDelete`` is set. What does not: deleting its entity without that flag (the
propagated copies keep pointing at the deleted entity), deleting a process in between or a relationship
(2.1.0 keeps what was propagated). A new relationship on the path propagates at once.

Atlas 2.1.0 propagates in the request; 2.4.0 may defer it to a background task, so a client polls for it.
The emulator computes it at the end of every write request (in its transaction), so it is visible at once.
Nothing runs until a classification with ``propagate`` exists: lineage-only use pays nothing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from atlas_sync.emulator.repo import ACTIVE, DELETED, Repo, Row

if TYPE_CHECKING:
    from atlas_sync.emulator.state import State

ENABLED = "propagation.enabled"
DONE = "propagation"  # meta: {source guid: {classification: [target guids]}}

PROPS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS relationship_props (guid TEXT PRIMARY KEY, propagate_tags TEXT, blocked TEXT)"
)


def enable(state: State) -> None:
    """Called when a classification that propagates is attached or updated."""
    if state.store.get_meta(ENABLED) != "1":
        state.store.set_meta(ENABLED, "1")


def relationship_props(state: State, guid: str) -> tuple[str | None, list[dict[str, Any]]]:
    """A relationship's own ``propagateTags`` (None: its type's) and its blocked classifications."""
    state.store.conn.execute(PROPS_SCHEMA)
    r = state.store.conn.execute(
        "SELECT propagate_tags, blocked FROM relationship_props WHERE guid=?", (guid,)
    ).fetchone()
    if r is None:
        return None, []
    return r[0], json.loads(r[1] or "[]")


def set_relationship_props(
    state: State, guid: str, propagate_tags: str | None, blocked: list[dict[str, Any]]
) -> None:
    state.store.conn.execute(PROPS_SCHEMA)
    state.store.conn.execute(
        "INSERT OR REPLACE INTO relationship_props (guid, propagate_tags, blocked) VALUES (?,?,?)",
        (guid, propagate_tags, json.dumps(blocked)),
    )
    enable(state)


def _direction(state: State, rel_type: str, override: str | None) -> str:
    return override or str(state.registry.defs.get(rel_type, {}).get("propagateTags") or "NONE")


def reach(state: State, repo: Repo, source: str, tag: str, *, active_only: bool) -> set[str]:
    """Entities a classification of ``source`` propagates to (``source`` itself excluded)."""
    seen = {source}
    todo = [source]
    while todo:
        node = todo.pop()
        for rel in repo.rels_of(node):
            if active_only and rel.status != ACTIVE:
                continue
            override, blocked = relationship_props(state, rel.guid) if _has_props(state) else (None, [])
            if any(b.get("typeName") == tag and b.get("entityGuid") == source for b in blocked):
                continue
            how = _direction(state, rel.type_name, override)
            nxt = None
            if rel.end1 == node and how in ("ONE_TO_TWO", "BOTH"):
                nxt = rel.end2
            elif rel.end2 == node and how in ("TWO_TO_ONE", "BOTH"):
                nxt = rel.end1
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    seen.discard(source)
    return seen


def _has_props(state: State) -> bool:
    r = state.store.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='relationship_props'"
    ).fetchone()
    return r is not None


def refresh(state: State) -> None:
    """Bring every entity's propagated classifications up to date (end of a write request)."""
    if state.store.get_meta(ENABLED) != "1":
        return
    prev: dict[str, dict[str, list[str]]] = json.loads(state.store.get_meta(DONE) or "{}")
    repo = Repo(state)
    candidates = [
        r[0]
        for r in state.store.conn.execute(
            "SELECT guid FROM entities WHERE extra LIKE '%\"classifications\"%'"
        )
    ]
    now: dict[str, dict[str, list[str]]] = {}
    snapshots: dict[tuple[str, str], dict[str, Any]] = {}
    for guid in candidates:
        row = repo.get(guid)
        if row is None:
            continue
        for c in row.extra.get("classifications") or []:
            tag = c["typeName"]
            if not c.get("propagate", True):
                continue
            if row.status == DELETED and c.get("removePropagationsOnEntityDelete"):
                continue
            targets = reach(state, repo, guid, tag, active_only=True)
            old = set(prev.get(guid, {}).get(tag, []))
            if old - targets:  # what was propagated stays while a path (deleted relationships too) remains
                targets |= old & reach(state, repo, guid, tag, active_only=False)
            if targets:
                now.setdefault(guid, {})[tag] = sorted(targets)
                snapshots[(guid, tag)] = _snapshot(row, c)
    per_target: dict[str, list[dict[str, Any]]] = {}
    for source, tags in now.items():
        for tag, reached in tags.items():
            for t in reached:
                per_target.setdefault(t, []).append(snapshots[(source, tag)])
    touched = {t for tags in prev.values() for ts in tags.values() for t in ts} | set(per_target)
    for guid in touched:
        row = repo.get(guid)
        if row is None:
            continue
        want = per_target.get(guid, [])
        if (row.extra.get("propagated") or []) != want:
            if want:
                row.extra["propagated"] = want
            else:
                row.extra.pop("propagated", None)
            row.dirty = True
    repo.flush()
    if now != prev:
        state.store.set_meta(DONE, json.dumps(now, sort_keys=True))


def _snapshot(row: Row, c: dict[str, Any]) -> dict[str, Any]:
    return {
        "typeName": c["typeName"],
        "attributes": dict(c.get("attributes") or {}),
        "entityGuid": row.guid,
        "entityStatus": row.status,
        "propagate": True,
        "validityPeriods": list(c.get("validityPeriods") or []),
        "removePropagationsOnEntityDelete": bool(c.get("removePropagationsOnEntityDelete", False)),
    }


def across(state: State, rel_guid: str, end1: str, end2: str, rel_type: str) -> list[dict[str, Any]]:
    """The classifications that propagate across one relationship (``propagatedClassifications``)."""
    if state.store.get_meta(ENABLED) != "1":
        return []
    done: dict[str, dict[str, list[str]]] = json.loads(state.store.get_meta(DONE) or "{}")
    override, blocked = relationship_props(state, rel_guid)
    how = _direction(state, rel_type, override)
    pairs = []
    if how in ("ONE_TO_TWO", "BOTH"):
        pairs.append((end1, end2))
    if how in ("TWO_TO_ONE", "BOTH"):
        pairs.append((end2, end1))
    repo = Repo(state)
    out = []
    for source, tags in done.items():
        for tag, targets in tags.items():
            if any(b.get("typeName") == tag and b.get("entityGuid") == source for b in blocked):
                continue
            if any((a == source or a in targets) and b in targets for a, b in pairs):
                row = repo.get(source)
                c = (
                    next((x for x in (row.extra.get("classifications") or []) if x["typeName"] == tag), None)
                    if row
                    else None
                )
                if row is not None and c is not None:
                    out.append(_snapshot(row, c))
    return out
