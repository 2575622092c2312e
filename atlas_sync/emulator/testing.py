"""pytest fixtures for testing against the emulator (registered by ``tests/conftest.py``).

* ``emulator`` - a fresh in-memory :class:`Emulator` per test;
* ``emulator_server`` - that emulator served over HTTP on a free loopback port (an ``EmulatorServer``);
* :func:`emulator_session` - a ``requests.Session`` bound to an emulator at ``http://atlas-emulator.invalid``.

Users can load them in their own suites with ``pytest_plugins = ["atlas_sync.emulator.testing"]``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from atlas_sync.emulator.adapter import BASE_URL, EmulatorAdapter, emulator_session
from atlas_sync.emulator.app import Emulator
from atlas_sync.emulator.http import EmulatorServer, serve

__all__ = ["BASE_URL", "EmulatorAdapter", "emulator", "emulator_server", "emulator_session"]


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    """A fresh in-memory emulator (admin/admin), closed after the test."""
    emu = Emulator()
    try:
        yield emu
    finally:
        emu.close()


@pytest.fixture
def emulator_server(emulator: Emulator) -> Iterator[EmulatorServer]:
    """The ``emulator`` fixture served over HTTP on 127.0.0.1 and a free port."""
    server = serve(emulator)
    try:
        yield server
    finally:
        server.shutdown()
