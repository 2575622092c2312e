"""The emulator's shared state: what every route module works on (store, type registry, user, clock).

Its own module so that the route modules (entities, typedefs, search, lineage, repo) and the
request dispatcher in ``app`` all import it, and none of them imports ``app``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from atlas_sync.emulator.store import Store
from atlas_sync.emulator.types import Registry


class State:
    """What request handlers see: the store, the registry, the calling user and the clock."""

    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self.registry = registry
        self.user = "admin"
        self.staged: Registry | None = None
        # basic search paging per query until the next write (see search._paging)
        self.search_pages: dict[tuple[str, tuple[Any, ...]], Any] = {}
        # attributes whose expression index exists (search._index_attributes)
        self.indexed_attributes: set[str] = set()
        # racing creates (Emulator.set_racing_creates): a create this soon after another request's
        # create of the same name does not see it, as two concurrent transactions on a real Atlas do
        self.racing_creates_ms: float = 0.0
        # names whose unique index entry a delete took while another ACTIVE copy held the name (racing
        # creates): a lookup or create by that name no longer finds the copy, until a write sets it
        self.unindexed: set[tuple[str, str]] = set()
        self.racing_index_loss = False
        # Emulator.set_propagation_delay: propagate this long after a write (0: in the write itself)
        self.propagation_delay_ms: float = 0.0
        self.propagation_due: float | None = None  # time.monotonic() when a delayed propagation runs

    def now(self) -> int:
        return int(time.time() * 1000)

    # typedef persistence
    def save_defs(self, defs: list[dict[str, Any]]) -> None:
        self.store.conn.executemany(
            "INSERT OR REPLACE INTO typedefs (name, guid, category, body) VALUES (?,?,?,?)",
            [(d["name"], d["guid"], d["category"], json.dumps(d)) for d in defs],
        )

    def delete_defs(self, names: list[str]) -> None:
        self.store.conn.executemany("DELETE FROM typedefs WHERE name=?", [(n,) for n in names])

    def stage_registry(self, reg: Registry) -> None:
        """The registry to use once the current transaction commits."""
        self.staged = reg
        self.registry = reg

    def entity_type_in_use(self, name: str) -> bool:
        row = self.store.conn.execute("SELECT 1 FROM entities WHERE type_name=? LIMIT 1", (name,)).fetchone()
        return row is not None

    def relationship_type_in_use(self, name: str) -> bool:
        row = self.store.conn.execute(
            "SELECT 1 FROM relationships WHERE type_name=? LIMIT 1", (name,)
        ).fetchone()
        return row is not None
