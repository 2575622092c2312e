"""Injected faults and latency, through the core, the requests adapter and the HTTP server."""

from __future__ import annotations

import time

import pytest
import requests

from atlas_sync.emulator import (
    ConnectionResetFault,
    Emulator,
    LostResponseFault,
    TimeoutFault,
    parse_fault_spec,
)
from atlas_sync.emulator.adapter import BASE_URL, emulator_session
from atlas_sync.emulator.http import EmulatorServer

from .helpers import call, dataset

VERSION = "/api/atlas/admin/version"


def test_status_fault_at_request_k_fires_once(emulator: Emulator) -> None:
    emulator.inject_fault("status", at=3, status=503, retry_after=2)
    statuses = [call(emulator, "GET", "/admin/version")[0] for _ in range(5)]
    assert statuses == [200, 200, 503, 200, 200]
    assert [r.status for r in emulator.request_log] == statuses


def test_status_fault_sends_retry_after(emulator: Emulator) -> None:
    emulator.inject_fault("status", at=1, status=429, retry_after=7)
    resp = emulator.handle("GET", VERSION, {}, {}, b"")
    assert resp.status == 429 and resp.headers["Retry-After"] == "7"


def test_probability_faults_are_seeded_and_repeatable() -> None:
    def pattern(seed: int) -> list[int]:
        emu = Emulator()
        emu.inject_fault("status", probability=0.3, seed=seed, status=502)
        out = [call(emu, "GET", "/admin/version")[0] for _ in range(200)]
        emu.close()
        return out

    first, second = pattern(7), pattern(7)
    assert first == second
    failures = first.count(502)
    assert 30 < failures < 90  # about 30 % of 200
    assert pattern(8) != first


def test_fault_restricted_to_method_and_path_prefix(typed_emulator: Emulator) -> None:
    typed_emulator.inject_fault("status", status=500, method="POST", path_prefix="/api/atlas/v2/entity")
    assert call(typed_emulator, "GET", "/admin/version")[0] == 200
    assert call(typed_emulator, "POST", "/v2/search/basic", {"typeName": "u_ds"})[0] == 200
    assert call(typed_emulator, "POST", "/v2/entity/bulk", {"entities": [dataset("a")]})[0] == 500
    typed_emulator.clear_faults()
    assert call(typed_emulator, "POST", "/v2/entity/bulk", {"entities": [dataset("a")]})[0] == 200


def test_reset_and_timeout_do_not_apply_the_request(typed_emulator: Emulator) -> None:
    body = {"entities": [dataset("never")]}
    typed_emulator.inject_fault("reset", at=1)
    typed_emulator.inject_fault("timeout", at=2)
    with pytest.raises(ConnectionResetFault):
        call(typed_emulator, "POST", "/v2/entity/bulk", body)
    with pytest.raises(TimeoutFault):
        call(typed_emulator, "POST", "/v2/entity/bulk", body)
    typed_emulator.clear_faults()
    status, _ = call(
        typed_emulator, "GET", "/v2/entity/uniqueAttribute/type/u_ds", **{"attr:qualifiedName": "never@unit"}
    )
    assert status == 404


def test_lost_response_applies_the_request(typed_emulator: Emulator) -> None:
    typed_emulator.inject_fault("lost_response", at=1)
    with pytest.raises(LostResponseFault):
        call(typed_emulator, "POST", "/v2/entity/bulk", {"entities": [dataset("applied")]})
    status, _ = call(
        typed_emulator,
        "GET",
        "/v2/entity/uniqueAttribute/type/u_ds",
        **{"attr:qualifiedName": "applied@unit"},
    )
    assert status == 200


def test_adapter_maps_faults_to_requests_exceptions(emulator: Emulator) -> None:
    session = emulator_session(emulator)
    emulator.inject_fault("reset", at=1)
    emulator.inject_fault("timeout", at=2)
    emulator.inject_fault("lost_response", at=3)
    with pytest.raises(requests.ConnectionError):
        session.get(BASE_URL + VERSION)
    with pytest.raises(requests.ReadTimeout):
        session.get(BASE_URL + VERSION)
    with pytest.raises(requests.ConnectionError):
        session.get(BASE_URL + VERSION)
    assert session.get(BASE_URL + VERSION).status_code == 200


class _RecordedSleeps:
    """The emulator's ``time`` with the sleeps recorded instead of slept."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


def test_latency_fixed_and_per_entity(typed_emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    from atlas_sync.emulator import app

    clock = _RecordedSleeps()
    monkeypatch.setattr(app, "time", clock)
    typed_emulator.set_latency(fixed_ms=30)
    call(typed_emulator, "GET", "/admin/version")
    assert clock.waits == [pytest.approx(0.03)]
    typed_emulator.set_latency(fixed_ms=0, per_entity_ms=5)
    entities = [dataset(f"e{i}", f"-{i + 1}") for i in range(20)]
    call(typed_emulator, "POST", "/v2/entity/bulk", {"entities": entities})
    assert clock.waits[1:] == [pytest.approx(0.1)]  # 20 entities x 5 ms
    assert typed_emulator.request_log[-1].entity_count == 20


def test_request_log_records_method_path_status_and_entities(typed_emulator: Emulator) -> None:
    typed_emulator.clear_log()
    call(typed_emulator, "POST", "/v2/entity/bulk", {"entities": [dataset("a", "-1"), dataset("b", "-2")]})
    call(typed_emulator, "GET", "/v2/types/typedef/name/nope")
    log = typed_emulator.request_log
    assert [(r.method, r.path, r.status, r.entity_count) for r in log] == [
        ("POST", "/api/atlas/v2/entity/bulk", 200, 2),
        ("GET", "/api/atlas/v2/types/typedef/name/nope", 404, 0),
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("status,status=503,at=3", {"kind": "status", "status": 503, "at": 3}),
        ("reset,probability=0.25,seed=4", {"kind": "reset", "probability": 0.25, "seed": 4}),
        (
            "kind=timeout,method=POST,path=/api/atlas/v2/entity",
            {"kind": "timeout", "method": "POST", "path_prefix": "/api/atlas/v2/entity"},
        ),
    ],
)
def test_parse_fault_spec(spec: str, expected: dict[str, object]) -> None:
    fault = parse_fault_spec(spec)
    for key, value in expected.items():
        assert getattr(fault, key) == value


@pytest.mark.parametrize("spec", ["", "explode", "status,at=x", "status,colour=red"])
def test_parse_fault_spec_rejects_nonsense(spec: str) -> None:
    with pytest.raises(ValueError):
        parse_fault_spec(spec)


def test_http_server_faults_look_like_network_errors(emulator_server: EmulatorServer) -> None:
    emu = emulator_server.emulator
    emu.inject_fault("reset", at=1)
    emu.inject_fault("status", at=2, status=503)
    session = requests.Session()
    session.auth = ("admin", "admin")
    with pytest.raises(requests.ConnectionError):
        session.get(emulator_server.url + VERSION, timeout=5)
    assert session.get(emulator_server.url + VERSION, timeout=5).status_code == 503
    assert session.get(emulator_server.url + VERSION, timeout=5).status_code == 200


def test_http_server_timeout_fault_hits_client_read_timeout(emulator_server: EmulatorServer) -> None:
    emulator_server.emulator.inject_fault("timeout", at=1)
    with pytest.raises(requests.ReadTimeout):
        requests.get(emulator_server.url + VERSION, auth=("admin", "admin"), timeout=(2, 0.3))
