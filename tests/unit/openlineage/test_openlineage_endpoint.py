"""The OpenLineage endpoint: real openlineage-python client -> queue -> per-job sync."""

import gzip
import json
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests

from atlas_sync.factory import embedded_client
from atlas_sync.openlineage_server import EndpointConfig, LineageEndpoint, serve

ol_client = pytest.importorskip("openlineage.client")
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState  # noqa: E402
from openlineage.client.facet_v2 import column_lineage_dataset, schema_dataset  # noqa: E402

SPARK = Path(__file__).parents[2] / "data" / "openlineage" / "spark_complete.json"


class Recorder:
    """A stub sync: records (job, graph) and can be made to block or fail."""

    def __init__(self, fail_times: int = 0, exc: Exception | None = None):
        self.calls: list[tuple[str, object]] = []
        self.fail_times = fail_times
        self.exc = exc or RuntimeError("atlas down")
        self.gate = threading.Event()
        self.gate.set()
        self.lock = threading.Lock()

    def __call__(self, graph, job):
        self.gate.wait()
        with self.lock:
            if self.fail_times:
                self.fail_times -= 1
                raise self.exc
            self.calls.append((job, graph))

    def jobs(self):
        return [j for j, _ in self.calls]


def config(tmp_path, **kw):
    kw.setdefault("journal_path", tmp_path / "journal.sqlite")
    kw.setdefault("dead_letter_path", tmp_path / "dead.jsonl")
    kw.setdefault("linger", 0.01)
    kw.setdefault("retry_base", 0.01)
    return EndpointConfig(**kw)


def wait_for(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


def ol_event(job="daily", n=0, state=RunState.COMPLETE):
    return RunEvent(
        eventType=state,
        eventTime="2026-11-30T10:00:00.000Z",
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="spark-prod", name=job),
        producer="https://example.invalid/test",
        inputs=[InputDataset(namespace="postgres://pg:5432", name=f"crm.public.src{n}")],
        outputs=[
            OutputDataset(
                namespace="hive://hms:9083",
                name=f"mart.dst{n}",
                facets={
                    "schema": schema_dataset.SchemaDatasetFacet(
                        fields=[schema_dataset.SchemaDatasetFacetFields(name="id", type="int")]
                    ),
                    "columnLineage": column_lineage_dataset.ColumnLineageDatasetFacet(
                        fields={
                            "id": column_lineage_dataset.Fields(
                                inputFields=[
                                    column_lineage_dataset.InputField(
                                        namespace="postgres://pg:5432",
                                        name=f"crm.public.src{n}",
                                        field="id",
                                        transformations=[
                                            column_lineage_dataset.Transformation(
                                                type="DIRECT", subtype="IDENTITY"
                                            )
                                        ],
                                    )
                                ]
                            )
                        }
                    ),
                },
            )
        ],
    )


def client_for(url, api_key=None, gzip_=False):
    transport = {"type": "http", "url": url, "retry": {"total": 5, "backoff_factor": 0.05}}
    if api_key:
        transport["auth"] = {"type": "api_key", "apiKey": api_key}
    if gzip_:
        transport["compression"] = "gzip"
    return ol_client.OpenLineageClient(config={"transport": transport})


@pytest.fixture
def running(tmp_path):
    servers = []

    def start(sync, **kw):
        s = serve(LineageEndpoint(sync, config(tmp_path, **kw)), port=0)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.shutdown(timeout=2)


def test_real_client_events_are_synced_per_job_with_column_lineage(running):
    rec = Recorder()
    server = running(rec, api_key="s3cret")
    client = client_for(server.url, api_key="s3cret", gzip_=True)
    client.emit(ol_event("job_a", 1))
    client.emit(ol_event("job_b", 2))
    assert wait_for(lambda: server.endpoint.metrics()["synced"] == 2)
    assert sorted(rec.jobs()) == ["spark-prod/job_a", "spark-prod/job_b"]
    graph = dict(rec.calls)["spark-prod/job_a"]
    assert [str(e.source) + "->" + str(e.target) for e in graph.edges] == ["crm.public.src1.id->mart.dst1.id"]
    assert graph.processes[0].attributes["eventType"] == "COMPLETE"


