"""atlas-sync: publish lineage to Apache Atlas, idempotently and with the fewest requests.

The Python API does what the CLI does (see docs/python-api.md)::

    from atlas_sync import Publisher, embedded_client

    client = embedded_client(None)                      # in-memory emulator; or AtlasClient(url, auth=...)
    pub = Publisher(client, profile="lineage", domain="demo")
    graph = pub.read("sql", ["etl.sql"], dialect="spark")
    print(pub.plan(graph).summary())                    # what would change
    pub.sync(graph)                                     # make Atlas match the input
    pub.teardown(purge=True)                            # remove the whole domain

Names are loaded on first use, so ``import atlas_sync`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from atlas_sync.errors import AtlasSyncError, ConfigError, InputError

__version__ = "0.1.0"

# public name -> (module, attribute)
_LAZY: dict[str, tuple[str, str]] = {
    "Publisher": ("atlas_sync.api", "Publisher"),
    "SyncResult": ("atlas_sync.api", "SyncResult"),
    "TeardownResult": ("atlas_sync.api", "TeardownResult"),
    "AtlasClient": ("atlas_sync.atlas", "AtlasClient"),
    "AtlasError": ("atlas_sync.atlas", "AtlasError"),
    "embedded_client": ("atlas_sync.factory", "embedded_client"),
    "client_from_settings": ("atlas_sync.factory", "client_from_settings"),
    "Settings": ("atlas_sync.config", "Settings"),
    "load_settings": ("atlas_sync.config", "load_settings"),
    "Profile": ("atlas_sync.render.profile", "Profile"),
    "load_profile": ("atlas_sync.render.profile", "load_profile"),
    "LineageGraph": ("atlas_sync.lineage.model", "LineageGraph"),
    "Dataset": ("atlas_sync.lineage.model", "Dataset"),
    "Column": ("atlas_sync.lineage.model", "Column"),
    "Process": ("atlas_sync.lineage.model", "Process"),
    "ColumnEdge": ("atlas_sync.lineage.model", "ColumnEdge"),
    "ColumnRef": ("atlas_sync.lineage.model", "ColumnRef"),
    "read": ("atlas_sync.lineage.registry", "read"),
    "readers": ("atlas_sync.lineage.registry", "available"),
    "detect_reader": ("atlas_sync.lineage.registry", "detect"),
    "Plan": ("atlas_sync.reconcile", "Plan"),
    "plan_text": ("atlas_sync.reconcile", "plan_text"),
    "picture": ("atlas_sync.view.pictures", "render"),
}

__all__ = [
    "AtlasSyncError",
    "ConfigError",
    "InputError",
    "__version__",
    "Publisher",
    "SyncResult",
    "TeardownResult",
    "AtlasClient",
    "AtlasError",
    "embedded_client",
    "client_from_settings",
    "Settings",
    "load_settings",
    "Profile",
    "load_profile",
    "LineageGraph",
    "Dataset",
    "Column",
    "Process",
    "ColumnEdge",
    "ColumnRef",
    "read",
    "readers",
    "detect_reader",
    "Plan",
    "plan_text",
    "picture",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from atlas_sync.api import Publisher, SyncResult, TeardownResult
    from atlas_sync.atlas import AtlasClient, AtlasError
    from atlas_sync.config import Settings, load_settings
    from atlas_sync.factory import client_from_settings, embedded_client
    from atlas_sync.lineage.model import Column, ColumnEdge, ColumnRef, Dataset, LineageGraph, Process
    from atlas_sync.lineage.registry import available as readers
    from atlas_sync.lineage.registry import detect as detect_reader
    from atlas_sync.lineage.registry import read
    from atlas_sync.reconcile import Plan, plan_text
    from atlas_sync.render.profile import Profile, load_profile
    from atlas_sync.view.pictures import render as picture


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'atlas_sync' has no attribute {name!r}") from None
    value = getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
