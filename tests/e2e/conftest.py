"""Fixtures of the end-to-end tests (a module may define its own `client`, which then wins)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from atlas_sync.atlas import AtlasClient
from atlas_sync.config import load_settings
from atlas_sync.emulator import Emulator
from atlas_sync.emulator.http import serve
from atlas_sync.factory import client_from_settings


@pytest.fixture(params=["emulator", "real"])
def client(request: pytest.FixtureRequest) -> Iterator[AtlasClient]:
    if request.param == "real":
        if not os.environ.get("ATLAS_URL"):
            pytest.skip("needs a real Atlas (ATLAS_URL)")
        yield client_from_settings(load_settings())  # ATLAS_URL, ATLAS_USERNAME, ATLAS_PASSWORD(_FILE)
        return
    emu = Emulator()
    server = serve(emu)
    try:
        yield AtlasClient(server.url, auth=("admin", "admin"))
    finally:
        server.shutdown()
        emu.close()