def test_wrong_or_missing_api_key_is_401_and_counted(running):
    server = running(Recorder(), api_key="s3cret")
    body = SPARK.read_bytes()
    r = requests.post(server.url + "/api/v1/lineage", data=body, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401
    r = requests.post(server.url + "/api/v1/lineage", data=body)
    assert r.status_code == 401
    assert server.endpoint.metrics()["rejected"] == 2
    assert server.endpoint.metrics()["accepted"] == 0


def test_invalid_event_is_400_naming_the_path_and_nothing_is_queued(running):
    server = running(Recorder())
    good = json.loads(SPARK.read_text())
    bad = {"eventType": "COMPLETE", "run": {"runId": "r"}, "job": {"namespace": "n"}}
    r = requests.post(server.url + "/api/v1/lineage", json=[good, bad])
    assert r.status_code == 400
    assert r.json()["path"] == "$[1].job"
    r = requests.post(server.url + "/api/v1/lineage", data=b"{nope")
    assert r.status_code == 400 and "invalid JSON" in r.json()["error"]
    assert server.endpoint.metrics()["accepted"] == 0


def test_gzip_body_and_array_of_events_are_accepted(running):
    rec = Recorder()
    server = running(rec)
    ev = json.loads(SPARK.read_text())
    ev2 = {**ev, "eventTime": "2026-11-30T10:00:00Z"}  # same run, another moment
    body = gzip.compress(json.dumps([ev, ev2]).encode())
    r = requests.post(server.url + "/api/v1/lineage", data=body, headers={"Content-Encoding": "gzip"})
    assert r.status_code == 201 and r.json() == {"accepted": 2}
    assert wait_for(lambda: server.endpoint.metrics()["synced"] == 2)
    # two events of one job in one batch: a single sync of that job
    assert rec.jobs() == ["spark-prod/daily_revenue.execute_insert_into_hive_table"]


def run_of(ev, n):
    """``ev`` as the n-th run of its job (another runId, a later eventTime)."""
    e = json.loads(json.dumps(ev))
    e["run"]["runId"] = f"00000000-0000-4000-8000-{n:012d}"
    e["eventTime"] = f"2026-11-30T10:{n // 60 % 60:02d}:{n % 60:02d}Z"
    return e


def test_full_queue_answers_503_with_retry_after_and_loses_nothing(running):
    rec = Recorder()
    rec.gate.clear()  # the sync blocks: the queue fills up
    server = running(rec, queue_size=3, batch_max=1)
    ev = json.loads(SPARK.read_text())
    url = server.url + "/api/v1/lineage"
    assert requests.post(url, json=run_of(ev, 0)).status_code == 201
    assert wait_for(lambda: server.endpoint.metrics()["queue_depth"] == 0)  # taken by the worker
    codes = [requests.post(url, json=run_of(ev, n)).status_code for n in range(1, 6)]
    # the event in the blocked worker's hands and two queued fill the 3 places; the rest are refused
    assert codes == [201, 201, 503, 503, 503]
    full = requests.post(url, json=run_of(ev, 9))
    assert full.status_code == 503 and full.headers["Retry-After"] == "1"
    m = server.endpoint.metrics()
    assert m["rejected_full"] == 4 and m["queue_depth"] == 2 and m["journal_depth"] == 3
    # an event already held is no new work: accepted again even when full
    assert requests.post(url, json=run_of(ev, 1)).json() == {"accepted": 1, "duplicates": 1}
    rec.gate.set()
    assert wait_for(lambda: server.endpoint.metrics()["journal_depth"] == 0)
    m = server.endpoint.metrics()
    assert m["synced"] + m["superseded"] == 3 and m["accepted"] == 3


def test_openlineage_client_retries_503_until_accepted(running):
    rec = Recorder()
    rec.gate.clear()
    server = running(rec, queue_size=2, batch_max=1)
    client = client_for(server.url)
    client.emit(ol_event("j", 0))
    client.emit(ol_event("j", 1))  # fills the journal while the worker is blocked on the first
    threading.Timer(0.3, rec.gate.set).start()
    client.emit(ol_event("j", 2))  # 503 first, then accepted on a retry
    assert wait_for(lambda: server.endpoint.metrics()["journal_depth"] == 0)
    m = server.endpoint.metrics()
    assert m["accepted"] == 3 and m["synced"] + m["superseded"] == 3 and m["rejected_full"] >= 1


def test_event_types_other_than_complete_are_skipped_not_synced(running):
    rec = Recorder()
    server = running(rec)
    client = client_for(server.url)
    client.emit(ol_event("j", 0, RunState.START))
    client.emit(ol_event("j", 0, RunState.FAIL))
    client.emit(ol_event("j", 0, RunState.COMPLETE))
    assert wait_for(lambda: server.endpoint.metrics()["synced"] == 1)
    assert wait_for(lambda: server.endpoint.metrics()["skipped"] == 2)


def test_failed_sync_is_retried_with_backoff_then_counted(running):
    rec = Recorder(fail_times=2)
    server = running(rec)
    requests.post(server.url + "/api/v1/lineage", data=SPARK.read_bytes())
    assert wait_for(lambda: server.endpoint.metrics()["synced"] == 1)
    m = server.endpoint.metrics()
    assert m["failed"] == 2 and "atlas down" in m["last_error"]


def test_sync_that_keeps_failing_goes_to_the_dead_letter_file(running, tmp_path):
    rec = Recorder(fail_times=100)
    server = running(rec, max_attempts=3)
    requests.post(server.url + "/api/v1/lineage", data=SPARK.read_bytes())
    assert wait_for(lambda: server.endpoint.metrics()["dead_lettered"] == 1)
    lines = (tmp_path / "dead.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["job"]["name"] == "daily_revenue.execute_insert_into_hive_table"
    assert server.endpoint.metrics()["failed"] == 3


def test_a_refusal_of_the_sync_core_is_dead_lettered_without_retries(running, tmp_path):
    from atlas_sync.errors import AtlasSyncError

    rec = Recorder(fail_times=100, exc=AtlasSyncError("the plan would delete 5 of the 6 entities"))
    server = running(rec, max_attempts=5)
    requests.post(server.url + "/api/v1/lineage", data=SPARK.read_bytes())
    assert wait_for(lambda: server.endpoint.metrics()["dead_lettered"] == 1)
    m = server.endpoint.metrics()
    assert m["failed"] == 1 and "refused" in m["last_error"]


def test_stop_leaves_unsynced_events_in_the_journal_and_next_start_syncs_them(tmp_path):
    rec = Recorder()
    rec.gate.clear()  # Atlas hangs: nothing can be synced before the drain timeout
    server = serve(LineageEndpoint(rec, config(tmp_path)), port=0)
    ev = json.loads(SPARK.read_text())
    for i in range(5):
        ev["job"]["name"] = f"job{i}"
        assert requests.post(server.url + "/api/v1/lineage", json=ev).status_code == 201
    left = server.shutdown(timeout=0.3)
    assert left == 5  # the batch in flight and the queued events
    rec2 = Recorder()
    server2 = serve(LineageEndpoint(rec2, config(tmp_path)), port=0)
    try:
        assert server2.endpoint.metrics()["replayed"] == 5
        assert wait_for(lambda: server2.endpoint.metrics()["synced"] == 5)
        assert sorted(rec2.jobs()) == [f"spark-prod/job{i}" for i in range(5)]
        assert wait_for(lambda: server2.endpoint.metrics()["journal_depth"] == 0)
    finally:
        rec.gate.set()
        server2.shutdown(timeout=2)


def test_requests_after_stop_get_503(tmp_path):
    server = serve(LineageEndpoint(Recorder(), config(tmp_path)), port=0)
    server.endpoint.stop(timeout=0.5)
    r = requests.post(server.url + "/api/v1/lineage", data=SPARK.read_bytes())
    assert r.status_code == 503 and "Retry-After" in r.headers
    server.shutdown(timeout=0.1)


def test_health_and_metrics(running):
    server = running(Recorder())
    h = requests.get(server.url + "/health").json()
    assert h["status"] == "ok" and h["queue_depth"] == 0
    assert "accepted" in requests.get(server.url + "/api/v1/metrics").json()  # /metrics: Prometheus
    assert requests.post(server.url + "/elsewhere", data=b"{}").status_code == 404


def test_api_key_is_not_in_repr_of_the_config():
    assert "s3cret" not in repr(EndpointConfig(api_key="s3cret"))


def test_many_threads_nothing_lost(running):
    rec = Recorder()
    server = running(rec, batch_max=50)
    ev = json.loads(SPARK.read_text())
    url = server.url + "/api/v1/lineage"
    per_thread, threads = 50, 4

    def send(t):
        s = requests.Session()
        for i in range(per_thread):
            e = run_of(ev, t * per_thread + i)
            e["job"]["name"] = f"job{t}_{i % 5}"
            deadline = time.monotonic() + 60  # a producer retrying its 503s, not forever
            while (r := s.post(url, json=e)).status_code != 201:
                assert r.status_code == 503 and time.monotonic() < deadline, r.text
                time.sleep(0.01)  # the producer's back-off

    ts = [threading.Thread(target=send, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    total = per_thread * threads
    assert wait_for(lambda: server.endpoint.metrics()["journal_depth"] == 0)
    m = server.endpoint.metrics()
    assert m["accepted"] == total and m["synced"] + m["superseded"] == total
    assert set(rec.jobs()) == {f"spark-prod/job{t}_{i}" for t in range(threads) for i in range(5)}


def test_events_from_the_real_client_reach_the_emulator_through_the_sync_core(running, emulator):
    from atlas_sync.api import Publisher

    atlas = embedded_client(emulator=emulator)
    publisher = Publisher(atlas, profile="lineage", domain="oltest")
    # force: load_a's new run replaces all it wrote before, which the delete fail-safe would refuse
    server = running(lambda graph, job: publisher.sync(graph, job, force=True))
    client = client_for(server.url)
    client.emit(ol_event("load_a", 1))
    client.emit(ol_event("load_b", 2))
    assert wait_for(lambda: server.endpoint.metrics()["synced"] == 2)
    client.emit(ol_event("load_a", 3))  # a later run of load_a now writes dst3 instead of dst1
    assert wait_for(lambda: server.endpoint.metrics()["synced"] == 3)
    server.shutdown(timeout=5)
    procs = {
        h["attributes"]["qualifiedName"]: h
        for h in atlas.search_basic("lineage_process", attributes=["qualifiedName", "outputs"])
    }
    # one process per OpenLineage job, never one per run
    assert len(procs) == 2
    outputs = {}
    for qn, h in procs.items():
        entity = atlas.get_entity(h["guid"])
        # Atlas keeps references to deleted entities in attributes: look at the live ones only
        live = [
            o for o in entity["attributes"]["outputs"] if atlas.get_entity(o["guid"])["status"] == "ACTIVE"
        ]
        outputs[qn.split("@")[0]] = sorted(o["uniqueAttributes"]["qualifiedName"] for o in live)
    assert sorted(outputs.values()) == [["mart.dst2@oltest"], ["mart.dst3@oltest"]]


def test_latest_run_of_a_job_in_one_batch_is_synced_and_older_runs_superseded(running):
    rec = Recorder()
    server = running(rec)
    base = json.loads(SPARK.read_text())
    newer, older, same_run_as_newer = (json.loads(json.dumps(base)) for _ in range(3))
    run1, run2 = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
    newer["run"]["runId"], newer["eventTime"] = run2, "2026-11-30T11:00:00Z"
    older["run"]["runId"], older["eventTime"] = run1, "2026-11-30T10:00:00Z"  # arrives last, is older
    same_run_as_newer["run"]["runId"], same_run_as_newer["eventTime"] = run2, "2026-11-30T10:30:00Z"
    r = requests.post(server.url + "/api/v1/lineage", json=[newer, same_run_as_newer, older])
    assert r.status_code == 201
    assert wait_for(lambda: server.endpoint.metrics()["synced"] == 2)
    assert server.endpoint.metrics()["superseded"] == 1
    [(job, graph)] = rec.calls
    assert graph.processes[0].attributes["runId"] == run2


def test_reader_reads_events_serialised_by_openlineage_python(tmp_path):
    from openlineage.client.serde import Serde

    from atlas_sync.lineage import registry

    f = tmp_path / "events.jsonl"
    f.write_text("\n".join(Serde.to_json(ol_event("job_x", i)) for i in range(3)) + "\n")
    g = registry.get("openlineage").read([str(f)])
    assert [p.id for p in g.processes] == ["spark-prod/job_x"]
    assert g.processes[0].outputs == ["mart.dst0", "mart.dst1", "mart.dst2"]
    assert ("crm.public.src2.id", "mart.dst2.id", "IDENTITY") in {
        (str(e.source), str(e.target), e.kind) for e in g.edges
    }
