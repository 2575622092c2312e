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
The caller then forgets it (the endpoint deletes it from its journal; a consumer may commit its
offset). Entries not settled when ``process`` returns False (stopping during retries) are still
owed: the caller keeps them for the next start.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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


class JobSyncer:
    """Syncs batches of events per job through ``sync(graph, job)`` (e.g. ``Publisher.sync``).

    ``watermark(job)`` gives the newest run synced for ``job`` (e.g. :meth:`Journal.watermark`);
    ``stop`` ends retries early. One thread calls :meth:`process` at a time.
    """

    def __init__(
        self,
        sync: SyncFn,
        *,
        dead_letter_path: Path,
        counters: Counters | None = None,
        stop: threading.Event | None = None,
        watermark: Callable[[str], Watermark | None] | None = None,
        event_types: Sequence[str] = ("COMPLETE",),
        namespace_map: NamespaceMap | None = None,
        retry_base: float = 0.5,
        retry_max: float = 30.0,
        max_attempts: int = 8,
    ) -> None:
        self.sync = sync
        self.dead_letter_path = Path(dead_letter_path)
        self.counters = counters or Counters()
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
        for job, group in groups.items():
            try:
                if not self._process_job(job, group, settle):
                    return False
            except Exception as exc:  # noqa: BLE001 - the worker must outlive a bug; keep the events
                log.exception("unexpected error in the sync worker")
                self._dead_letter(job, group, f"{type(exc).__name__}: {exc}")
                settle(group, {})
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
        latest = latest_run([e.event for e in fresh])
        latest_ids = {id(ev) for ev in latest}
        superseded += len(fresh) - len(latest)
        if duplicates or superseded:
            self.counters.add(duplicates=duplicates, superseded=superseded)
        if not latest:
            settle(group, {})
            return True
        done = self._sync_job(job, latest)
        if done is None:
            return False  # stopping: the job's events stay owed
        marks: dict[str, Watermark] = {}
        if done:
            new = _watermark_of([e.event for e in fresh if id(e.event) in latest_ids])
            if new is not None and (mark is None or new.time >= mark.time):
                marks[job] = new
        settle(group, marks)
        return True

    def _sync_job(self, job: str, events: list[dict[str, Any]]) -> bool | None:
        """True: synced; False: dead-lettered; None: stopping during retries."""
        attempt = 0
        while True:
            try:
                graph = events_to_graph(events, namespace_map=self.namespace_map, validate=False)
                self.sync(graph, job)
            except InputError as exc:
                # retrying cannot fix the input: keep it aside for a human
                self._dead_letter(job, events, f"input error: {exc}")
                return False
            except Exception as exc:  # noqa: BLE001 - Atlas down, timeouts, 5xx...: retried
                if isinstance(exc, AtlasSyncError) and not isinstance(exc, AtlasError):
                    # a refusal of the sync core (e.g. the delete fail-safe) gives the same answer
                    # every time: no retry; the events wait in the dead-letter file for a human
                    self.counters.add(failed=1)
                    self._dead_letter(job, events, f"refused: {exc}")
                    return False
                attempt = self._failed(job, exc, attempt)
                if attempt < 0:
                    self._dead_letter(job, events, str(exc))
                    return False
                if attempt == 0:
                    return None
                continue
            self.counters.add(synced=len(events), batches=1)
            return True

    def _failed(self, job: str, exc: Exception, attempt: int) -> int:
        """Count a failed attempt and back off. Returns the next attempt number, -1 when attempts
        are used up, 0 when stopping."""
        attempt += 1
        msg = str(exc) if isinstance(exc, AtlasSyncError) else f"{type(exc).__name__}: {exc}"
        self.counters.error(f"{job}: {msg}", failed=1)
        log.warning("sync of job %s failed (attempt %d): %s", job, attempt, msg)
        if attempt >= self.max_attempts:
            return -1
        delay = min(self.retry_max, self.retry_base * 2 ** (attempt - 1))
        delay *= 0.5 + random.random() / 2  # jitter: many endpoints must not retry in step
        if self.stop.wait(delay):
            return 0
        return attempt

    def _dead_letter(self, job: str, events: Sequence[Entry | dict[str, Any]], reason: str) -> None:
        evs = [e.event if isinstance(e, Entry) else e for e in events]
        write_spool(self.dead_letter_path, evs)
        self.counters.error(f"{job}: {reason}", dead_lettered=len(evs))
        log.error(
            "gave up on %d events of job %s (%s); they are in %s",
            len(evs),
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
