"""Lineage endpoints (contract §7): Atlas 2.4's ``getLineageInfoV2`` traversal over the Process
``inputs``/``outputs`` relationships, edge state not filtered (deleted edges and entities included)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atlas_sync.emulator.entities import header
from atlas_sync.emulator.errors import AtlasApiError, InternalError
from atlas_sync.emulator.repo import Repo, Row

if TYPE_CHECKING:
    from atlas_sync.emulator.state import State

INPUTS = "dataset_process_inputs"
OUTPUTS = "process_dataset_outputs"


class _Walk:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.relations: list[dict[str, str]] = []
        self.seen_rel: set[str] = set()
        self.entities: dict[str, dict[str, Any]] = {}

    def edges_from_process(self, process: str, rel_type: str) -> list[tuple[str, str]]:
        """(relationship guid, dataset guid) of a Process's inputs or outputs edges."""
        rows = self.repo.conn.execute(
            "SELECT guid, end2 FROM relationships WHERE end1=? AND type_name=? ORDER BY seq",
            (process, rel_type),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def edges_to_dataset(self, dataset: str, rel_type: str) -> list[tuple[str, str]]:
        rows = self.repo.conn.execute(
            "SELECT guid, end1 FROM relationships WHERE end2=? AND type_name=? ORDER BY seq",
            (dataset, rel_type),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def add(self, rel_guid: str, process: str, dataset: str, rel_type: str) -> None:
        for g in (process, dataset):
            if g not in self.entities:
                row = self.repo.get(g)
                if row is not None:
                    self.entities[g] = header(self.repo, row, classifications=False)
        if rel_guid in self.seen_rel:
            return
        self.seen_rel.add(rel_guid)
        if rel_type == INPUTS:
            self.relations.append(
                {"fromEntityId": dataset, "toEntityId": process, "relationshipId": rel_guid}
            )
        else:
            self.relations.append(
                {"fromEntityId": process, "toEntityId": dataset, "relationshipId": rel_guid}
            )

    def traverse(self, dataset: str, is_input: bool, depth: int, visited: set[str]) -> None:
        if depth == 0:
            return
        visited.add(dataset)
        into = OUTPUTS if is_input else INPUTS  # edges arriving at the dataset from a process
        onward = INPUTS if is_input else OUTPUTS
        for rel_in, process in self.edges_to_dataset(dataset, into):
            for rel_out, other in self.edges_from_process(process, onward):
                self.add(rel_in, process, dataset, into)
                self.add(rel_out, process, other, onward)
                if other not in visited:
                    self.traverse(other, is_input, depth - 1, visited)


def lineage(state: State, guid: str, query: dict[str, list[str]]) -> dict[str, Any]:
    direction = (query.get("direction") or ["BOTH"])[0]
    if direction not in ("INPUT", "OUTPUT", "BOTH"):
        raise InternalError(f"bad direction {direction}")  # Jersey enum conversion failure -> 500
    depth_text = (query.get("depth") or ["3"])[0]
    try:
        depth = int(depth_text)
    except ValueError as exc:
        raise InternalError(f"bad depth {depth_text}") from exc
    repo = Repo(state)
    row = repo.get(guid)
    if row is None:
        raise AtlasApiError("ATLAS-404-00-005", guid)
    return _lineage(repo, row, direction, depth)


def _lineage(repo: Repo, row: Row, direction: str, depth: int) -> dict[str, Any]:
    et = repo.reg.entity(row.type_name)
    is_dataset = et is not None and et.is_a("DataSet")
    is_process = et is not None and et.is_a("Process")
    if not (is_dataset or is_process):
        raise AtlasApiError("ATLAS-404-00-011", row.guid, row.type_name)
    walk = _Walk(repo)
    limit = -1 if depth == 0 else depth
    if is_dataset:
        if direction in ("INPUT", "BOTH"):
            walk.traverse(row.guid, True, limit, set())
        if direction in ("OUTPUT", "BOTH"):
            walk.traverse(row.guid, False, limit, set())
    else:
        # one hop to the process's own datasets, then traverse from them with depth - 1
        for rel_type, is_input, wanted in (
            (INPUTS, True, ("INPUT", "BOTH")),
            (OUTPUTS, False, ("OUTPUT", "BOTH")),
        ):
            if direction not in wanted:
                continue
            for rel_guid, dataset in walk.edges_from_process(row.guid, rel_type):
                walk.add(rel_guid, row.guid, dataset, rel_type)
                walk.traverse(dataset, is_input, limit - 1, set())
    return {
        "baseEntityGuid": row.guid,
        "lineageDirection": direction,
        "lineageDepth": depth,
        "guidEntityMap": walk.entities,
        "relations": walk.relations,
        "relationsOnDemand": {},
    }


def lineage_by_unique(state: State, type_name: str, query: dict[str, list[str]]) -> dict[str, Any]:
    direction = (query.get("direction") or ["BOTH"])[0]
    if direction not in ("INPUT", "OUTPUT", "BOTH"):
        raise InternalError(f"bad direction {direction}")
    depth_text = (query.get("depth") or ["3"])[0]
    try:
        depth = int(depth_text)
    except ValueError as exc:
        raise InternalError(f"bad depth {depth_text}") from exc
    if state.registry.entity(type_name) is None:
        raise AtlasApiError("ATLAS-400-00-014", "ENTITY", type_name)
    repo = Repo(state)
    attrs = {k[5:]: v[0] for k, v in query.items() if k.startswith("attr:") and v}
    row = None
    et = state.registry.entity(type_name)
    if et is not None and any(k in et.unique for k in attrs):
        row = repo.find_by_unique(type_name, attrs)
    elif attrs:
        row = repo.first_active(type_name)  # attr names are not validated (contract §7)
    if row is None:
        raise AtlasApiError("ATLAS-404-00-009", type_name, _unique_text(attrs))
    return _lineage(repo, row, direction, depth)


def _unique_text(attrs: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in attrs.items()) + "}"
