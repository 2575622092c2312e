"""Malformed requests get Atlas-shaped errors, never an emulator crash (logged as ERROR)."""

from __future__ import annotations

import logging
from itertools import product

import pytest

from atlas_sync.emulator import Emulator

from .helpers import AUTH, call, dataset

BODIES: list[bytes] = [
    b"",
    b"null",
    b"[]",
    b"{}",
    b'"text"',
    b"42",
    b"{not json",
    b'{"entities": null}',
    b'{"entities": [null, 1, "x"]}',
    b'{"entities": [{"typeName": null}]}',
    b'{"entities": [{"typeName": "u_ds", "attributes": []}]}',
    b'{"entities": [{"typeName": "u_ds", "guid": 5, "attributes": {"qualifiedName": 1, "name": 2}}]}',
    b'{"entities": [{"typeName": "u_proc", "attributes": {"qualifiedName": "p", "name": "p", "inputs": "x"}}]}',
    b'{"entities": [{"typeName": "u_proc", "attributes": {"qualifiedName": "p", "name": "p", "inputs": [1]}}]}',
    b'{"entity": {"typeName": "u_ds", "attributes": {"qualifiedName": {"a": 1}, "name": "n"}}}',
    b'{"entityDefs": [{"name": "z", "attributeDefs": [{"name": "a", "typeName": "map<string"}]}]}',
    b'{"entityDefs": [null]}',
    b'{"entityDefs": {"name": "z"}}',
    b'{"relationshipDefs": [{"name": "r"}]}',
    b'{"typeName": "u_ds", "entityFilters": {"criterion": "x", "condition": "AND"}}',
    b'{"typeName": "u_ds", "entityFilters": {"attributeName": "name", "operator": "in", "attributeValue": 5}}',
    b'{"typeName": "u_ds", "sortBy": "name", "offset": "x"}',
    b'["not-a-guid", 5, null]',
]
ENDPOINTS = [
    ("POST", "/api/atlas/v2/entity/bulk"),
    ("POST", "/api/atlas/v2/entity"),
    ("POST", "/api/atlas/v2/types/typedefs"),
    ("PUT", "/api/atlas/v2/types/typedefs"),
    ("DELETE", "/api/atlas/v2/types/typedefs"),
    ("POST", "/api/atlas/v2/search/basic"),
    ("PUT", "/api/atlas/admin/purge"),
    ("PUT", "/api/atlas/v2/entity/uniqueAttribute/type/u_ds?attr:qualifiedName=a@unit"),
]


def test_malformed_bodies_never_crash(typed_emulator: Emulator, caplog: pytest.LogCaptureFixture) -> None:
    call(typed_emulator, "POST", "/v2/entity/bulk", {"entities": [dataset("a")]})
    caplog.set_level(logging.ERROR, logger="atlas_sync.emulator")
    for (method, path), body in product(ENDPOINTS, BODIES):
        resp = typed_emulator.handle(method, path, None, {**AUTH, "Content-Type": "application/json"}, body)
        assert resp.status in (200, 204, 400, 404, 409, 500), (method, path, body, resp.status)
        crashes = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert not crashes, (method, path, body, crashes[0].getMessage() if crashes else "")


@pytest.mark.parametrize(
    "path",
    [
        "/v2/entity/guid/%00",
        "/v2/entity/guid/x/header",
        "/v2/entity/uniqueAttribute/type/u_ds?attr:qualifiedName=",
        "/v2/lineage/x?depth=-1",
        "/v2/search/basic?typeName=u_ds&limit=x",
        "/v2/search/dsl?query=u_ds%20where",
        "/v2/types/typedefs?type=nonsense",
        "/v2/relationship/guid/nope",
    ],
)
def test_odd_reads_get_an_answer(
    typed_emulator: Emulator, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    caplog.set_level(logging.ERROR, logger="atlas_sync.emulator")
    status, _ = call(typed_emulator, "GET", path)
    assert status in (200, 400, 404, 500)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
