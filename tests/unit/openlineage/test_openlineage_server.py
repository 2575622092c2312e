"""The endpoint's HTTP server (ASGI app on uvicorn) against real sockets: limits, timeouts, TLS,
readiness, Prometheus metrics, graceful stop. The routes' answers are in test_openlineage_endpoint."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from atlas_sync.openlineage_server import EndpointConfig, LineageEndpoint, ServerLimits, serve

SPARK = Path(__file__).parents[2] / "data" / "openlineage" / "spark_complete.json"


def wait_for(cond: Any, timeout: float = 30.0) -> bool:
    """Poll ``cond`` until it holds; False after ``timeout`` (a deadline for a failure, not a measure)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def start(tmp_path: Path):
    servers: list[Any] = []

    def run(sync: Any = None, *, limits: ServerLimits | None = None, probe: Any = None, **kw: Any) -> Any:
        kw.setdefault("journal_path", tmp_path / f"journal{len(servers)}.sqlite")
        kw.setdefault("dead_letter_path", tmp_path / "dead.jsonl")
        kw.setdefault("linger", 0.01)
        tls = kw.pop("tls", {})
        endpoint = LineageEndpoint(sync or (lambda graph, job: None), EndpointConfig(**kw), probe=probe)
        server = serve(endpoint, port=0, limits=limits, **tls)
        servers.append(server)
        return server

    yield run
    for s in servers:
        s.shutdown(timeout=2)


