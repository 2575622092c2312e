"""The sync's spool: a temporary SQLite database holding what a sync read, rendered and listed.

In memory for an ordinary input, in a temporary file for a big one (reconcile.stream): spooled chunks
and the dataset catalogue (pass 1), desired entities with their digests and references (pass 2), and
what Atlas holds for the job (its listing and lookups, with owners, digests and job keys), which the
plan is computed from (pass 3).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from atlas_sync import fastjson
from atlas_sync.lineage.model import Dataset
from atlas_sync.reconcile.actual import Key
from atlas_sync.reconcile.bookkeeping import Bookkeeping
from atlas_sync.reconcile.digest import entity_digest
from atlas_sync.reconcile.plan import _desired_from_json, _desired_json
from atlas_sync.render.renderer import DesiredEntity, DesiredState, RenderedKeys

# Desired entities per read-back chunk, and at most about this many bytes of their JSON: an entity
# with 50,000 references (a Spark plan's process or column lineage) comes back with 50,000 referred
# entities.
READ_CHUNK = 1000
READ_BYTES = 2_000_000
# The guid of a listed entity known from the job's receipt, not from Atlas (reconcile.receipt): one
# rendered as the receipt's sync rendered it, which is not read, written or referred to by guid.
UNREAD = ""


class Spool:
    """A temporary SQLite file: spooled chunks, desired entities, and the domain's headers."""

    def __init__(self, directory: str | None = None, *, memory: bool = False) -> None:
        self.path = ":memory:"
        if not memory:
            fd, self.path = tempfile.mkstemp(prefix="atlas-sync-spool-", suffix=".sqlite", dir=directory)
            os.close(fd)
        self.db = sqlite3.connect(self.path)
        self.db.executescript(
            """
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            PRAGMA temp_store = FILE;
            PRAGMA cache_size = -16000;
            CREATE TABLE chunk (id INTEGER PRIMARY KEY, doc TEXT NOT NULL);
            CREATE TABLE dataset (
                seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL,
                rendered INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE edge_column (
                seq INTEGER PRIMARY KEY, ds TEXT NOT NULL, col TEXT NOT NULL, UNIQUE (ds, col));
            CREATE TABLE ds_key (
                ds TEXT PRIMARY KEY, type TEXT NOT NULL, qn TEXT NOT NULL, tier INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE col_key (
                ds TEXT NOT NULL, col TEXT NOT NULL, type TEXT NOT NULL, qn TEXT NOT NULL,
                tier INTEGER NOT NULL, PRIMARY KEY (ds, col)) WITHOUT ROWID;
            CREATE TABLE desired (
                type TEXT NOT NULL, qn TEXT NOT NULL, tier INTEGER NOT NULL, origin TEXT NOT NULL,
                body TEXT NOT NULL, conflict TEXT, shared INTEGER NOT NULL DEFAULT 0, digest TEXT,
                name TEXT, PRIMARY KEY (type, qn)) WITHOUT ROWID;
            CREATE TABLE desired_ref (
                type TEXT NOT NULL, qn TEXT NOT NULL, rtype TEXT NOT NULL, rqn TEXT NOT NULL,
                PRIMARY KEY (type, qn, rtype, rqn)) WITHOUT ROWID;
            CREATE TABLE actual (
                type TEXT NOT NULL, qn TEXT NOT NULL, guid TEXT NOT NULL, owner TEXT, digest TEXT,
                PRIMARY KEY (type, qn)) WITHOUT ROWID;
            CREATE INDEX actual_guid ON actual (guid);
            CREATE TABLE foreign_ (
                type TEXT NOT NULL, qn TEXT NOT NULL, guid TEXT NOT NULL, PRIMARY KEY (type, qn)
            ) WITHOUT ROWID;
            CREATE INDEX foreign_guid ON foreign_ (guid);
            CREATE TABLE created (
                type TEXT NOT NULL, qn TEXT NOT NULL, guid TEXT NOT NULL, PRIMARY KEY (type, qn)
            ) WITHOUT ROWID;
            CREATE INDEX desired_ref_target ON desired_ref (rtype, rqn);
            """
        )
        # The open connection keeps the file; without a name it cannot outlive a killed sync
        # (POSIX; where an open file cannot be removed, close() removes it).
        if not memory:
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def close(self) -> None:
        self.db.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    # ------------------------------------------------------------------ catalogue
    def merge_datasets(self, datasets: Iterable[Dataset]) -> None:
        """Add datasets, merging columns into one already stored (as ``LineageGraph.add_dataset``)."""
        for d in datasets:
            row = self.db.execute("SELECT doc FROM dataset WHERE id = ?", (d.id,)).fetchone()
            if row is None:
                self.db.execute("INSERT INTO dataset (id, doc) VALUES (?, ?)", (d.id, d.model_dump_json()))
                continue
            have = Dataset.model_validate_json(row[0])
            names = set(have.column_names())
            new = [c for c in d.columns if c.name not in names]
            # as the SQL readers do: a later CREATE VIEW tells what an earlier read was
            refined = have.kind == "table" and d.kind in ("view", "intermediate")
            if new or refined:
                have.columns.extend(new)
                if refined:
                    have.kind = d.kind
                self.db.execute("UPDATE dataset SET doc = ? WHERE id = ?", (have.model_dump_json(), d.id))

    def add_edge_columns(self, pairs: Iterable[tuple[str, str]]) -> None:
        self.db.executemany("INSERT OR IGNORE INTO edge_column (ds, col) VALUES (?, ?)", pairs)

    def datasets(self, ids: list[str]) -> tuple[list[Dataset], dict[str, list[str]]]:
        """The stored datasets among ``ids`` (in that order), and the columns that edges anywhere in
        the input use on them but no reader listed (in edge order), marking them rendered."""
        out: list[Dataset] = []
        extra: dict[str, list[str]] = {}
        for lo in range(0, len(ids), 500):
            part = ids[lo : lo + 500]
            marks = ",".join("?" * len(part))
            found = {
                r[0]: Dataset.model_validate_json(r[1])
                for r in self.db.execute(f"SELECT id, doc FROM dataset WHERE id IN ({marks})", part)
            }
            out.extend(found[i] for i in part if i in found)
            for ds, col in self.db.execute(
                f"SELECT ds, col FROM edge_column WHERE ds IN ({marks}) ORDER BY seq", part
            ):
                d = found.get(ds)
                if d is not None and not d.has_column(col):
                    extra.setdefault(ds, []).append(col)
            self.db.execute(f"UPDATE dataset SET rendered = 1 WHERE id IN ({marks})", part)
        return out, extra

    def unrendered_datasets(self, ids: list[str] | None = None) -> list[str]:
        """The catalogue's datasets not rendered yet: all, or those among ``ids`` (in that order)."""
        if ids is None:
            return [r[0] for r in self.db.execute("SELECT id FROM dataset WHERE rendered = 0 ORDER BY seq")]
        out: list[str] = []
        for lo in range(0, len(ids), 500):
            part = ids[lo : lo + 500]
            marks = ",".join("?" * len(part))
            todo = {
                r[0]
                for r in self.db.execute(
                    f"SELECT id FROM dataset WHERE rendered = 0 AND id IN ({marks})", part
                )
            }
            out.extend(i for i in part if i in todo)
        return out

    def add_keys(self, state: DesiredState) -> None:
        """Remember which key (and tier) each dataset and column of ``state`` rendered to."""
        tiers = {k: e.tier for k, e in state.entities.items()}
        self.db.executemany(
            "INSERT OR REPLACE INTO ds_key (ds, type, qn, tier) VALUES (?, ?, ?, ?)",
            ((ds, k[0], k[1], tiers[k]) for ds, k in state.dataset_keys.items()),
        )
        self.db.executemany(
            "INSERT OR REPLACE INTO col_key (ds, col, type, qn, tier) VALUES (?, ?, ?, ?, ?)",
            ((ds, col, k[0], k[1], tiers[k]) for (ds, col), k in state.column_keys.items()),
        )

    def rendered_keys(self, ids: list[str], columns: list[tuple[str, str]]) -> RenderedKeys:
        """The rendered keys of datasets ``ids`` and of the columns ``columns`` (dataset, column)."""
        out = RenderedKeys()
        for lo in range(0, len(ids), 500):
            part = ids[lo : lo + 500]
            marks = ",".join("?" * len(part))
            for ds, t, qn, tier in self.db.execute(
                f"SELECT ds, type, qn, tier FROM ds_key WHERE ds IN ({marks})", part
            ):
                out.datasets[ds] = (t, qn)
                out.tiers[(t, qn)] = tier
        for pair in columns:
            row = self.db.execute(
                "SELECT type, qn, tier FROM col_key WHERE ds = ? AND col = ?", pair
            ).fetchone()
            if row is not None:
                out.columns[pair] = (row[0], row[1])
                out.tiers[(row[0], row[1])] = row[2]
        return out

    def dataset_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM dataset").fetchone()[0])

    # ------------------------------------------------------------------ desired
    def add_desired(
        self,
        state: DesiredState,
        bookkeeping: Bookkeeping | None = None,
        create_only: Mapping[str, str] | None = None,
    ) -> set[str]:
        """Store rendered entities; an entity already stored from the same origin is kept as is.
        The keys each one refers to; with the profile's digest attribute (``bookkeeping``), its digest
        (reconcile.digest); ``create_only``: attributes written when an entity is created, with its
        owner (the key: so the digest does not cover them). Returns the names of the reference
        attributes seen."""
        digest_name = bookkeeping.profile.digest if bookkeeping is not None else None
        rows = []
        refs: list[tuple[str, str, str, str]] = []
        ref_names: set[str] = set()
        for e in state.entities.values():
            ref_names.update(e.refs)
            if create_only:
                e.create_only.update(create_only)
            digest = entity_digest(e, digest_name) if digest_name is not None else None
            refs.extend(
                (e.type_name, e.qualified_name, k[0], k[1])
                for v in e.refs.values()
                for k in (v if isinstance(v, list) else ([v] if v else []))
            )
            name = e.attributes.get("name")
            rows.append(
                (
                    e.type_name,
                    e.qualified_name,
                    e.tier,
                    e.origin,
                    fastjson.dumps_text(_desired_json(e)),
                    int(e.shared),
                    digest,
                    # (names_of: a plain name as it is, any other read back from the body as before)
                    name if type(name) is str and name.isprintable() else None,
                )
            )
        # Same key from another origin: two nodes render to one name (reported before any write).
        self.db.executemany(
            "INSERT INTO desired (type, qn, tier, origin, body, shared, digest, name) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (type, qn) DO UPDATE SET conflict = COALESCE(conflict, excluded.origin) "
            "WHERE desired.origin != excluded.origin",
            rows,
        )
        self.db.executemany("INSERT OR IGNORE INTO desired_ref VALUES (?, ?, ?, ?)", refs)
        return ref_names

    def first_collision(self) -> tuple[str, str, str, str] | None:
        row = self.db.execute(
            "SELECT type, qn, origin, conflict FROM desired WHERE conflict IS NOT NULL LIMIT 1"
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2], row[3])

    def desired_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM desired").fetchone()[0])

    def is_desired(self, key: Key) -> bool:
        return self.db.execute("SELECT 1 FROM desired WHERE type = ? AND qn = ?", key).fetchone() is not None

    # A desired entity whose stored digest is the one it would be written with, and that refers to
    # nothing Atlas lacks (a deleted entity's relationships went with it: they must be written again).
    _SAME = (
        "a.digest IS NOT NULL AND a.digest = d.digest AND NOT EXISTS ("
        " SELECT 1 FROM desired_ref r WHERE r.type = d.type AND r.qn = d.qn"
        " AND NOT EXISTS (SELECT 1 FROM actual x WHERE x.type = r.rtype AND x.qn = r.rqn)"
        " AND NOT EXISTS (SELECT 1 FROM foreign_ f WHERE f.type = r.rtype AND f.qn = r.rqn))"
    )

    def same_digest(self) -> Iterator[tuple[str, str, int, str, str]]:
        """(type, qualifiedName, tier, guid, digest) of the desired entities found unchanged by digest."""
        cur = self.db.execute(
            "SELECT d.type, d.qn, d.tier, NULLIF(a.guid, ''), a.digest FROM desired d "
            f"JOIN actual a ON a.type = d.type AND a.qn = d.qn WHERE {self._SAME} ORDER BY d.tier, d.type, d.qn"
        )
        yield from rows(cur)

    def desired_with_guids(
        self, *, bookkeeping: Bookkeeping | None = None, skip_same: bool = False
    ) -> Iterator[list[tuple[DesiredEntity, str | None]]]:
        """Desired entities in dependency order, with the guid Atlas holds them under, in chunks of
        at most ``READ_CHUNK`` entities and about ``READ_BYTES`` of JSON, each carrying its digest
        where the server has the digest attribute (``bookkeeping``); ``skip_same``: without those
        :meth:`same_digest` gives."""
        digest_name = bookkeeping.digest if bookkeeping is not None else None
        where = f"WHERE NOT (a.guid IS NOT NULL AND {self._SAME}) " if skip_same else ""
        cur = self.db.execute(
            "SELECT d.body, d.tier, NULLIF(a.guid, ''), d.digest FROM desired d "
            f"LEFT JOIN actual a ON a.type = d.type AND a.qn = d.qn {where}ORDER BY d.tier, d.type, d.qn"
        )
        out: list[tuple[DesiredEntity, str | None]] = []
        size = 0
        for body, tier, guid, digest in rows(cur):
            if out and (len(out) >= READ_CHUNK or size + len(body) > READ_BYTES):
                yield out
                out, size = [], 0
            e = _desired_from_json(fastjson.loads(body))
            e.tier = tier
            if digest_name is not None and digest is not None:
                e.attributes[digest_name] = digest
            out.append((e, guid))
            size += len(body)
        if out:
            yield out

    # ------------------------------------------------------------------ actual
    def add_actual(self, rows: Iterable[tuple[str, str, str, str | None, str | None]]) -> None:
        """Listed entities: (type, qualifiedName, guid, owner, stored digest); a key listed again
        (or written) keeps its first owner and digest and takes the new guid."""
        self.db.executemany(
            "INSERT INTO actual (type, qn, guid, owner, digest) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (type, qn) DO UPDATE SET guid = excluded.guid",
            rows,
        )

    def actual_count(self, owner: str | None = None) -> int:
        """Entities listed (or looked up), or only those ``owner`` owns."""
        if owner is None:
            return int(self.db.execute("SELECT count(*) FROM actual").fetchone()[0])
        return int(self.db.execute("SELECT count(*) FROM actual WHERE owner = ?", (owner,)).fetchone()[0])

    def held_by_others(self, owner: str) -> int:
        """Desired entities Atlas holds as another job's (or another tool's) rather than ``owner``'s."""
        listed = self.db.execute(
            "SELECT count(*) FROM desired d JOIN actual a ON a.type = d.type AND a.qn = d.qn "
            "WHERE a.owner IS NOT ?",
            (owner,),
        ).fetchone()[0]
        outside = self.db.execute(
            "SELECT count(*) FROM desired d JOIN foreign_ f ON f.type = d.type AND f.qn = d.qn"
        ).fetchone()[0]
        return int(listed) + int(outside)

    def desired_digests(self) -> Iterator[tuple[str, str, str | None]]:
        """(type, qualifiedName, digest) of every desired entity, in key order."""
        yield from rows(self.db.execute("SELECT type, qn, digest FROM desired ORDER BY type, qn"))

    def input_parts(self) -> Iterator[str]:
        """The input as read, in a fixed order (its spooled chunks, merged datasets and the columns
        edges name): what a receipt's fingerprint is made of."""
        for (doc,) in rows(self.db.execute("SELECT doc FROM chunk ORDER BY id")):
            yield doc
        for ds_id, doc in rows(self.db.execute("SELECT id, doc FROM dataset ORDER BY seq")):
            yield ds_id
            yield doc
        for ds, col in rows(self.db.execute("SELECT ds, col FROM edge_column ORDER BY seq")):
            yield f"{ds}\x00{col}"

    def unlisted_desired(self, *, shared: bool = True) -> list[Key]:
        """Desired entities the listing did not give (``shared``: shared ones too): to look up."""
        cond = "" if shared else " AND d.shared = 0"
        return [
            (r[0], r[1])
            for r in self.db.execute(
                "SELECT d.type, d.qn FROM desired d WHERE NOT EXISTS "
                f"(SELECT 1 FROM actual a WHERE a.type = d.type AND a.qn = d.qn){cond} ORDER BY d.type, d.qn"
            )
        ]

    def forget_actual(self, guids: Iterable[str]) -> None:
        self.db.executemany("DELETE FROM actual WHERE guid = ?", ((g,) for g in guids))

    def guids_of(self, keys: Iterable[Key]) -> dict[Key, str]:
        """The guid of each of ``keys`` listed (or written), else found outside the domain."""
        want = set(keys)
        found = self._by_key("actual", "guid", want)
        rest = [k for k in want if k not in found]
        if rest:
            found.update(self._by_key("foreign_", "guid", rest))
        # (one known from the receipt, UNREAD, is referred to by name)
        return {k: found[k] for k in want if k in found and found[k] != UNREAD}

    def _by_key(self, table: str, expr: str, keys: Iterable[Key]) -> dict[Key, Any]:
        """``expr`` of the rows of ``table`` (keyed by type and qualifiedName) among ``keys``: one
        query per type and 500 names (a query per key cost more than the lookups themselves)."""
        by_type: dict[str, list[str]] = {}
        for t, qn in keys:
            by_type.setdefault(t, []).append(qn)
        out: dict[Key, Any] = {}
        for t, qns in by_type.items():
            for lo in range(0, len(qns), 500):
                part = qns[lo : lo + 500]
                marks = ",".join("?" * len(part))
                sql = f"SELECT qn, {expr} FROM {table} WHERE type = ? AND qn IN ({marks})"
                for qn, value in self.db.execute(sql, [t, *part]):
                    out[(t, qn)] = value
        return out

    def owner_of(self, key: Key) -> str | None:
        """Who owns ``key`` as far as this sync knows (None: unknown or no owner)."""
        row = self.db.execute("SELECT owner FROM actual WHERE type = ? AND qn = ?", key).fetchone()
        return None if row is None else row[0]

    def key_of_guid(self, guid: str) -> Key | None:
        row = self.db.execute("SELECT type, qn FROM actual WHERE guid = ?", (guid,)).fetchone()
        row = row or self.db.execute("SELECT type, qn FROM foreign_ WHERE guid = ?", (guid,)).fetchone()
        return None if row is None else (row[0], row[1])

    # ------------------------------------------------------------------ native profiles
    def shared_outside(self) -> list[Key]:
        """Desired shared (dataset) entities not in the domain's listing: made by others, or missing."""
        return [
            (r[0], r[1])
            for r in self.db.execute(
                "SELECT d.type, d.qn FROM desired d WHERE d.shared = 1 AND NOT EXISTS "
                "(SELECT 1 FROM actual a WHERE a.type = d.type AND a.qn = d.qn) ORDER BY d.type, d.qn"
            )
        ]

    def add_foreign(self, found: Mapping[Key, str]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO foreign_ (type, qn, guid) VALUES (?, ?, ?)",
            [(k[0], k[1], g) for k, g in found.items()],
        )

    def foreign_guid(self, key: Key) -> str | None:
        row = self.db.execute("SELECT guid FROM foreign_ WHERE type = ? AND qn = ?", key).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------ created by this sync
    def add_created(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """Entities this sync created: (type, qualifiedName, guid)."""
        self.db.executemany("INSERT OR REPLACE INTO created (type, qn, guid) VALUES (?, ?, ?)", rows)

    def creates(self) -> bool:
        """Whether this sync created something or has something left to create."""
        if self.db.execute("SELECT 1 FROM created LIMIT 1").fetchone() is not None:
            return True
        return (
            self.db.execute(
                "SELECT 1 FROM desired d WHERE NOT EXISTS "
                "(SELECT 1 FROM actual a WHERE a.type = d.type AND a.qn = d.qn) LIMIT 1"
            ).fetchone()
            is not None
        )

    def owned_except(self, owner: str, types: Iterable[str]) -> Iterator[list[tuple[str, str, str]]]:
        """(type, qualifiedName, guid) of what ``owner`` holds (what this sync created included), but
        of ``types``, in chunks of ``READ_CHUNK``."""
        cond, names = _not_of("type", types)
        cur = self.db.execute(
            f"SELECT type, qn, guid FROM actual WHERE owner = ? AND guid != ''{cond} ORDER BY type, qn",
            [owner, *names],
        )
        while True:
            part = cur.fetchmany(READ_CHUNK)
            if not part:
                return
            yield [(r[0], r[1], r[2]) for r in part]

    def names_of(self, keys: Iterable[Key]) -> list[object]:
        """The ``name`` attribute the desired entities among ``keys`` are rendered with (None where
        one has none); keys this sync does not want are left out."""
        want = set(keys)
        names = self._by_key("desired", "COALESCE(name, json_extract(body, '$.attributes.name'))", want)
        return [names[k] for k in want if k in names]

    def referred_not_owned(self, owner: str, types: Iterable[str]) -> dict[Key, str]:
        """Key -> guid of what this sync wants and ``owner`` does not hold (another job's, or
        nobody's), but of ``types``."""
        cond, names = _not_of("a.type", types)
        rows = self.db.execute(
            "SELECT a.type, a.qn, a.guid FROM actual a JOIN desired d ON d.type = a.type AND d.qn = a.qn "
            f"WHERE (a.owner IS NULL OR a.owner != ?){cond}",
            [owner, *names],
        )
        return {(r[0], r[1]): r[2] for r in rows}

    def created_except(self, owner: str, types: Iterable[str]) -> Iterator[list[tuple[str, str, str]]]:
        """(type, qualifiedName, guid) of what this sync created and ``owner`` still holds, but of
        ``types``, in chunks of ``READ_CHUNK``."""
        cond, names = _not_of("c.type", types)
        cur = self.db.execute(
            "SELECT c.type, c.qn, c.guid FROM created c JOIN actual a ON a.type = c.type AND a.qn = c.qn "
            f"AND a.guid = c.guid WHERE a.owner = ?{cond} ORDER BY c.type, c.qn",
            [owner, *names],
        )
        while True:
            part = cur.fetchmany(READ_CHUNK)
            if not part:
                return
            yield [(r[0], r[1], r[2]) for r in part]

    def referring(self, keys: Iterable[Key]) -> list[tuple[DesiredEntity, str]]:
        """Desired entities (with their guid in Atlas) that refer to any of ``keys``."""
        out: dict[Key, tuple[DesiredEntity, str]] = {}
        for k in keys:
            for body, tier, guid in self.db.execute(
                "SELECT d.body, d.tier, a.guid FROM desired_ref r JOIN desired d ON d.type = r.type AND "
                "d.qn = r.qn JOIN actual a ON a.type = d.type AND a.qn = d.qn WHERE r.rtype = ? AND r.rqn = ?",
                k,
            ):
                e = _desired_from_json(fastjson.loads(body))
                e.tier = tier
                out[e.key] = (e, guid)
        return list(out.values())

    def repoint(self, key: Key, guid: str, owner: str | None) -> None:
        """``key`` is held by another entity than the one this sync wrote (a duplicate that lost)."""
        self.db.execute(
            "UPDATE actual SET guid = ?, owner = ? WHERE type = ? AND qn = ?", (guid, owner, *key)
        )

    def desired_outputs(self) -> dict[Key, list[Key]]:
        """Each desired entity's ``outputs`` references (what --missing-datasets skip follows)."""
        out: dict[Key, list[Key]] = {}
        for t, qn, body in self.db.execute("SELECT type, qn, body FROM desired"):
            v = json.loads(body).get("refs", {}).get("outputs")
            if isinstance(v, list) and v:
                out[(t, qn)] = [(x[0], x[1]) for x in v]
        return out

    def foreign_processes(self, process_types: set[str], job: str) -> tuple[str, str, str] | None:
        """A desired process that Atlas holds under another job's ownership."""
        if not process_types:
            return None
        marks = ",".join("?" * len(process_types))
        row = self.db.execute(
            f"SELECT d.type, d.qn, a.owner FROM desired d JOIN actual a ON a.type = d.type AND a.qn = d.qn "
            f"WHERE d.type IN ({marks}) AND a.owner IS NOT NULL AND a.owner != ? LIMIT 1",
            (*sorted(process_types), job),
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def stale(self, job: str) -> list[tuple[str, str, str]]:
        """(type, qualifiedName, guid) of this job's entities that the input no longer produces."""
        return [
            (r[0], r[1], r[2])
            for r in self.db.execute(
                "SELECT a.type, a.qn, a.guid FROM actual a WHERE a.owner = ? AND NOT EXISTS "
                "(SELECT 1 FROM desired d WHERE d.type = a.type AND d.qn = a.qn) ORDER BY a.type, a.qn",
                (job,),
            )
        ]


class GuidKeys(Mapping[str, Key]):
    """guid -> key over the spool's listing, for normalising references read back from Atlas."""

    def __init__(self, spool: Spool) -> None:
        self.spool = spool
        self.cache: dict[str, Key | None] = {}

    def _get(self, guid: str) -> Key | None:
        if guid not in self.cache:
            if len(self.cache) > 50_000:
                self.cache.clear()
            self.cache[guid] = self.spool.key_of_guid(guid)
        return self.cache[guid]

    def __getitem__(self, guid: str) -> Key:
        k = self._get(guid)
        if k is None:
            raise KeyError(guid)
        return k

    def __contains__(self, guid: object) -> bool:
        return isinstance(guid, str) and self._get(guid) is not None

    def __iter__(self) -> Iterator[str]:
        raise TypeError("not iterable")

    def __len__(self) -> int:
        return self.spool.actual_count()


def rows(cur: sqlite3.Cursor) -> Iterator[Any]:
    while True:
        rows = cur.fetchmany(64)
        if not rows:
            return
        yield from rows


def _not_of(column: str, types: Iterable[str]) -> tuple[str, list[str]]:
    """The SQL condition (and its parameters) leaving out rows whose ``column`` is one of ``types``."""
    names = sorted(types)
    return (f" AND {column} NOT IN ({','.join('?' * len(names))})" if names else "", names)
