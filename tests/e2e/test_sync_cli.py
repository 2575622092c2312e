"""The sync commands driven as a user would: `atlas-sync` processes against the emulator over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DOC = {
    "datasets": [
        {"id": "raw.orders", "namespace": "raw", "name": "orders", "columns": ["id", "amount"]},
        {"id": "mart.revenue", "namespace": "mart", "name": "revenue", "columns": ["total"]},
    ],
    "processes": [
        {"id": "daily", "name": "daily revenue", "inputs": ["raw.orders"], "outputs": ["mart.revenue"]}
    ],
    "columns": [
        {
            "source": "raw.orders.amount",
            "target": "mart.revenue.total",
            "kind": "AGGREGATION",
            "process": "daily",
        }
    ],
}
# 2 datasets + 3 columns + 1 process + 1 column lineage
TOTAL = 7


def run(
    args: list[str], env: dict[str, str], cwd: Path, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check and proc.returncode not in (0, 2):
        raise AssertionError(f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


@pytest.fixture()
def env(emulator_server, tmp_path):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("ATLAS_", "ATLAS_SYNC_"))}
    e.update({"ATLAS_URL": emulator_server.url, "ATLAS_USERNAME": "admin", "ATLAS_PASSWORD": "admin"})
    return e


@pytest.fixture()
def doc_file(tmp_path):
    p = tmp_path / "daily.lineage.json"
    p.write_text(json.dumps(DOC))
    return p


def test_sync_then_resync_writes_nothing(env, tmp_path, doc_file, emulator_server):
    first = run(["sync", "--domain", "demo", "--from", "graph", str(doc_file), "--json"], env, tmp_path)
    summary = json.loads(first.stdout)
    assert summary["plan"]["create"] == TOTAL
    assert summary["applied"]["created"] == TOTAL
    second = run(["sync", "--domain", "demo", "--from", "graph", str(doc_file), "--json"], env, tmp_path)
    again = json.loads(second.stdout)
    assert again["plan"] == {"create": 0, "update": 0, "delete": 0, "unchanged": TOTAL}
    assert again["applied"] is None


def test_refresh_finds_an_edit_made_in_atlas_that_a_plain_resync_keeps(
    env, tmp_path, doc_file, emulator_server
):
    from atlas_sync.atlas import AtlasClient

    run(["sync", "--domain", "demo", "--from", "graph", str(doc_file)], env, tmp_path)
    client = AtlasClient(emulator_server.url, auth=("admin", "admin"))
    qn = "raw.orders@demo"
    ent = client.get_entity_by_unique("lineage_dataset", qn)
    attrs = {k: v for k, v in ent["attributes"].items() if isinstance(v, str)}
    client.upsert_entities([{"typeName": "lineage_dataset", "attributes": {**attrs, "kind": "edited"}}])
    plain = run(
        ["plan", "--domain", "demo", "--from", "graph", str(doc_file), "--detailed-exitcode"], env, tmp_path
    )
    assert plain.returncode == 0, plain.stdout  # decided by the stored digests: no changes seen
    full = run(
        ["plan", "--domain", "demo", "--from", "graph", str(doc_file), "--refresh", "--detailed-exitcode"],
        env,
        tmp_path,
    )
    assert full.returncode == 2
    assert f"~ lineage_dataset {qn}" in full.stdout and 'kind: "edited" -> "table"' in full.stdout
    run(["sync", "--domain", "demo", "--from", "graph", str(doc_file), "--refresh"], env, tmp_path)
    assert client.get_entity_by_unique("lineage_dataset", qn)["attributes"]["kind"] == "table"


def test_plan_prints_terraform_style_and_detailed_exitcode(env, tmp_path, doc_file):
    run(["typedefs", "apply", "--profile", "lineage"], env, tmp_path)
    p = run(
        ["plan", "--domain", "demo", "--from", "graph", str(doc_file), "--detailed-exitcode"], env, tmp_path
    )
    assert p.returncode == 2
    assert "  + lineage_process daily@demo" in p.stdout
    assert f"Plan: {TOTAL} to create, 0 to update, 0 to delete, 0 unchanged." in p.stdout
    run(["sync", "--domain", "demo", "--from", "graph", str(doc_file), "-q"], env, tmp_path)
    p = run(
        ["plan", "--domain", "demo", "--from", "graph", str(doc_file), "--detailed-exitcode"], env, tmp_path
    )
    assert p.returncode == 0
    assert f"Plan: 0 to create, 0 to update, 0 to delete, {TOTAL} unchanged." in p.stdout


def test_saved_plan_applies_once(env, tmp_path, doc_file):
    run(["typedefs", "apply", "--profile", "lineage"], env, tmp_path)
    planfile = tmp_path / "plan.json"
    run(["plan", "--domain", "demo", "--from", "graph", str(doc_file), "--out", str(planfile)], env, tmp_path)
    assert "admin" not in planfile.read_text()  # no credentials in plan files
    ok = run(["apply", str(planfile), "--json"], env, tmp_path)
    assert json.loads(ok.stdout)["created"] == TOTAL
    stale = run(["apply", str(planfile)], env, tmp_path, check=False)
    assert stale.returncode == 1
    assert "no longer matches" in stale.stderr and "Traceback" not in stale.stderr


def test_teardown_purge_then_show_is_empty(env, tmp_path, doc_file):
    run(["sync", "--domain", "demo", "--from", "graph", str(doc_file), "-q"], env, tmp_path)
    shown = run(["show", "--domain", "demo"], env, tmp_path)
    assert "daily@demo" in shown.stdout or "daily revenue" in shown.stdout
    t = run(["teardown", "--domain", "demo", "--purge", "--yes", "--json"], env, tmp_path)
    res = json.loads(t.stdout)
    assert res["deleted"] == TOTAL and res["purged"] == TOTAL
    p = run(["plan", "--domain", "demo", "--from", "graph", str(doc_file), "--json"], env, tmp_path)
    assert json.loads(p.stdout)["summary"]["create"] == TOTAL


def test_teardown_without_yes_in_a_pipe_refuses(env, tmp_path):
    p = run(["teardown", "--domain", "demo"], env, tmp_path, check=False)
    assert p.returncode == 1 and "--yes" in p.stderr


def test_bad_input_publishes_nothing(env, tmp_path, emulator_server):
    bad = tmp_path / "bad.lineage.json"
    bad.write_text('{"datasets": [}')
    p = run(["sync", "--domain", "demo", "--from", "graph", str(bad)], env, tmp_path, check=False)
    assert p.returncode == 1
    assert "bad.lineage.json" in p.stderr and "line 1" in p.stderr and "Traceback" not in p.stderr
    posts = [r for r in emulator_server.emulator.request_log if r.method != "GET"]
    assert posts == []


def test_missing_domain_is_a_usage_error(env, tmp_path, doc_file):
    p = run(["sync", "--from", "graph", str(doc_file)], env, tmp_path, check=False)
    assert p.returncode == 2 and "--domain" in p.stderr


def test_a_big_jobs_unchanged_resync_is_answered_by_its_receipt(env, tmp_path):
    # 250 processes over 500 datasets: past RECEIPT_MIN (500 datasets and processes)
    doc = {
        "datasets": [{"id": f"raw.t{i}", "namespace": "raw", "name": f"t{i}"} for i in range(500)],
        "processes": [
            {"id": f"p{i}", "name": f"p{i}", "inputs": [f"raw.t{2 * i}"], "outputs": [f"raw.t{2 * i + 1}"]}
            for i in range(250)
        ],
    }
    path = tmp_path / "big.lineage.json"
    path.write_text(json.dumps(doc))
    args = ["sync", "--domain", "rcpt", "--from", "graph", str(path)]
    first = run([*args, "--json"], env, tmp_path)
    assert json.loads(first.stdout)["by_receipt"] is False
    again = run(args, env, tmp_path)
    assert "Nothing to do: Atlas holds what the last sync of this input wrote" in again.stdout
    as_json = json.loads(run([*args, "--json"], env, tmp_path).stdout)
    assert as_json["by_receipt"] is True and as_json["plan"]["unchanged"] == 750
    assert as_json["applied"] is None
    # --refresh compares every entity (and finds nothing to write)
    refreshed = json.loads(run([*args, "--json", "--refresh"], env, tmp_path).stdout)
    assert refreshed["by_receipt"] is False and refreshed["plan"]["unchanged"] == 750
