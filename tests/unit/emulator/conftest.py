"""Fixtures for the emulator's own unit tests."""

from __future__ import annotations

import pytest

from atlas_sync.emulator import Emulator

from .helpers import call


@pytest.fixture
def typed_emulator(emulator: Emulator) -> Emulator:
    """The in-memory emulator with a DataSet subtype ``u_ds`` and a Process subtype ``u_proc``."""
    status, body = call(
        emulator,
        "POST",
        "/v2/types/typedefs",
        {
            "entityDefs": [
                {"name": "u_ds", "superTypes": ["DataSet"]},
                {"name": "u_proc", "superTypes": ["Process"]},
            ]
        },
    )
    assert status == 200, body
    return emulator
