"""An OpenLineage HTTP endpoint that publishes lineage to Atlas (``atlas-sync openlineage serve``).

``POST /api/v1/lineage`` (what the openlineage-python HTTP transport and Marquez clients send)
answers once the events are in a crash-safe journal; a worker batches them per job and syncs each
job through the sync core. See :class:`LineageEndpoint` (the core) and :func:`serve` (over HTTP:
an ASGI app on uvicorn); :class:`JobSyncer` (per-job syncing) and :class:`SqliteJournal` are
usable on their own.
"""

from atlas_sync.openlineage_server.counters import Counters
from atlas_sync.openlineage_server.endpoint import EndpointConfig, LineageEndpoint
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
from atlas_sync.openlineage_server.server import EndpointServer, ServerLimits, create_app, serve

__all__ = [
    "Counters",
    "EndpointConfig",
    "EndpointServer",
    "Entry",
    "JobSyncer",
    "Journal",
    "JournalError",
    "JournalFull",
    "LineageEndpoint",
    "MemoryJournal",
    "ServerLimits",
    "SqliteJournal",
    "Watermark",
    "create_app",
    "open_journal",
    "serve",
]
