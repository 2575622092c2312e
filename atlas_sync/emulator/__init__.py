"""Embedded Apache Atlas 2.4 emulator: one core (:class:`Emulator`), three faces (a requests transport
adapter :class:`EmulatorAdapter`, pytest fixtures in :mod:`atlas_sync.emulator.testing`, and an HTTP server
via :func:`serve`)."""

from atlas_sync.emulator.adapter import EmulatorAdapter, emulator_session
from atlas_sync.emulator.app import Emulator, EmulatorResponse, RequestRecord
from atlas_sync.emulator.faults import (
    ConnectionResetFault,
    InjectedFault,
    LostResponseFault,
    TimeoutFault,
    parse_fault_spec,
)
from atlas_sync.emulator.http import EmulatorServer, serve

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
    "emulator_session",
    "parse_fault_spec",
    "serve",
]
