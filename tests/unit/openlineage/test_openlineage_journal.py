"""The endpoint's journal: what is appended is on disk, bounded, de-duplicated, and leaves when settled."""

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest
import requests

from atlas_sync.openlineage_server import (
    EndpointConfig,
    JournalError,
    JournalFull,
    LineageEndpoint,
    MemoryJournal,
    SqliteJournal,
    Watermark,
    serve,
)

SPARK = Path(__file__).parents[2] / "data" / "openlineage" / "spark_complete.json"


def run_event(job="daily", run=0, event_type="COMPLETE", extra=None):
    ev = json.loads(SPARK.read_text())
    ev["job"]["name"] = job
    ev["run"]["runId"] = f"00000000-0000-4000-8000-{run:012d}"
    ev["eventType"] = event_type
    ev["eventTime"] = f"2026-11-30T10:00:{run:02d}Z"
    if extra:
        ev["producer"] = extra
    return ev


def dataset_event(name="mart.t"):
    return {
        "eventTime": "2026-11-30T10:00:00Z",
        "producer": "https://example.invalid/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": "hive://hms:9083", "name": name},
    }


@pytest.fixture(params=["sqlite", "memory"])
def make_journal(request, tmp_path):
    made = []

    def make(max_events=100, max_bytes=10**9):
        if request.param == "memory":
            j = MemoryJournal(max_events, max_bytes)
        else:
            j = SqliteJournal(tmp_path / "journal.sqlite", max_events, max_bytes)
        made.append(j)
        return j

    yield make
    for j in made:
        j.close()


def test_appended_events_are_in_the_file_in_order_after_the_process_lets_go(tmp_path):
    j = SqliteJournal(tmp_path / "j.sqlite", 100)
    a = j.append([run_event("a", 1), run_event("b", 2)])
    j.append([run_event("c", 3)])
    assert [e.id for e in a.entries] == sorted(e.id for e in a.entries)
    j.close()
    # read the file as SQLite sees it, not through the journal
    with sqlite3.connect(tmp_path / "j.sqlite") as conn:
        names = [json.loads(b)["job"]["name"] for (b,) in conn.execute("SELECT body FROM events ORDER BY id")]
    assert names == ["a", "b", "c"]
    again = SqliteJournal(tmp_path / "j.sqlite", 100)
    try:
        assert [e.event["job"]["name"] for e in again.pending()] == ["a", "b", "c"]
        assert again.depth == 3 and again.bytes == sum(e.size for e in again.pending())
    finally:
        again.close()


def test_settled_events_leave_the_journal_and_the_job_watermark_stays(tmp_path):
    j = SqliteJournal(tmp_path / "j.sqlite", 100)
    kept = j.append([run_event("a", 1), run_event("b", 2)]).entries
    j.settle(kept[:1], {"ns/a": Watermark(12.5, "run-1")})
    assert j.watermark("ns/a") == Watermark(12.5, "run-1")  # at once, before the delete is written
    j.flush()
    assert j.depth == 1
    j.close()
    again = SqliteJournal(tmp_path / "j.sqlite", 100)
    try:
        assert [e.event["job"]["name"] for e in again.pending()] == ["b"]
        assert again.watermark("ns/a") == Watermark(12.5, "run-1")
        assert again.watermark("ns/b") is None
    finally:
        again.close()


def test_a_redelivered_run_event_is_kept_once(make_journal):
    j = make_journal()
    first = j.append([run_event("a", 1)])
    # the same run, type and time: the same event even if a producer re-serialised it differently
    again = j.append([run_event("a", 1, extra="https://example.invalid/other-producer-string")])
    assert len(first.entries) == 1 and again.entries == [] and again.duplicates == 1
    # another type or another run of the same job is another event
    other = j.append([run_event("a", 1, event_type="START"), run_event("a", 2)])
    assert len(other.entries) == 2
    assert j.depth == 3


def test_an_event_without_a_run_is_a_duplicate_only_with_the_same_content(make_journal):
    j = make_journal()
    assert len(j.append([dataset_event("mart.t")]).entries) == 1
    assert j.append([dataset_event("mart.t")]).duplicates == 1
    assert len(j.append([dataset_event("mart.u")]).entries) == 1


def test_a_request_beyond_the_count_limit_keeps_none_of_its_events(make_journal):
    j = make_journal(max_events=3)
    j.append([run_event("a", 1), run_event("b", 1)])
    with pytest.raises(JournalFull):
        j.append([run_event("c", 1), run_event("d", 1)])
    assert j.depth == 2
    assert [e.event["job"]["name"] for e in j.pending()] == ["a", "b"]
    assert len(j.append([run_event("c", 1)]).entries) == 1


def test_a_request_beyond_the_byte_limit_keeps_none_of_its_events(make_journal):
    size = len(json.dumps(run_event("a", 1), separators=(",", ":")))
    j = make_journal(max_bytes=int(size * 2.5))
    j.append([run_event("a", 1)])
    with pytest.raises(JournalFull):
        j.append([run_event("b", 1), run_event("c", 1)])
    assert j.depth == 1
    j.settle(j.pending())
    j.flush()
    assert j.depth == 0 and j.bytes == 0
    assert len(j.append([run_event("b", 1), run_event("c", 1)]).entries) == 2


