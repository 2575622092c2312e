"""Per-job syncing of OpenLineage events, shared by the HTTP endpoint and other event sources.

:meth:`JobSyncer.process` takes a batch of :class:`~.journal.Entry` (events with an id that orders
them), keeps the selected event types, groups the events per job and syncs each job once with the
lineage of its latest run in the batch. Events the job already synced - a re-delivery of the synced
run, or an older run arriving late (see :class:`~.journal.Watermark`) - are not synced again. A
failed sync is retried with exponential backoff and jitter; after ``max_attempts``, or at once when
the sync core refuses (e.g. the delete fail-safe) or the input cannot be converted, the events go
to the dead-letter file (JSON lines, fsync'd).

Every entry is handed to ``settle(entries, watermarks)`` exactly when it is done with: its job's
sync committed (with the job's new watermark), or it was skipped, found stale or dead-lettered.
The caller then forgets it (the endpoint deletes it from its journal; the Kafka consumer commits the
batch's offsets once the whole batch is settled). Entries not settled when ``process`` returns False
(stopping during retries, or a failure given back to the caller) are still owed: the caller keeps
them for the next start, or reads them again.

Two retry policies: back off and retry in place, up to ``max_attempts``, then dead-letter (the
endpoint: its journal holds the events meanwhile); or ``give_back=True``: a failed attempt ends
``process`` at once (False) and the caller retries the batch later (the Kafka consumer, which must
keep polling, rewinds its partitions). A refusal of the sync core or bad input is dead-lettered in
both.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from atlas_sync.atlas import AtlasError
from atlas_sync.errors import AtlasSyncError, InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage import NamespaceMap, events_to_graph, job_key
from atlas_sync.openlineage_server.counters import Counters
from atlas_sync.openlineage_server.journal import Entry, Watermark, event_time
from atlas_sync.openlineage_server.queue import write_spool

log = logging.getLogger("atlas_sync.openlineage_server")

SyncFn = Callable[[LineageGraph, str], Any]
SettleFn = Callable[[list[Entry], dict[str, Watermark]], None]
DeadLetterFn = Callable[[str, list[Entry], str], None]  # (job, entries, reason): keep them aside durably


class CountSink(Protocol):
    """Where the syncer counts (``Counters``, or an adapter onto another source's counters)."""

    def add(self, **deltas: int) -> None: ...

    def error(self, message: str, **deltas: int) -> None: ...


class SyncObserver(Protocol):
    """Timings of the syncs (e.g. Prometheus histograms); ``outcome`` is ``ok``, ``atlas_error``,
    ``refused``, ``input_error`` or ``error``."""

    def sync_attempt(self, seconds: float, outcome: str) -> None: ...

    def visible(self, entries: Sequence[Entry]) -> None: ...


class GiveBack(Exception):
    """Raised by a dead-letter or settle callback that could not do its part (e.g. a dead-letter
    topic that did not acknowledge): ``process`` stops and returns False, the rest stays owed."""


class JobSyncer:
    """Syncs batches of events per job through ``sync(graph, job)`` (e.g. ``Publisher.sync``).

    ``watermark(job)`` gives the newest run synced for ``job`` (e.g. :meth:`Journal.watermark`);
    ``stop`` ends retries early. ``dead_letter(job, entries, reason)`` replaces the default
    dead-letter file writer (the events as JSON lines in ``dead_letter_path``). One thread calls
    :meth:`process` at a time.
    """

    def __init__(
        self,
        sync: SyncFn,
        *,
        dead_letter_path: Path | None = None,
        counters: CountSink | None = None,
        stop: threading.Event | None = None,
        watermark: Callable[[str], Watermark | None] | None = None,
        event_types: Sequence[str] = ("COMPLETE",),
        namespace_map: NamespaceMap | None = None,
        retry_base: float = 0.5,
        retry_max: float = 30.0,
        max_attempts: int = 8,
        give_back: bool = False,
        dead_letter: DeadLetterFn | None = None,
        observer: SyncObserver | None = None,
    ) -> None:
        if dead_letter_path is None and dead_letter is None:
            raise ValueError("JobSyncer needs a dead_letter_path or a dead_letter function")
        self.sync = sync
        self.dead_letter_path = Path(dead_letter_path) if dead_letter_path is not None else None
        self.counters: CountSink = counters if counters is not None else Counters()
        self.give_back = give_back
        self.write_dead_letter = dead_letter or self._write_spool
        self.observer = observer
        self.stop = stop or threading.Event()
        self.watermark = watermark or (lambda job: None)
        self.wanted = {t.upper() for t in event_types}
        self.namespace_map = namespace_map
        self.retry_base = retry_base
        self.retry_max = retry_max
        self.max_attempts = max_attempts

    def process(self, entries: Sequence[Entry], settle: SettleFn) -> bool:
        """Sync ``entries`` job by job, settling each as it is done. False when stopping with
        entries left unsettled."""
        groups: dict[str, list[Entry]] = {}
        skipped: list[Entry] = []
        for entry in entries:
            ev = entry.event
            job = ev.get("job")
            if not isinstance(job, dict):
                skipped.append(entry)  # DatasetEvent: no job to sync it under
            elif "run" in ev and str(ev.get("eventType") or "").upper() not in self.wanted:
                skipped.append(entry)
            else:
                groups.setdefault(job_key(job["namespace"], job["name"]), []).append(entry)
        if skipped:
            self.counters.add(skipped=len(skipped))
            settle(skipped, {})
        try:
            for job, group in groups.items():
                try:
                    if not self._process_job(job, group, settle):
                        return False
                except GiveBack:
                    raise
                except Exception as exc:  # noqa: BLE001 - the worker must outlive a bug; keep the events
                    log.exception("unexpected error in the sync worker")
                    self._dead_letter(job, group, f"{type(exc).__name__}: {exc}")
                    settle(group, {})
        except GiveBack as exc:
            log.warning("giving the batch back: %s", exc)
            return False
        return True

    def _process_job(self, job: str, group: list[Entry], settle: SettleFn) -> bool:
        mark = self.watermark(job)
        fresh: list[Entry] = []
        duplicates = superseded = 0
        for entry in group:
            state = _staleness(entry.event, mark)
            if state == "duplicate":
                duplicates += 1
            elif state == "older":
                superseded += 1
            else:
                fresh.append(entry)
        latest_ids = {id(ev) for ev in latest_run([e.event for e in fresh])}
        latest = [e for e in fresh if id(e.event) in latest_ids]
        superseded += len(fresh) - len(latest)
        if duplicates or superseded:
            self.counters.add(duplicates=duplicates, superseded=superseded)
        if not latest:
            settle(group, {})
            return True
        done = self._sync_job(job, latest)
        if done is None:
            return False  # stopping, or given back: the job's events stay owed
        marks: dict[str, Watermark] = {}
        if done:
            new = _watermark_of([e.event for e in latest])
            if new is not None and (mark is None or new.time >= mark.time):
                marks[job] = new
        settle(group, marks)
        if done and self.observer is not None:
            self.observer.visible(group)  # the job's lineage in Atlas now covers them all
        return True

    def _sync_job(self, job: str, entries: list[Entry]) -> bool | None:
        """True: synced; False: dead-lettered; None: stopping during retries, or given back."""
        events = [e.event for e in entries]
        attempt = 0
        while True:
            t0 = time.perf_counter()
            try:
                graph = events_to_graph(events, namespace_map=self.namespace_map, validate=False)
                self.sync(graph, job)
            except InputError as exc:
                # retrying cannot fix the input: keep it aside for a human
                self._observe(t0, "input_error")
                self._dead_letter(job, entries, f"input error: {exc}")
                return False
            except Exception as exc:  # noqa: BLE001 - Atlas down, timeouts, 5xx...: retried
                if isinstance(exc, AtlasSyncError) and not isinstance(exc, AtlasError):
                    # a refusal of the sync core (e.g. the delete fail-safe) gives the same answer
                    # every time: no retry; the events wait in the dead-letter file for a human
                    self._observe(t0, "refused")
                    self.counters.add(failed=1)
                    self._dead_letter(job, entries, f"refused: {exc}")
                    return False
                self._observe(t0, "atlas_error" if isinstance(exc, AtlasSyncError) else "error")
                attempt = self._failed(job, exc, attempt)
                if attempt < 0:
                    self._dead_letter(job, entries, str(exc))
                    return False
                if attempt == 0:
                    return None
                continue
            self._observe(t0, "ok")
            self.counters.add(synced=len(events), batches=1)
            return True

    def _observe(self, t0: float, outcome: str) -> None:
        if self.observer is not None:
            self.observer.sync_attempt(time.perf_counter() - t0, outcome)

    def _failed(self, job: str, exc: Exception, attempt: int) -> int:
        """Count a failed attempt and back off. Returns the next attempt number, -1 when attempts
        are used up, 0 when stopping."""
        attempt += 1
        msg = str(exc) if isinstance(exc, AtlasSyncError) else f"{type(exc).__name__}: {exc}"
        self.counters.error(f"{job}: {msg}", failed=1)
        log.warning("sync of job %s failed (attempt %d): %s", job, attempt, msg)
        if self.give_back:
            return 0  # the caller retries the batch later
        if attempt >= self.max_attempts:
            return -1
        delay = min(self.retry_max, self.retry_base * 2 ** (attempt - 1))
        delay *= 0.5 + random.random() / 2  # jitter: many endpoints must not retry in step
        if self.stop.wait(delay):
            return 0
        return attempt

    def _dead_letter(self, job: str, entries: list[Entry], reason: str) -> None:
        self.write_dead_letter(job, entries, reason)  # GiveBack when it could not keep them
        self.counters.error(f"{job}: {reason}", dead_lettered=len(entries))

    def _write_spool(self, job: str, entries: list[Entry], reason: str) -> None:
        assert self.dead_letter_path is not None
        write_spool(self.dead_letter_path, [e.event for e in entries])
        log.error(
            "gave up on %d events of job %s (%s); they are in %s",
            len(entries),
            job,
            reason,
            self.dead_letter_path,
        )


def _staleness(event: dict[str, Any], mark: Watermark | None) -> str | None:
    """ "duplicate" (the synced run again), "older" (an older run) or None (sync it)."""
    run = event.get("run")
    if mark is None or not isinstance(run, dict):
        return None  # JobEvents carry no run: always current
    t = event_time(event.get("eventTime"))
    if run.get("runId") == mark.run_id and t <= mark.time:
        return "duplicate"
    if t < mark.time:
        return "older"
    return None


def _watermark_of(events: list[dict[str, Any]]) -> Watermark | None:
    best: Watermark | None = None
    for ev in events:
        run = ev.get("run")
        if isinstance(run, dict):
            t = event_time(ev.get("eventTime"))
            if best is None or t >= best.time:
                best = Watermark(t, run.get("runId"))
    return best


def latest_run(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of the job's latest run (by ``eventTime``, then arrival); JobEvents always stay."""
    best: tuple[float, int] | None = None
    run_id: str | None = None
    for i, ev in enumerate(events):
        run = ev.get("run")
        if not isinstance(run, dict):
            continue
        key = (event_time(ev.get("eventTime")), i)
        if best is None or key >= best:
            best, run_id = key, run.get("runId")
    if run_id is None:
        return events
    return [e for e in events if not isinstance(e.get("run"), dict) or e["run"].get("runId") == run_id]
