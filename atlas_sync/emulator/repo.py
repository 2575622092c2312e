"""Entity data access for one request: a row cache over the ``entities`` table, pending writes, and the
``relationships`` rows that hold relationship attributes (each with its own guid and status)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas_sync.emulator.types import EntityType, RelEnd

if TYPE_CHECKING:
    import sqlite3

    from atlas_sync.emulator.state import State

ACTIVE = "ACTIVE"
DELETED = "DELETED"


def _loads(text: str | None) -> Any:
    return json.loads(text) if text else {}


def dump_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# Atlas's system attributes, each with the Row field (and entities column) holding it
SYSTEM_FIELDS = {"__guid": "guid", "__typeName": "type_name", "__state": "status", "__createdBy": "created_by",
                 "__modifiedBy": "updated_by", "__timestamp": "create_time",
                 "__modificationTimestamp": "update_time"}  # fmt: skip


@dataclass
class Row:
    """One entity as held during a request."""

    guid: str
    type_name: str
    status: str
    attrs: dict[str, Any]
    created_by: str
    updated_by: str
    create_time: int
    update_time: int
    version: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    new: bool = False
    dirty: bool = False

    @property
    def qualified_name(self) -> str | None:
        qn = self.attrs.get("qualifiedName")
        return None if qn is None else str(qn)


def display_text(et: EntityType | None, row: Row) -> Any:
    attrs = row.attrs
    if et is not None and et.display and attrs.get(et.display) is not None:
        return attrs[et.display]
    for key in ("name", "displayName", "qualifiedName"):
        if attrs.get(key) is not None:
            return attrs[key]
    return None


@dataclass
class Rel:
    guid: str
    type_name: str
    end1: str
    end2: str
    status: str


class Repo:
    """Data access for one request (row cache + pending writes), bound to the open transaction."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.conn: sqlite3.Connection = state.store.conn
        self.reg = state.registry
        self.rows: dict[str, Row | None] = {}
        # entities of the current write request not created yet: guid -> (typeName, qualifiedName)
        self.pending: dict[str, tuple[str, Any]] = {}
        # (type, qualifiedName, subtypes) -> guid found (or None) during this request: lookups repeat a lot
        self._found: dict[tuple[str, str, bool], str | None] = {}
        # answers that hold for the whole request, e.g. whether any term is assigned at all
        self.flags: dict[str, bool] = {}

    # -- entities
    def _row(self, r: sqlite3.Row) -> Row:
        return Row(
            guid=r["guid"],
            type_name=r["type_name"],
            status=r["status"],
            attrs=_loads(r["attrs"]),
            created_by=r["created_by"],
            updated_by=r["updated_by"],
            create_time=r["create_time"],
            update_time=r["update_time"],
            version=r["version"],
            extra=_loads(r["extra"]),
        )

    def get(self, guid: str) -> Row | None:
        if guid in self.rows:
            return self.rows[guid]
        r = self.conn.execute("SELECT * FROM entities WHERE guid=?", (guid,)).fetchone()
        row = None if r is None else self._row(r)
        self.rows[guid] = row
        return row

    def get_many(self, guids: list[str]) -> dict[str, Row]:
        missing = [g for g in guids if g not in self.rows]
        for i in range(0, len(missing), 500):
            chunk = missing[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.conn.execute(f"SELECT * FROM entities WHERE guid IN ({marks})", chunk):
                self.rows[r["guid"]] = self._row(r)
            for g in chunk:
                self.rows.setdefault(g, None)
        return {g: row for g in guids if (row := self.rows.get(g)) is not None}

    def find_active(self, type_name: str, qualified_name: Any, *, subtypes: bool = True) -> Row | None:
        """ACTIVE entity by (type, qualifiedName): the exact type first, then any subtype."""
        if qualified_name is None:
            return None
        qn = str(qualified_name)
        key = (type_name, qn, subtypes)
        if key in self._found:
            found = self._found[key]
            return None if found is None else self.rows.get(found)
        row = self._find_active(type_name, qn, subtypes)
        self._found[key] = None if row is None else row.guid
        return row

    def _find_active(self, type_name: str, qn: str, subtypes: bool) -> Row | None:
        r = self.conn.execute(
            "SELECT * FROM entities WHERE type_name=? AND qualified_name=? AND status='ACTIVE' ORDER BY seq LIMIT 1",
            (type_name, qn),
        ).fetchone()
        if r is None and subtypes:
            et = self.reg.entity(type_name)
            others = sorted(et.subs - {type_name}) if et else []
            if others:
                marks = ",".join("?" * len(others))
                r = self.conn.execute(
                    f"SELECT * FROM entities WHERE type_name IN ({marks}) AND qualified_name=? "
                    "AND status='ACTIVE' ORDER BY seq LIMIT 1",
                    (*others, qn),
                ).fetchone()
        if r is None:
            return None
        cached = self.rows.get(r["guid"])
        if cached is not None:
            return cached
        row = self._row(r)
        self.rows[row.guid] = row
        return row

    def active_copies(self, type_name: str, qualified_name: str) -> list[Row]:
        """Every ACTIVE entity of exactly ``type_name`` holding ``qualified_name`` (several only after
        racing creates: Emulator.set_racing_creates)."""
        rows = self.conn.execute(
            "SELECT guid FROM entities WHERE type_name=? AND qualified_name=? AND status='ACTIVE' ORDER BY seq",
            (type_name, qualified_name),
        ).fetchall()
        return [row for row in (self.get(r["guid"]) for r in rows) if row is not None]

    def find_by_unique(self, type_name: str, attrs: dict[str, Any]) -> Row | None:
        """ACTIVE entity by unique attributes; qualifiedName uses the index, others a JSON scan."""
        if attrs.get("qualifiedName") is not None:
            return self.find_active(type_name, attrs["qualifiedName"])
        et = self.reg.entity(type_name)
        if et is None:
            return None
        for name, value in attrs.items():
            if name not in et.unique or value is None or '"' in name:
                continue
            for types in ([type_name], sorted(et.subs - {type_name})):
                if not types:
                    continue
                marks = ",".join("?" * len(types))
                r = self.conn.execute(
                    f"SELECT * FROM entities WHERE type_name IN ({marks}) AND status='ACTIVE' "
                    "AND CAST(json_extract(attrs, ?) AS TEXT) = ? ORDER BY seq LIMIT 1",
                    (*types, f'$."{name}"', str(value)),
                ).fetchone()
                if r is not None:
                    cached = self.rows.get(r["guid"])
                    if cached is not None:
                        return cached
                    row = self._row(r)
                    self.rows[row.guid] = row
                    return row
            return None
        return None

    def first_active(self, type_name: str) -> Row | None:
        r = self.conn.execute(
            "SELECT * FROM entities WHERE type_name=? AND status='ACTIVE' ORDER BY seq LIMIT 1", (type_name,)
        ).fetchone()
        if r is None:
            return None
        return self.rows.get(r["guid"]) or self._row(r)

    def flush(self) -> None:
        new = [r for r in self.rows.values() if r is not None and r.new]
        dirty = [r for r in self.rows.values() if r is not None and r.dirty and not r.new]
        if new:
            self.conn.executemany(
                "INSERT INTO entities (guid, type_name, qualified_name, status, attrs, created_by, updated_by, "
                "create_time, update_time, version, extra) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        r.guid,
                        r.type_name,
                        r.qualified_name,
                        r.status,
                        dump_json(r.attrs),
                        r.created_by,
                        r.updated_by,
                        r.create_time,
                        r.update_time,
                        r.version,
                        dump_json(r.extra) if r.extra else None,
                    )
                    for r in new
                ],
            )
        if dirty:
            self.conn.executemany(
                "UPDATE entities SET qualified_name=?, status=?, attrs=?, updated_by=?, update_time=?, extra=? "
                "WHERE guid=?",
                [
                    (
                        r.qualified_name,
                        r.status,
                        dump_json(r.attrs),
                        r.updated_by,
                        r.update_time,
                        dump_json(r.extra) if r.extra else None,
                        r.guid,
                    )
                    for r in dirty
                ],
            )
        for r in new + dirty:
            r.new = r.dirty = False

    # -- relationships
    def rels_of(self, guid: str) -> list[Rel]:
        """Every relationship row touching an entity (both ends, any state), oldest first."""
        rows = self.conn.execute(
            "SELECT guid, type_name, end1, end2, status, seq FROM relationships WHERE end1=? "
            "UNION ALL SELECT guid, type_name, end1, end2, status, seq FROM relationships WHERE end2=? "
            "ORDER BY seq",
            (guid, guid),
        ).fetchall()
        return [Rel(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def rels_for_attr(self, guid: str, end: RelEnd) -> list[Rel]:
        col = "end1" if end.end == 1 else "end2"
        rows = self.conn.execute(
            f"SELECT guid, type_name, end1, end2, status FROM relationships WHERE {col}=? AND type_name=? "
            "ORDER BY seq",
            (guid, end.rel_type),
        ).fetchall()
        return [Rel(*r) for r in rows]

    def add_rel(self, rel_type: str, end1: str, end2: str, now: int) -> str:
        guid = str(uuid.uuid4())
        self.conn.execute(
            "INSERT INTO relationships (guid, type_name, end1, end2, status, created_by, create_time, update_time)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (guid, rel_type, end1, end2, ACTIVE, self.state.user, now, now),
        )
        return guid

    def set_rel_status(self, rel_guids: list[str], status: str, now: int) -> None:
        self.conn.executemany(
            "UPDATE relationships SET status=?, update_time=? WHERE guid=?",
            [(status, now, g) for g in rel_guids],
        )
