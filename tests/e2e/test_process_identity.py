"""A process is named by what it is, never by the file that holds it nor its place among the files:
renaming an input file, giving the files in another order or adding another job's events to an
OpenLineage file plans no create and no delete for lineage that did not change (`atlas-sync`
processes against the emulator over HTTP, as a user runs them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
A_SQL = "INSERT INTO m.t SELECT a, b FROM m.s;\n"
B_SQL = "INSERT INTO m.u SELECT a FROM m.t WHERE b > 0;\n"


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def plan(args: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(run(["plan", "--json", *args], env, cwd).stdout)
    return doc


def created_or_deleted(doc: dict[str, Any]) -> list[str]:
    return [
        f"{i['action']} {i['qualifiedName']}" for i in doc["items"] if i["action"] in ("create", "delete")
    ]


@pytest.fixture()
def env(emulator_server: Any) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("ATLAS_", "ATLAS_SYNC_"))}
    e.update({"ATLAS_URL": emulator_server.url, "ATLAS_USERNAME": "admin", "ATLAS_PASSWORD": "admin"})
    return e


@pytest.mark.parametrize("profile", ["lineage", "atlas"])
def test_renaming_a_sql_file_plans_no_create_and_no_delete(
    env: dict[str, str], tmp_path: Path, profile: str
) -> None:
    (tmp_path / "v1.sql").write_text(A_SQL, encoding="utf-8")
    run(["sync", "-d", "d", "-p", profile, "-j", "j", "v1.sql"], env, tmp_path)
    (tmp_path / "v1.sql").rename(tmp_path / "v2.sql")
    doc = plan(["-d", "d", "-p", profile, "-j", "j", "v2.sql"], env, tmp_path)
    assert created_or_deleted(doc) == []
    if profile == "lineage":  # the process's name holds the job, the target and the digest: no file
        names = [i["qualifiedName"] for i in doc["items"] if i["typeName"] == "lineage_process"]
        assert len(names) == 1 and names[0].startswith("j:m.t:") and "v1" not in names[0]


@pytest.mark.parametrize("profile", ["lineage", "atlas"])
def test_giving_sql_files_in_another_order_plans_no_create_and_no_delete(
    env: dict[str, str], tmp_path: Path, profile: str
) -> None:
    (tmp_path / "a.sql").write_text(A_SQL, encoding="utf-8")
    (tmp_path / "b.sql").write_text(B_SQL, encoding="utf-8")
    run(["sync", "-d", "d", "-p", profile, "-j", "x", "a.sql", "b.sql"], env, tmp_path)
    doc = plan(["-d", "d", "-p", profile, "-j", "x", "b.sql", "a.sql"], env, tmp_path)
    assert created_or_deleted(doc) == []
    assert doc["summary"]["create"] == doc["summary"]["delete"] == 0


SPARK_WRITES = {  # plans that write named tables (and read named tables): nothing named after the file
    "a.plan.txt": ROOT / "tests/data/spark/fixtures/append_data_v2_jdbc/analyzed.txt",
    "b.plan.txt": ROOT / "tests/data/spark/fixtures/insert_into_cte/analyzed.txt",
}


@pytest.mark.parametrize("options", [[], ["-o", "job=J"]], ids=["job-from-names", "job-option"])
@pytest.mark.parametrize("profile", ["lineage", "atlas"])
def test_renaming_and_reordering_spark_plan_files_that_write_tables_plans_no_create_and_no_delete(
    env: dict[str, str], tmp_path: Path, profile: str, options: list[str]
) -> None:
    for name, source in SPARK_WRITES.items():
        shutil.copy(source, tmp_path / name)
    args = ["-d", "d", "-p", profile, "-j", "x", *options]
    run(["sync", *args, "a.plan.txt", "b.plan.txt"], env, tmp_path)
    (tmp_path / "a.plan.txt").rename(tmp_path / "c.plan.txt")
    for files in (["c.plan.txt", "b.plan.txt"], ["b.plan.txt", "c.plan.txt"]):
        doc = plan([*args, *files], env, tmp_path)
        assert created_or_deleted(doc) == []
        assert doc["summary"]["create"] == doc["summary"]["delete"] == 0
    if profile == "lineage":  # <job>:<table written>, under the reader's job option if given
        job = "x:J:" if options else "x:"
        names = {i["qualifiedName"] for i in doc["items"] if i["typeName"] == "lineage_process"}
        assert names == {f"{job}jdb.app.customers_eu@d", f"{job}spark_catalog.default.tab3@d"}


@pytest.mark.parametrize("profile", ["lineage", "atlas"])
def test_renaming_and_reordering_seatunnel_files_plans_no_create_and_no_delete(
    env: dict[str, str], tmp_path: Path, profile: str
) -> None:
    shutil.copy(ROOT / "tests/data/seatunnel/mysql_to_pg.conf", tmp_path / "a.conf")
    shutil.copy(ROOT / "tests/data/seatunnel/sql_transform.conf", tmp_path / "b.conf")
    args = ["-d", "d", "-p", profile, "-j", "x"]
    run(["sync", *args, "a.conf", "b.conf"], env, tmp_path)
    (tmp_path / "a.conf").rename(tmp_path / "c.conf")
    for files in (["c.conf", "b.conf"], ["b.conf", "c.conf"]):
        doc = plan([*args, *files], env, tmp_path)
        assert created_or_deleted(doc) == []
    if profile == "lineage":
        names = {i["qualifiedName"] for i in doc["items"] if i["typeName"] == "lineage_process"}
        assert names == {"x:dw.mart.orders@d", "x:ods.adults@d"}


def _hive_doc(query: str) -> dict[str, Any]:
    return {
        "version": "1.0",
        "queryText": query,
        "edges": [{"sources": [1], "targets": [0], "expression": "a", "edgeType": "PROJECTION"}],
        "vertices": [
            {"id": 0, "vertexType": "COLUMN", "vertexId": "m.t.a"},
            {"id": 1, "vertexType": "COLUMN", "vertexId": "m.s.a"},
        ],
    }


# (reader, first file's name, how to write it, second name); each reader's job is only the file's name
READERS = {
    # its source is not named in the plan: a dataset named after the job, `unknown:<job>/source`
    "spark-plan": ("cars.plan.txt", ROOT / "examples/spark-cars/cars.plan.txt", "renamed.plan.txt"),
    "seatunnel": ("orders.conf", ROOT / "examples/seatunnel/orders_to_dw.conf", "renamed.conf"),
    "hive-lineage": (
        "q.hive-lineage.json",
        _hive_doc("INSERT INTO m.t SELECT a FROM m.s"),
        "r.hive-lineage.json",
    ),
    "query-log": (
        "log.querylog.csv",
        'query_text\n"INSERT INTO m.t SELECT a FROM m.s"\n',
        "other.querylog.csv",
    ),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_renaming_another_readers_input_file_plans_no_create_and_no_delete(
    env: dict[str, str], tmp_path: Path, reader: str
) -> None:
    first, content, second = READERS[reader]
    if isinstance(content, Path):
        shutil.copy(content, tmp_path / first)
    elif isinstance(content, dict):
        (tmp_path / first).write_text(json.dumps(content), encoding="utf-8")
    else:
        (tmp_path / first).write_text(content, encoding="utf-8")
    run(["sync", "-d", "d", "--from", reader, "-j", "j", first], env, tmp_path)
    (tmp_path / first).rename(tmp_path / second)
    doc = plan(["-d", "d", "--from", reader, "-j", "j", second], env, tmp_path)
    assert created_or_deleted(doc) == []


def test_hive_lineage_files_in_another_order_plan_no_create_and_no_delete(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "a.hive-lineage.json").write_text(json.dumps(_hive_doc("INSERT INTO m.t SELECT a FROM m.s")))
    other = _hive_doc("INSERT INTO m.u SELECT a FROM m.t")
    other["vertices"] = [
        {"id": 0, "vertexType": "COLUMN", "vertexId": "m.u.a"},
        {"id": 1, "vertexType": "COLUMN", "vertexId": "m.t.a"},
    ]
    (tmp_path / "b.hive-lineage.json").write_text(json.dumps(other))
    files = ["a.hive-lineage.json", "b.hive-lineage.json"]
    run(["sync", "-d", "d", "--from", "hive-lineage", "-j", "x", *files], env, tmp_path)
    doc = plan(["-d", "d", "--from", "hive-lineage", "-j", "x", *reversed(files)], env, tmp_path)
    assert created_or_deleted(doc) == []


def _ol_event(name: str, run: str, output: str) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2024-05-01T10:00:00Z",
        "run": {"runId": run},
        "job": {"namespace": "a", "name": name},
        "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}],
        "outputs": [{"namespace": "postgres://db:5432", "name": output}],
        "producer": "https://example.com/producer",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
    }


GOOD = _ol_event("goodjob", "3f5e8c3a-1111-4111-8111-111111111111", "shop.public.daily")
OTHER = _ol_event("otherjob", "3f5e8c3a-2222-4222-8222-222222222222", "shop.public.weekly")


@pytest.mark.parametrize("profile", ["lineage", "atlas"])
def test_adding_another_jobs_events_to_an_openlineage_file_plans_no_create_and_no_delete_for_the_first(
    env: dict[str, str], tmp_path: Path, profile: str
) -> None:
    events = tmp_path / "events.ol.json"
    events.write_text(json.dumps(GOOD), encoding="utf-8")
    run(["sync", "-d", "d", "-p", profile, "events.ol.json"], env, tmp_path)

    events.write_text(json.dumps([GOOD, OTHER]), encoding="utf-8")
    doc = plan(["-d", "d", "-p", profile, "events.ol.json"], env, tmp_path)
    # each OpenLineage job is planned under its own job scope, as `openlineage serve` syncs it
    by_job = {j["job"]: j for j in doc["jobs"]}
    assert sorted(by_job) == ["a/goodjob", "a/otherjob"]
    assert created_or_deleted(by_job["a/goodjob"]) == []
    other = created_or_deleted(by_job["a/otherjob"])
    assert other and all(c.startswith("create ") for c in other)
    if profile == "lineage":  # named by the job's namespace and name alone
        assert "create a/otherjob@d" in other

    run(["sync", "-d", "d", "-p", profile, "events.ol.json"], env, tmp_path)
    events.write_text(json.dumps(GOOD), encoding="utf-8")  # the first job alone again: nothing changes
    assert created_or_deleted(plan(["-d", "d", "-p", profile, "events.ol.json"], env, tmp_path)) == []


def test_an_openlineage_file_of_several_jobs_under_one_job_keeps_each_jobs_process_name(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "one.ol.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "two.ol.json").write_text(json.dumps([OTHER, GOOD]), encoding="utf-8")
    run(["sync", "-d", "d", "-j", "nightly", "one.ol.json"], env, tmp_path)
    doc = plan(["-d", "d", "-j", "nightly", "two.ol.json"], env, tmp_path)
    assert sorted(created_or_deleted(doc)) == ["create a/otherjob@d", "create shop.public.weekly@d"]
    procs = [i["qualifiedName"] for i in doc["items"] if i["typeName"] == "lineage_process"]
    assert sorted(procs) == ["a/goodjob@d", "a/otherjob@d"]


def test_a_saved_plan_of_several_openlineage_jobs_asks_for_one_job(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "two.ol.json").write_text(json.dumps([GOOD, OTHER]), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", "plan", "-d", "d", "two.ol.json", "--out", "p.json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "give --job JOB" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(
    ("reader", "first", "second"),
    [
        ("sql", ("a.sql", A_SQL), ("b.sql", B_SQL)),
        ("hive-lineage", ("a.hive-lineage.json", json.dumps(_hive_doc("q1"))), ("b.hive-lineage.json", "")),
    ],
)
def test_files_in_another_order_without_a_job_name_the_same_job(
    env: dict[str, str], tmp_path: Path, reader: str, first: tuple[str, str], second: tuple[str, str]
) -> None:
    # the job taken from the files' names is the first by name, not the first given
    (tmp_path / first[0]).write_text(first[1], encoding="utf-8")
    other = second[1]
    if reader == "hive-lineage":
        doc = _hive_doc("q2")
        doc["vertices"] = [
            {"id": 0, "vertexType": "COLUMN", "vertexId": "m.u.a"},
            {"id": 1, "vertexType": "COLUMN", "vertexId": "m.t.a"},
        ]
        other = json.dumps(doc)
    (tmp_path / second[0]).write_text(other, encoding="utf-8")
    run(["sync", "-d", "d", "--from", reader, second[0], first[0]], env, tmp_path)
    doc = plan(["-d", "d", "--from", reader, first[0], second[0]], env, tmp_path)
    assert doc["job"] == "a"
    assert created_or_deleted(doc) == []


def test_the_lineage_document_of_an_input_syncs_to_the_same_processes(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "a.sql").write_text(A_SQL, encoding="utf-8")
    (tmp_path / "b.sql").write_text(B_SQL, encoding="utf-8")
    (tmp_path / "events.ol.json").write_text(json.dumps([GOOD, OTHER]), encoding="utf-8")
    run(["sync", "-d", "d", "-j", "x", "a.sql", "b.sql"], env, tmp_path)
    run(["sync", "-d", "o", "events.ol.json"], env, tmp_path)
    sql_doc = run(["lineage", "sql", "a.sql", "b.sql"], env, tmp_path).stdout
    (tmp_path / "sql.lineage.json").write_text(sql_doc, encoding="utf-8")
    ol_doc = run(["lineage", "openlineage", "events.ol.json"], env, tmp_path).stdout
    (tmp_path / "ol.lineage.json").write_text(ol_doc, encoding="utf-8")
    assert created_or_deleted(plan(["-d", "d", "-j", "x", "sql.lineage.json"], env, tmp_path)) == []
    jobs = plan(["-d", "o", "ol.lineage.json"], env, tmp_path)["jobs"]
    assert [j["job"] for j in jobs] == ["a/goodjob", "a/otherjob"]
    assert [created_or_deleted(j) for j in jobs] == [[], []]
