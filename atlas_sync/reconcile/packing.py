"""Write batches packed when they can start, so batches in flight at once touch disjoint entities.

Cutting the handed-over items into fixed runs of ``batch_size`` makes neighbouring batches share what
they refer to wherever the input is connected: column lineages of many processes read the same source
columns, so each run touches an entity of the run before it, and the scheduler (which never lets two
writes touching one entity run at once: a real Atlas times out on the locks) runs them one at a time.

:class:`BatchPacker` keeps the items handed over (in dependency order) until a batch may start, then
takes, in order, those that touch nothing a batch in flight touches, passing over the others and
whatever refers to an entity one of those writes (it must wait for that write), up to ``batch_size``.
Batches stay full: a smaller one is sent only when nothing else is in flight or the items end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from atlas_sync.reconcile.actual import Key
from atlas_sync.reconcile.apply import WriteBatch, WriteScheduler, _touched
from atlas_sync.reconcile.plan import PlanItem
from atlas_sync.render.renderer import DesiredEntity


@dataclass
class _Pending:
    item: PlanItem
    entity: DesiredEntity
    touched: set[Key]


@dataclass
class _Scan:
    """How far :meth:`BatchPacker._take` got while the scheduler's ``generation`` stayed the same."""

    generation: int
    next: int = 0
    taken: list[int] = field(default_factory=list)
    held: set[Key] = field(default_factory=set)


class BatchPacker:
    """Hands ``scheduler`` batches of ``batch_size`` items formed from the items given to :meth:`add`.

    At most ``hold`` items wait here (``batch_size`` x 2 by default); past that, :meth:`add` waits for a
    batch in flight to end. :meth:`flush` sends everything held (the scheduler's ``wait`` then ends it).
    """

    def __init__(self, scheduler: WriteScheduler, batch_size: int, hold: int | None = None) -> None:
        self.scheduler = scheduler
        self.batch_size = max(1, batch_size)
        self.hold = max(self.batch_size, hold or 2 * self.batch_size)
        self._pool: list[_Pending] = []
        self._scan: _Scan | None = None

    def __len__(self) -> int:
        return len(self._pool)

    def add(self, item: PlanItem, entity: DesiredEntity) -> None:
        """Keep ``item`` (``entity`` its desired entity) for a batch; start the batches that may start."""
        self._pool.append(_Pending(item, entity, _touched([item], {item.key: entity})))
        if len(self._pool) >= self.batch_size:
            self._pack(final=False)

    def flush(self) -> None:
        """Start batches until every item held has been handed to the scheduler."""
        self._pack(final=True)

    def _pack(self, *, final: bool) -> None:
        s = self.scheduler
        while self._pool:
            if s.room():
                idle = not s.running_count()
                taken = self._take(s.busy())  # (idle: the first batch_size items)
                n = len(taken)
                if n >= self.batch_size or (final and n and (idle or n == len(self._pool))):
                    self._start(taken)
                    continue
                if idle:
                    return  # fewer than batch_size items: more to come
            if not final and len(self._pool) < self.hold:
                return  # more items may fill a batch that fits beside those in flight
            s.wait_any()

    def _take(self, busy: set[Key]) -> list[int]:
        """Indexes of the items, in order, that may go in a batch started now. A scan that fell short
        goes on from where it stopped while nothing started or ended (only items were added)."""
        gen = self.scheduler.generation
        scan = self._scan if self._scan is not None and self._scan.generation == gen else _Scan(gen)
        self._scan = scan
        pool, out, held = self._pool, scan.taken, scan.held
        for i in range(scan.next, len(pool)):
            if len(out) >= self.batch_size:
                break
            scan.next = i + 1
            p = pool[i]
            if (busy and not p.touched.isdisjoint(busy)) or (held and not p.touched.isdisjoint(held)):
                held.add(p.item.key)  # written by an item passed over: what refers to it waits too
                continue
            out.append(i)
        return list(out)

    def _start(self, taken: list[int]) -> None:
        self._scan = None
        chosen = set(taken)
        picked = [self._pool[i] for i in taken]
        self._pool = [p for i, p in enumerate(self._pool) if i not in chosen]
        touched: set[Key] = set().union(*(p.touched for p in picked))
        batch = WriteBatch([p.item for p in picked], {p.item.key: p.entity for p in picked}, touched)
        self.scheduler.submit(batch)
