"""Embedded Apache Atlas 2.4 emulator: one core (:class:`Emulator`), three faces (a requests transport
adapter, pytest fixtures in :mod:`atlas_sync.emulator.testing`, and an HTTP server via :func:`serve`)."""

from atlas_sync.emulator.app import Emulator, EmulatorResponse, RequestRecord
from atlas_sync.emulator.faults import (
    ConnectionResetFault,
    InjectedFault,
    LostResponseFault,
    TimeoutFault,
    parse_fault_spec,
)

__all__ = [
    "ConnectionResetFault",
    "Emulator",
    "EmulatorAdapter",
    "EmulatorResponse",
    "EmulatorServer",
    "InjectedFault",
    "LostResponseFault",
    "RequestRecord",
    "TimeoutFault",
    "parse_fault_spec",
    "serve",
]


def __getattr__(name: str) -> object:
    # the faces import requests / http.server; load them only when asked for
    if name == "EmulatorAdapter":
        from atlas_sync.emulator.adapter import EmulatorAdapter

        return EmulatorAdapter
    if name in ("serve", "EmulatorServer"):
        from atlas_sync.emulator import http

        return getattr(http, name)
    raise AttributeError(name)