def _fill_the_disk(j: SqliteJournal) -> None:
    # SQLite's page limit fails a write with SQLITE_FULL, the error a full disk gives
    with j._db:
        pages = j._conn.execute("PRAGMA page_count").fetchone()[0]
        j._conn.execute(f"PRAGMA max_page_count = {pages}")


def test_disk_full_is_an_error_that_keeps_nothing_and_writes_resume_after(tmp_path):
    j = SqliteJournal(tmp_path / "j.sqlite", 10_000)
    try:
        j.append([run_event("a", 0)])
        _fill_the_disk(j)
        with pytest.raises(JournalError, match="full"):
            for i in range(1, 200):  # the pages left fill up, then a write fails
                j.append([run_event(f"big{i}", i % 60, extra="x" * 20_000)])
        held = j.depth
        assert held == len(j.pending())  # the figures match the file: nothing half-kept
        with j._db:
            j._conn.execute("PRAGMA max_page_count = 1073741823")
        assert len(j.append([run_event("after", 1)]).entries) == 1
        assert j.depth == held + 1
    finally:
        j.close()


def test_a_second_journal_on_the_same_file_is_refused(tmp_path):
    j = SqliteJournal(tmp_path / "j.sqlite", 10)
    try:
        with pytest.raises(JournalError, match="in use"):
            SqliteJournal(tmp_path / "j.sqlite", 10)
    finally:
        j.close()
    SqliteJournal(tmp_path / "j.sqlite", 10).close()  # free again once closed


