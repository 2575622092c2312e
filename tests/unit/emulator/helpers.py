"""Helpers for the emulator's own unit tests (black-box REST behaviour lives in tests/contract/)."""

from __future__ import annotations

import base64
from typing import Any

from atlas_sync.emulator import Emulator

AUTH = {"Authorization": "Basic " + base64.b64encode(b"admin:admin").decode()}
API = "/api/atlas"


def call(emu: Emulator, method: str, path: str, body: Any = None, **query: Any) -> Any:
    """One authenticated JSON request straight into the core; returns (status, parsed body or None)."""
    import json

    raw = b"" if body is None else json.dumps(body).encode()
    q = {k: v if isinstance(v, list) else [str(v)] for k, v in query.items()}
    resp = emu.handle(method, API + path, q, {**AUTH, "Content-Type": "application/json"}, raw)
    try:
        parsed = resp.json()
    except ValueError:
        parsed = resp.body.decode()
    return resp.status, parsed


def dataset(name: str, guid: str = "-1", type_name: str = "u_ds", **attrs: Any) -> dict[str, Any]:
    return {
        "typeName": type_name,
        "guid": guid,
        "attributes": {"qualifiedName": f"{name}@unit", "name": name, **attrs},
    }
