"""An OpenLineage HTTP endpoint that publishes lineage to Atlas (``atlas-sync openlineage serve``).

``POST /api/v1/lineage`` (what the openlineage-python HTTP transport and Marquez clients send)
answers once the events are in a crash-safe journal; a worker batches them per job and syncs each
job through the sync core. See :class:`LineageEndpoint` (the core) and :func:`serve` (over HTTP:
an ASGI app on uvicorn); :class:`JobSyncer` (per-job syncing) and :class:`SqliteJournal` are
usable on their own.

Needs the ``[server]`` extra (``pip install 'atlas-sync[server]'``): sync and the emulator do not.
"""

from atlas_sync.errors import ConfigError

try:  # the [server] extra: the ASGI app, its production server, /metrics for Prometheus
    import anyio  # noqa: F401
    import prometheus_client  # noqa: F401
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:
    raise ConfigError(
        f"`openlineage serve` and `openlineage consume` need atlas-sync's [server] extra "
        f"({exc.name} is not installed)",
        hint="pip install 'atlas-sync[server]' (consume: 'atlas-sync[server,kafka]')",
    ) from None

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