def raw(server: Any, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(data)
    return sock


def read_answer(sock: socket.socket) -> tuple[int, bytes]:
    """The status and everything the server sent until it closed."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    data = b"".join(chunks)
    return (int(data.split(b" ", 2)[1]) if data else 0), data


def still_open(sock: socket.socket) -> bool:
    """Open and silent: the server neither answered nor closed it."""
    sock.setblocking(False)
    try:
        sock.recv(1)  # an answer, or b"" for a close
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)
    return False


def answer_others(server: Any, n: int = 20) -> None:
    """Counted work instead of a sleep: ``n`` requests on later connections, each answered (the
    server's loop has turned many times over the connections opened before)."""
    for _ in range(n):
        assert requests.get(server.url + "/health", timeout=10).status_code == 200


def busy_answer(server: Any) -> Any:
    """A POST that is refused whatever happens: 503 while the requests in flight are at the bound,
    else 400 (its body is no event), so polling with it accepts nothing."""
    return requests.post(server.url + "/api/v1/lineage", data=b"{}", timeout=10)


def nothing_journalled(server: Any) -> bool:
    m = server.endpoint.metrics()
    return m["accepted"] == 0 and m["journal_depth"] == 0


def test_an_announced_100_mb_body_is_refused_with_413_without_being_read(start: Any) -> None:
    server = start()
    head = b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    sock = raw(server, head + b"Content-Length: 104857600\r\n\r\n" + b"[" * 1000)
    # the answer comes although 100 MB were never sent (a server waiting for them would leave
    # the read to the socket's timeout, an error)
    status, data = read_answer(sock)
    assert status == 413
    assert b"connection: close" in data.lower() and b"larger than 16777216 bytes" in data
    assert server.endpoint.metrics()["rejected_by"] == {"too_large": 1} and nothing_journalled(server)


def test_a_chunked_body_growing_past_the_limit_is_cut_off_with_413(start: Any) -> None:
    server = start(max_body_bytes=64 * 1024)
    head = b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    sock = raw(server, head + b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"%x\r\n%s\r\n" % (8192, b" " * 8192)
    try:
        for _ in range(32):  # 256 KiB offered; the server stops reading past 64 KiB
            sock.sendall(chunk)
    except OSError:
        pass  # closed on us mid-body: what a limit does
    status, _ = read_answer(sock)
    assert status == 413
    assert server.endpoint.metrics()["rejected_by"] == {"too_large": 1} and nothing_journalled(server)


def test_malformed_gzip_wrong_content_type_and_bad_auth_get_their_status_and_nothing_is_kept(
    start: Any,
) -> None:
    server = start(api_key="k3y")
    url, body = server.url + "/api/v1/lineage", SPARK.read_bytes()
    auth = {"Authorization": "Bearer k3y", "Content-Type": "application/json"}
    cases = [
        ({**auth, "Content-Encoding": "gzip"}, gzip.compress(body)[:-20], 400, "bad_compression"),
        ({**auth, "Content-Encoding": "gzip"}, b"not gzip at all", 400, "bad_compression"),
        ({**auth, "Content-Type": "application/x-www-form-urlencoded"}, body, 415, "unsupported_media_type"),
        ({**auth, "Content-Encoding": "br"}, body, 415, "unsupported_encoding"),
        ({"Authorization": "Bearer nope"}, body, 401, "unauthorized"),
        ({"Content-Type": "application/json"}, body, 401, "unauthorized"),
    ]
    for headers, data, status, _reason in cases:
        r = requests.post(url, data=data, headers=headers, timeout=10)
        assert r.status_code == status, (headers, r.text)
        assert r.headers["Content-Type"] == "application/json" and "error" in r.json()
    reasons: dict[str, int] = {}
    for *_, reason in cases:
        reasons[reason] = reasons.get(reason, 0) + 1
    assert server.endpoint.metrics()["rejected_by"] == reasons and nothing_journalled(server)
    # the same body, right, is kept
    assert requests.post(url, data=body, headers=auth, timeout=10).status_code == 201


def test_a_wrong_method_on_a_known_path_is_405_naming_the_method_it_takes(start: Any) -> None:
    server = start()
    r = requests.get(server.url + "/api/v1/lineage", timeout=10)
    assert r.status_code == 405
    assert r.headers["Allow"] == "POST"
    assert r.json() == {"error": "/api/v1/lineage does not take GET (it takes POST)"}
    assert requests.delete(server.url + "/health", timeout=10).status_code == 405
    unknown = requests.get(server.url + "/api/v1/nothing", timeout=10)
    assert unknown.status_code == 404 and "no such endpoint" in unknown.json()["error"]
    assert nothing_journalled(server)


def test_ready_is_503_while_atlas_is_unreachable_and_200_again_after(start: Any) -> None:
    atlas_up = threading.Event()

    def probe() -> None:
        if not atlas_up.is_set():
            raise ConnectionError("connection refused")

    server = start(probe=probe, probe_interval=0.05)
    r = requests.get(server.url + "/ready", timeout=5)
    assert r.status_code == 503 and r.json()["atlas"] == "unreachable"
    assert "connection refused" in r.json()["reasons"][0]
    assert requests.get(server.url + "/health", timeout=5).status_code == 200  # alive all the same
    atlas_up.set()
    assert wait_for(lambda: requests.get(server.url + "/ready", timeout=5).status_code == 200)
    assert requests.get(server.url + "/ready", timeout=5).json() == {
        "ready": True,
        "reasons": [],
        "atlas": "reachable",
        "journal_depth": 0,
        "queue_size": 10_000,
    }
    atlas_up.clear()
    assert wait_for(lambda: requests.get(server.url + "/ready", timeout=5).status_code == 503)


def test_ready_is_503_while_the_journal_is_full(start: Any) -> None:
    gate = threading.Event()
    server = start(lambda graph, job: gate.wait(10), queue_size=1)
    assert (
        requests.post(server.url + "/api/v1/lineage", data=SPARK.read_bytes(), timeout=5).status_code == 201
    )
    r = requests.get(server.url + "/ready", timeout=5)
    assert r.status_code == 503 and r.json()["reasons"] == ["the journal is full"]
    gate.set()
    assert wait_for(lambda: requests.get(server.url + "/ready", timeout=5).status_code == 200)


def families(server: Any) -> dict[str, Any]:
    r = requests.get(server.url + "/metrics", timeout=5)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")
    return {f.name: f for f in text_string_to_metric_families(r.text)}


def sample(fams: dict[str, Any], family: str, **labels: str) -> float:
    for s in fams[family].samples:
        if s.name in (family, family + "_total") and all(s.labels.get(k) == v for k, v in labels.items()):
            return float(s.value)
    raise AssertionError(f"no {family} {labels}")


def test_metrics_are_prometheus_text_with_the_endpoint_s_families(start: Any) -> None:
    gate = threading.Event()  # the sync waits: the first event is still held when it comes again
    server = start(lambda graph, job: gate.wait(10))
    url = server.url + "/api/v1/lineage"
    ev = json.loads(SPARK.read_text())
    assert requests.post(url, json=ev, timeout=5).status_code == 201
    assert requests.post(url, json=ev, timeout=5).json() == {"accepted": 1, "duplicates": 1}
    assert requests.post(url, data=b"{nope", timeout=5).status_code == 400
    gate.set()
    assert wait_for(lambda: server.endpoint.metrics()["synced"] == 1)
    fams = families(server)
    p = "atlas_sync_openlineage_"
    assert sample(fams, p + "events_accepted") == 1
    assert sample(fams, p + "events_duplicate") == 1
    assert sample(fams, p + "events_refused", reason="invalid_json") == 1
    assert sample(fams, p + "events_synced") == 1
    assert sample(fams, p + "events_dead_lettered") == 0
    assert sample(fams, p + "job_syncs") == 1
    assert sample(fams, p + "ready") == 1
    for gauge in ("journal_events", "journal_bytes", "journal_file_bytes", "queue_events"):
        assert fams[p + gauge].type == "gauge"
    assert fams[p + "sync_seconds"].type == "histogram"
    counts = {
        s.labels["outcome"]: s.value for s in fams[p + "sync_seconds"].samples if s.name.endswith("_count")
    }
    assert counts == {"ok": 1}
    visible = [s for s in fams[p + "event_visible_seconds"].samples if s.name.endswith("_count")]
    assert visible[0].value == 1
    accepted = {
        s.labels["status"]: s.value
        for s in fams[p + "lineage_request_seconds"].samples
        if s.name.endswith("_count")
    }
    assert accepted == {"201": 2, "400": 1}
    # the JSON figures stay where existing users read them
    assert requests.get(server.url + "/api/v1/metrics", timeout=5).json()["accepted"] == 1


def test_two_servers_in_one_process_keep_their_own_figures(start: Any) -> None:
    a, b = start(), start()
    assert requests.post(a.url + "/api/v1/lineage", data=SPARK.read_bytes(), timeout=5).status_code == 201
    assert sample(families(a), "atlas_sync_openlineage_events_accepted") == 1
    assert sample(families(b), "atlas_sync_openlineage_events_accepted") == 0


def test_atlas_request_counters_by_call_kind_are_exported(tmp_path: Path, emulator: Any) -> None:
    from atlas_sync.api import Publisher
    from atlas_sync.factory import embedded_client

    atlas = embedded_client(emulator=emulator)
    publisher = Publisher(atlas, profile="lineage", domain="metrics")
    endpoint = LineageEndpoint(
        lambda graph, job: publisher.sync(graph, job),
        EndpointConfig(
            journal_path=tmp_path / "j.sqlite", dead_letter_path=tmp_path / "d.jsonl", linger=0.01
        ),
        atlas_stats=lambda: atlas.stats,
    )
    server = serve(endpoint, port=0)
    try:
        assert (
            requests.post(server.url + "/api/v1/lineage", data=SPARK.read_bytes(), timeout=5).status_code
            == 201
        )
        assert wait_for(lambda: endpoint.metrics()["synced"] == 1, 30)
        fams = families(server)
        assert sample(fams, "atlas_sync_openlineage_atlas_requests", kind="entity_write") >= 1
        assert sample(fams, "atlas_sync_openlineage_atlas_request_errors", kind="entity_write") == 0
    finally:
        server.shutdown(timeout=5)


def test_tls_with_a_throwaway_ca(start: Any, tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.private_key_and_cert_chain_pem.write_to_path(str(tmp_path / "server.pem"))
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    server = start(
        api_key="k3y",
        tls={"ssl_certfile": tmp_path / "server.pem", "ssl_keyfile": tmp_path / "server.pem"},
        limits=ServerLimits(shutdown_grace=120),
    )
    assert server.url.startswith("https://127.0.0.1:")
    r = requests.post(
        server.url + "/api/v1/lineage",
        data=SPARK.read_bytes(),
        headers={"Authorization": "Bearer k3y"},
        verify=str(tmp_path / "ca.pem"),
        timeout=10,
    )
    assert r.status_code == 201
    # openlineage-python configured as docs/openlineage.md shows (Airflow's and dbt's transport)
    ol = pytest.importorskip("openlineage.client")
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState

    client = ol.OpenLineageClient(
        config={
            "transport": {
                "type": "http",
                "url": server.url,
                "endpoint": "api/v1/lineage",
                "compression": "gzip",
                "auth": {"type": "api_key", "apiKey": "k3y"},
                "sslContext": {"caCertPath": str(tmp_path / "ca.pem")},
            }
        }
    )
    client.emit(
        RunEvent(
            eventType=RunState.COMPLETE,
            eventTime="2026-12-01T10:00:00Z",
            run=Run(runId="3f1c4b4e-0000-4000-8000-000000000001"),
            job=Job(namespace="tls", name="job"),
            producer="https://example.invalid/tls-test",
        )
    )
    assert server.endpoint.metrics()["accepted"] == 2
    with pytest.raises(requests.exceptions.SSLError):  # an unknown CA is refused by the client
        requests.get(server.url + "/health", timeout=10)
    with pytest.raises(requests.exceptions.ConnectionError):  # plain HTTP to the TLS port gets nothing
        requests.get(server.url.replace("https", "http") + "/health", timeout=10)
    # an idle keep-alive TLS client does not hold the stop: without the server's abort the stop
    # waits for the client's close_notify until asyncio's TLS shutdown timeout (30 s) or the grace
    # period (120 s here), so 15 s is a deadline for a hang, not a measure of speed
    session = requests.Session()
    assert session.get(server.url + "/health", verify=str(tmp_path / "ca.pem"), timeout=10).status_code == 200
    stopping = threading.Thread(target=server.shutdown, kwargs={"timeout": 1}, daemon=True)
    stopping.start()
    stopping.join(15)
    assert not stopping.is_alive(), "the stop waited for the idle TLS client"
    session.close()


def test_an_unreadable_certificate_is_a_clear_error(tmp_path: Path) -> None:
    from atlas_sync.errors import ConfigError

    (tmp_path / "bad.pem").write_text("not a certificate")
    endpoint = LineageEndpoint(lambda g, j: None, EndpointConfig(journal_path=None))
    with pytest.raises(ConfigError, match="cannot load the TLS certificate"):
        serve(endpoint, port=0, ssl_certfile=tmp_path / "bad.pem", ssl_keyfile=tmp_path / "bad.pem")
    assert endpoint.journal is None  # nothing was started


def test_a_connection_that_never_sends_a_request_is_closed_after_the_idle_timeout(start: Any) -> None:
    patient = start(limits=ServerLimits(idle_timeout=600))
    kept = raw(patient, b"")
    answer_others(patient)  # the silent connection was accepted before these, and is held
    assert still_open(kept)
    server = start(limits=ServerLimits(idle_timeout=1))
    sock = raw(server, b"")
    assert sock.recv(1) == b""  # closed by the server (before the socket's own 10 s timeout)


def test_headers_sent_slowly_are_cut_off_with_408(start: Any) -> None:
    half_head = b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\n"
    patient = start(limits=ServerLimits(header_timeout=600, idle_timeout=600))
    waiting = raw(patient, half_head)
    answer_others(patient)
    assert still_open(waiting)  # no answer yet: its headers may still come
    server = start(limits=ServerLimits(header_timeout=0.5, idle_timeout=600))
    status, _ = read_answer(raw(server, half_head))
    assert status == 408


def test_a_body_sent_slowly_is_cut_off_with_408_and_nothing_is_kept(start: Any) -> None:
    server = start(limits=ServerLimits(body_timeout=0.5))
    head = b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    sock = raw(server, head + b"{")
    status, data = read_answer(sock)
    assert status == 408 and b"did not arrive within 0.5 s" in data
    assert server.endpoint.metrics()["rejected_by"] == {"body_timeout": 1} and nothing_journalled(server)


def test_requests_beyond_the_bound_in_flight_get_503_with_retry_after(start: Any) -> None:
    server = start(limits=ServerLimits(max_requests=2))
    head = b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    slow = [raw(server, head + b"[") for _ in range(2)]  # two bodies that take their time
    # once both are past their headers, any further request is refused
    assert wait_for(lambda: busy_answer(server).status_code == 503)
    r = requests.post(server.url + "/api/v1/lineage", data=SPARK.read_bytes(), timeout=5)
    assert r.status_code == 503 and r.headers["Retry-After"] == "1"
    for s in slow:
        s.close()
    assert wait_for(
        lambda: (
            requests.post(server.url + "/api/v1/lineage", data=SPARK.read_bytes(), timeout=5).status_code
            == 201
        )
    )


def test_a_connection_beyond_the_bound_is_answered_503_with_retry_after(start: Any) -> None:
    server = start(limits=ServerLimits(max_connections=3))
    held = [raw(server, b"") for _ in range(3)]  # accepted in order, before the 4th below
    refused = 0

    def health() -> Any:
        nonlocal refused
        r = requests.get(server.url + "/health", timeout=5)
        refused += r.status_code == 503
        return r

    r = health()  # the 4th connection
    assert (
        r.status_code == 503
        and r.headers["Retry-After"] == "1"
        and "too many connections" in r.json()["error"]
    )
    for s in held:
        s.close()
    # (until the server has seen the three go, a request may still be refused: each is counted)
    assert wait_for(lambda: health().status_code == 200)
    assert server.endpoint.metrics()["rejected_by"] == {"too_many_connections": refused}


def test_stop_lets_an_in_flight_request_finish_and_takes_no_new_connection(tmp_path: Path) -> None:
    endpoint = LineageEndpoint(
        lambda g, j: None, EndpointConfig(journal_path=tmp_path / "j.sqlite", dead_letter_path=tmp_path / "d")
    )
    server = serve(endpoint, port=0, limits=ServerLimits(shutdown_grace=5, max_requests=1))
    body = SPARK.read_bytes()
    head = (
        b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    sock = raw(server, head + body[:100])  # in flight: half its body sent
    idle = raw(server, b"")
    # the one request allowed in flight is sock's once others are refused (the polls accept nothing;
    # they come after idle, which is thus accepted too)
    assert wait_for(lambda: busy_answer(server).status_code == 503)
    stopping = threading.Thread(target=server.shutdown)
    stopping.start()
    assert wait_for(lambda: refused_connection(server.port))  # the listening socket is closed
    assert idle.recv(1) == b""  # an idle connection is closed at once
    sock.sendall(body[100:])
    status, data = read_answer(sock)
    assert status == 201 and b'"accepted": 1' in data
    stopping.join(30)
    assert not stopping.is_alive()
    assert endpoint.metrics()["accepted"] == 1


def refused_connection(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return True
    return False


def test_requests_of_one_turn_of_the_event_loop_reach_the_journal_in_one_hand_over(tmp_path: Path) -> None:
    """16 requests ready at once: one hand-over to the journal's writer (one commit, one fsync), not
    one each (one each gave ~2.7 events a commit at 64 producers and a p99 1.3x the old server's);
    each request still gets its own answer."""
    import asyncio

    from atlas_sync.openlineage_server.server import create_app

    endpoint = LineageEndpoint(
        lambda g, j: None,
        EndpointConfig(journal_path=tmp_path / "j.sqlite", dead_letter_path=tmp_path / "d", linger=0.01),
    )
    endpoint.start()
    journal = endpoint.journal
    assert journal is not None
    handed: list[int] = []
    real = journal.append_futures

    def recording(batches: Any) -> Any:
        handed.append(len(batches))
        return real(batches)

    journal.append_futures = recording  # type: ignore[method-assign]
    app = create_app(endpoint)
    event = json.loads(SPARK.read_bytes())

    async def post(n: int) -> int:
        body = json.dumps(
            {**event, "run": {**event["run"], "runId": f"0176a8c2-fe01-7439-87e6-{n:012d}"}}
        ).encode()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/api/v1/lineage",
            "raw_path": b"/api/v1/lineage",
            "query_string": b"",
            "root_path": "",
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 1000 + n),
            "server": ("127.0.0.1", 5000),
        }
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)
        return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))

    async def main() -> list[int]:
        return list(await asyncio.gather(*(post(n) for n in range(16))))

    try:
        assert asyncio.run(main()) == [201] * 16
        assert handed == [16]
        assert journal.depth == 16
    finally:
        endpoint.stop(drain=False, timeout=2)


def test_idle_connections_and_slow_bodies_are_held_while_other_producers_are_answered(start: Any) -> None:
    """200 connections that send nothing and 20 bodies that stopped halfway, all held open, while 20
    other requests are answered and their events kept: the front door does not wait on any of them.
    (How much they slow the others down is bench/openlineage_endpoint.py's ``--idle``/``--slow``.)"""
    limits = ServerLimits(idle_timeout=600, body_timeout=600, header_timeout=600, shutdown_grace=1)
    server = start(limits=limits)
    head = b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    idle = [raw(server, b"") for _ in range(200)]
    slow = [raw(server, head + b"[") for _ in range(20)]
    event = json.loads(SPARK.read_bytes())
    for n in range(20):
        run = {**event["run"], "runId": f"0176a8c2-fe01-7439-87e6-{n:012d}"}
        r = requests.post(server.url + "/api/v1/lineage", json={**event, "run": run}, timeout=10)
        assert r.status_code == 201, r.text
    assert [still_open(s) for s in idle + slow] == [True] * 220
    assert server.endpoint.metrics()["accepted"] == 20
    for s in idle + slow:
        s.close()
