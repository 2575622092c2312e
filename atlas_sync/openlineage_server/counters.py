"""What an endpoint or consumer did since it started (``GET /metrics``, ``GET /health``)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Counters:
    """Event counts; thread-safe through :meth:`add` and :meth:`error`."""

    accepted: int = 0  # events newly kept (journal) for syncing
    duplicates: int = 0  # re-delivered events recognised (already held, or their run already synced)
    rejected: int = 0  # events (or requests, when unparsable) refused: auth, invalid, full, journal error
    rejected_full: int = 0  # of those, refused because the queue / journal was full
    journal_errors: int = 0  # requests refused because the journal could not be written (disk full, I/O)
    replayed: int = 0  # events found in the journal at start and queued again
    synced: int = 0  # events whose job was synced
    skipped: int = 0  # accepted events not synced by design (event type not selected, DatasetEvents)
    superseded: int = 0  # events of an older run of a job than one synced with or before them
    failed: int = 0  # failed sync attempts (each retry counts)
    dead_lettered: int = 0  # events given up on (in the dead-letter file)
    batches: int = 0  # job syncs that succeeded
    rejected_by: dict[str, int] = field(default_factory=dict)  # ``rejected`` by reason
    last_error: str | None = None
    started_at: float = field(default_factory=time.time)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **deltas: int) -> None:
        with self._lock:
            for k, v in deltas.items():
                setattr(self, k, getattr(self, k) + v)

    def refuse(self, reason: str, n: int = 1, **deltas: int) -> None:
        """Count ``n`` refused events (or requests) under ``reason`` (and add ``deltas``)."""
        with self._lock:
            self.rejected += n
            self.rejected_by[reason] = self.rejected_by.get(reason, 0) + n
            for k, v in deltas.items():
                setattr(self, k, getattr(self, k) + v)

    def error(self, message: str, **deltas: int) -> None:
        """Record ``message`` as the last error (and add ``deltas``)."""
        with self._lock:
            self.last_error = message
            for k, v in deltas.items():
                setattr(self, k, getattr(self, k) + v)

    def to_json(self) -> dict[str, Any]:
        with self._lock:
            d = {k: v for k, v in self.__dict__.items() if not k.startswith("_") and k != "started_at"}
            d["rejected_by"] = dict(self.rejected_by)
        d["uptime_seconds"] = round(time.time() - self.started_at, 3)
        return d
