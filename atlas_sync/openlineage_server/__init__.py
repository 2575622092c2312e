"""An OpenLineage HTTP endpoint that publishes lineage to Atlas (``atlas-sync openlineage serve``).

``POST /api/v1/lineage`` (what the openlineage-python HTTP transport and Marquez clients send)
answers once the events are in a crash-safe journal; a worker batches them per job and syncs each
job through the sync core. See :class:`LineageEndpoint`; :class:`JobSyncer` (per-job syncing) and
:class:`SqliteJournal` are usable on their own.
"""

from atlas_sync.openlineage_server.counters import Counters
from atlas_sync.openlineage_server.endpoint import EndpointConfig, LineageEndpoint, serve
from atlas_sync.openlineage_server.jobsync import JobSyncer
from atlas_sync.openlineage_server.journal import (
    Entry,
    Journal,
    JournalError,
    JournalFull,
    MemoryJournal,
    SqliteJournal,
    Watermark,
    open_journal,
)

__all__ = [
    "Counters",
    "EndpointConfig",
    "Entry",
    "JobSyncer",
    "Journal",
    "JournalError",
    "JournalFull",
    "LineageEndpoint",
    "MemoryJournal",
    "SqliteJournal",
    "Watermark",
    "open_journal",
    "serve",
]