def test_concurrent_appends_are_all_kept_with_distinct_ids(tmp_path):
    j = SqliteJournal(tmp_path / "j.sqlite", 10_000)
    ids: list[int] = []
    lock = threading.Lock()

    def send(t):
        for i in range(30):
            got = j.append([run_event(f"t{t}", i)]).entries
            with lock:
                ids.extend(e.id for e in got)

    threads = [threading.Thread(target=send, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    j.close()
    again = SqliteJournal(tmp_path / "j.sqlite", 10_000)
    try:
        assert len(ids) == len(set(ids)) == 240
        assert sorted(e.id for e in again.pending()) == sorted(ids)
    finally:
        again.close()


# ----------------------------------------------------------------------------------- the endpoint
class Recorder:
    def __init__(self):
        self.calls = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, graph, job):
        self.gate.wait()
        self.calls.append((job, graph.processes[0].attributes.get("runId")))


def wait_for(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


def start(tmp_path, sync, **kw):
    config = EndpointConfig(
        journal_path=tmp_path / "journal.sqlite",
        dead_letter_path=tmp_path / "dead.jsonl",
        linger=0.01,
        retry_base=0.01,
        **kw,
    )
    return serve(LineageEndpoint(sync, config), port=0)


def test_a_redelivery_after_the_sync_is_answered_201_and_not_synced_again(tmp_path):
    rec = Recorder()
    server = start(tmp_path, rec)
    url = server.url + "/api/v1/lineage"
    try:
        assert requests.post(url, json=run_event("a", 2)).status_code == 201
        assert wait_for(lambda: server.endpoint.metrics()["synced"] == 1)
        assert wait_for(lambda: server.endpoint.metrics()["journal_depth"] == 0)
        r = requests.post(url, json=run_event("a", 2))  # a producer retrying after a timeout
        assert r.status_code == 201
        assert wait_for(lambda: server.endpoint.metrics()["duplicates"] == 1)
        assert wait_for(lambda: server.endpoint.metrics()["journal_depth"] == 0)
    finally:
        server.shutdown(timeout=2)
    # also after a restart: the job's watermark is in the journal file
    server = start(tmp_path, rec)
    try:
        assert requests.post(server.url + "/api/v1/lineage", json=run_event("a", 2)).status_code == 201
        assert wait_for(lambda: server.endpoint.metrics()["duplicates"] == 1)
    finally:
        server.shutdown(timeout=2)
    assert rec.calls == [("spark-prod/a", "00000000-0000-4000-8000-000000000002")]


def test_an_older_run_arriving_after_a_newer_one_was_synced_is_not_synced(tmp_path):
    rec = Recorder()
    server = start(tmp_path, rec)
    url = server.url + "/api/v1/lineage"
    try:
        requests.post(url, json=run_event("a", 5))
        assert wait_for(lambda: server.endpoint.metrics()["synced"] == 1)
        requests.post(url, json=run_event("a", 3))  # late: run 5 already replaced it
        assert wait_for(lambda: server.endpoint.metrics()["superseded"] == 1)
        requests.post(url, json=run_event("a", 7))
        assert wait_for(lambda: server.endpoint.metrics()["synced"] == 2)
    finally:
        server.shutdown(timeout=2)
    assert [run for _, run in rec.calls] == [
        "00000000-0000-4000-8000-000000000005",
        "00000000-0000-4000-8000-000000000007",
    ]


def test_disk_full_answers_503_and_the_event_is_neither_kept_nor_synced(tmp_path):
    rec = Recorder()
    server = start(tmp_path, rec)
    url = server.url + "/api/v1/lineage"
    journal = server.endpoint.journal
    assert isinstance(journal, SqliteJournal)
    try:
        _fill_the_disk(journal)
        big = run_event("big", 1, extra="x" * 200_000)
        r = requests.post(url, json=big)
        assert r.status_code == 503 and r.headers["Retry-After"] == "1"
        m = server.endpoint.metrics()
        assert m["journal_errors"] == 1 and m["accepted"] == 0 and m["journal_depth"] == 0
        with journal._db:
            journal._conn.execute("PRAGMA max_page_count = 1073741823")
        assert requests.post(url, json=big).status_code == 201  # the producer's retry
        assert wait_for(lambda: server.endpoint.metrics()["synced"] == 1)
    finally:
        server.shutdown(timeout=2)
    assert [job for job, _ in rec.calls] == ["spark-prod/big"]


def test_events_accepted_but_not_synced_are_replayed_first_on_the_next_start(tmp_path):
    rec = Recorder()
    rec.gate.clear()  # Atlas hangs
    server = start(tmp_path, rec)
    url = server.url + "/api/v1/lineage"
    for i in range(3):
        assert requests.post(url, json=run_event(f"j{i}", i)).status_code == 201
    assert server.shutdown(drain=False, timeout=0.2) == 3
    rec.gate.set()
    rec2 = Recorder()
    server = start(tmp_path, rec2)
    try:
        assert server.endpoint.metrics()["replayed"] == 3
        requests.post(server.url + "/api/v1/lineage", json=run_event("new", 9))
        assert wait_for(lambda: server.endpoint.metrics()["journal_depth"] == 0)
    finally:
        server.shutdown(timeout=2)
    assert [job for job, _ in rec2.calls][:3] == ["spark-prod/j0", "spark-prod/j1", "spark-prod/j2"]
    assert [job for job, _ in rec2.calls][3:] == ["spark-prod/new"]


def test_ids_keep_growing_after_everything_was_settled_and_the_journal_reopened(tmp_path):
    j = SqliteJournal(tmp_path / "j.sqlite", 10)
    first = j.append([run_event("a", 1), run_event("b", 1)]).entries
    j.settle(first)
    j.close()
    j = SqliteJournal(tmp_path / "j.sqlite", 10)
    try:
        assert j.depth == 0
        [later] = j.append([run_event("c", 1)]).entries
        assert later.id > max(e.id for e in first)
    finally:
        j.close()


def test_a_settle_shares_the_next_append_s_commit(tmp_path, monkeypatch):
    from atlas_sync.openlineage_server import journal

    monkeypatch.setattr(journal, "SETTLE_LINGER", 30.0)  # nothing commits the settle but the append
    j = SqliteJournal(tmp_path / "j.sqlite", 100)
    try:
        kept = j.append([run_event("a", 1)]).entries
        before = j.commits
        j.settle(kept)
        assert j.commits == before and j.depth == 1  # waiting for an append to ride along with
        j.append([run_event("b", 2)])
        # one transaction, one fsync: the delete and the insert (a settle committed on its own
        # would make it two)
        assert j.commits == before + 1
        assert [e.event["job"]["name"] for e in j.pending()] == ["b"]
    finally:
        j.close()


def test_a_settle_alone_is_committed_soon_without_a_flush(tmp_path):
    j = SqliteJournal(tmp_path / "j.sqlite", 100)
    try:
        j.settle(j.append([run_event("a", 1)]).entries)
        assert wait_for(lambda: j.depth == 0, timeout=30)  # after the settle's linger, no append
        assert j.pending() == []
    finally:
        j.close()


def test_appends_handed_over_together_are_kept_or_refused_each_alone(make_journal):
    j = make_journal(max_events=3)
    futures = j.append_futures(
        [[run_event("a", 1), run_event("b", 1)], [run_event("c", 1), run_event("d", 1)], [run_event("a", 1)]]
    )
    first, second, third = (f.exception(timeout=10) or f.result() for f in futures)
    assert len(first.entries) == 2
    assert isinstance(second, JournalFull)  # would pass the bound: none of its events is kept
    assert third.entries == [] and third.duplicates == 1  # the first request's event, already held
    assert [e.event["job"]["name"] for e in j.pending()] == ["a", "b"]


def test_appends_handed_over_together_share_one_commit(tmp_path):
    j = SqliteJournal(tmp_path / "j.sqlite", 10_000)
    try:
        before = j.commits
        futures = j.append_futures([[run_event(f"j{i}", 1)] for i in range(20)])
        assert all(len(f.result(timeout=10).entries) == 1 for f in futures)
        assert j.commits - before == 1
    finally:
        j.close()
