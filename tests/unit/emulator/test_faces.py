"""The three faces answer the same core: requests adapter, HTTP server, fixtures; auth and limits."""

from __future__ import annotations

import requests

from atlas_sync.emulator import Emulator
from atlas_sync.emulator.adapter import BASE_URL, emulator_session
from atlas_sync.emulator.http import EmulatorServer, serve

STATUS = "/api/atlas/admin/status"
HEADERS = "/api/atlas/v2/types/typedefs/headers"


def test_adapter_round_trip_with_json_and_query(emulator: Emulator) -> None:
    session = emulator_session(emulator)
    created = session.post(
        BASE_URL + "/api/atlas/v2/types/typedefs",
        json={"entityDefs": [{"name": "f_ds", "superTypes": ["DataSet"]}]},
    )
    assert created.status_code == 200
    found = session.get(BASE_URL + "/api/atlas/v2/types/typedefs", params={"type": "ENTITY", "name": "f_ds"})
    assert [d["name"] for d in found.json()["entityDefs"]] == ["f_ds"]
    assert found.headers["Content-Type"].startswith("application/json")


def test_adapter_handles_percent_encoded_path_segments(emulator: Emulator) -> None:
    session = emulator_session(emulator)
    session.post(BASE_URL + "/api/atlas/v2/types/typedefs", json={"entityDefs": [{"name": "f with space"}]})
    resp = session.get(BASE_URL + "/api/atlas/v2/types/typedef/name/f%20with%20space")
    assert resp.status_code == 200 and resp.json()["name"] == "f with space"


def test_http_server_serves_status_without_auth_and_requires_it_elsewhere(
    emulator_server: EmulatorServer,
) -> None:
    assert emulator_server.url.startswith("http://127.0.0.1:")
    assert requests.get(emulator_server.url + STATUS, timeout=5).json() == {"Status": "ACTIVE"}
    assert requests.get(emulator_server.url + HEADERS, timeout=5).status_code == 401
    ok = requests.get(emulator_server.url + HEADERS, auth=("admin", "admin"), timeout=5)
    assert ok.status_code == 200 and any(h["name"] == "DataSet" for h in ok.json())


def test_custom_users_replace_the_default_admin() -> None:
    emu = Emulator(users={"svc": "s3cret"})
    session = emulator_session(emu, auth=("admin", "admin"))
    assert session.get(BASE_URL + HEADERS).status_code == 401
    session.auth = ("svc", "s3cret")
    assert session.get(BASE_URL + HEADERS).status_code == 200
    emu.close()


def test_http_server_rejects_oversized_bodies_with_413() -> None:
    emu = Emulator()
    server = serve(emu, max_body_bytes=1000)
    try:
        resp = requests.post(
            server.url + "/api/atlas/v2/entity/bulk", data=b"x" * 5000, auth=("admin", "admin"), timeout=5
        )
        assert resp.status_code == 413
        assert requests.get(server.url + STATUS, timeout=5).status_code == 200
    finally:
        server.shutdown()
        emu.close()


def test_two_servers_on_free_ports_are_independent() -> None:
    a, b = Emulator(), Emulator()
    sa, sb = serve(a), serve(b)
    try:
        assert sa.port != sb.port
        requests.post(
            sa.url + "/api/atlas/v2/types/typedefs",
            json={"entityDefs": [{"name": "only_in_a"}]},
            auth=("admin", "admin"),
            timeout=5,
        )
        assert requests.get(sb.url + "/api/atlas/v2/types/typedef/name/only_in_a", auth=("admin", "admin"),
                            timeout=5).status_code == 404  # fmt: skip
    finally:
        sa.shutdown()
        sb.shutdown()
        a.close()
        b.close()


def test_request_line_longer_than_jettys_buffer_gets_414(emulator: Emulator) -> None:
    # Atlas's Jetty buffer (16192 bytes) holds ~350 guids in one GET; far more cannot even be parsed
    session = emulator_session(emulator)
    guids = [f"{i:08d}-0000-0000-0000-000000000000" for i in range(500)]
    assert session.get(BASE_URL + "/api/atlas/v2/entity/bulk", params={"guid": guids}).status_code == 414
    assert (
        session.get(BASE_URL + "/api/atlas/v2/entity/bulk", params={"guid": guids[:300]}).status_code == 404
    )
