"""`atlas-sync typedefs plan|apply|delete|validate` run as a user would: processes against the
emulator over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.factory import embedded_client
from atlas_sync.typedefs import load_bundle

DATA = Path(__file__).resolve().parents[1] / "data" / "typedefs"
TYPEDEF_WRITES = {"POST", "PUT", "DELETE"}


def cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _spawn(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


@pytest.fixture()
def env(emulator_server: Any) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    return {**clean, "ATLAS_URL": emulator_server.url, "ATLAS_PASSWORD": "admin"}


def _typedef_writes(emulator: Any) -> list[tuple[str, str, int]]:
    return [
        (r.method, r.path, r.status)
        for r in emulator.request_log
        if r.method in TYPEDEF_WRITES and "/types/" in r.path
    ]


def _no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr


def test_plan_then_apply_then_plan_again(env: dict[str, str], emulator: Any, tmp_path: Path) -> None:
    names = load_bundle("lineage").names
    first = cli(["typedefs", "plan", "--profile", "lineage", "--detailed-exitcode"], env, tmp_path)
    assert first.returncode == 2, first.stderr
    lines = first.stdout.splitlines()
    assert lines[1].startswith("Order: ")
    assert {line.split()[1].rstrip(":") for line in lines if line.startswith("  + ")} == set(names)
    assert lines[-1] == f"Plan: {len(names)} to create, 0 to update, 0 unchanged, 0 incompatible."
    assert _typedef_writes(emulator) == []  # plan never writes

    applied = cli(["typedefs", "apply", "--profile", "lineage"], env, tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert f"{len(names)} created" in applied.stdout
    assert [(m, s) for m, _, s in _typedef_writes(emulator)] == [("POST", 200)]

    again = cli(["typedefs", "plan", "lineage", "--json", "--detailed-exitcode"], env, tmp_path)
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert doc["summary"] == {"create": 0, "update": 0, "unchanged": len(names), "incompatible": 0}
    assert {t["action"] for t in doc["types"]} == {"unchanged"}


def test_second_apply_reads_the_bundles_types_in_one_request_and_writes_nothing(
    env: dict[str, str], emulator: Any, tmp_path: Path
) -> None:
    assert cli(["typedefs", "apply", "pico"], env, tmp_path).returncode == 0
    emulator.clear_log()
    proc = cli(["typedefs", "apply", "pico"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "0 created, 0 updated" in proc.stdout
    typedef_calls = [r for r in emulator.request_log if "/types/" in r.path]
    # the bundle's serviceType (all in place: nothing of Atlas's DataSet or Process is read)
    assert [(r.method, r.path) for r in typedef_calls] == [("GET", "/api/atlas/v2/types/typedefs")]
    # not the whole type system (445 KiB): pico's 19 types
    assert typedef_calls[0].bytes_out < 64 * 1024


def test_incompatible_change_exits_1_without_writing(
    env: dict[str, str], emulator: Any, tmp_path: Path
) -> None:
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    v1.mkdir()
    v2.mkdir()
    note = {"name": "note", "typeName": "string", "isOptional": True}
    (v1 / "t.json").write_text(
        json.dumps({"entityDefs": [{"name": "t_cli", "superTypes": ["DataSet"], "attributeDefs": [note]}]})
    )
    (v2 / "t.json").write_text(
        json.dumps({"entityDefs": [{"name": "t_cli", "superTypes": ["DataSet"], "attributeDefs": []}]})
    )
    assert cli(["typedefs", "apply", str(v1)], env, tmp_path).returncode == 0
    emulator.clear_log()
    plan = cli(["typedefs", "plan", str(v2), "--detailed-exitcode"], env, tmp_path)
    assert plan.returncode == 1
    assert any(
        line.startswith("  ! t_cli") and "ATLAS-400-00-00D" in line for line in plan.stdout.splitlines()
    )
    apply = cli(["typedefs", "apply", str(v2)], env, tmp_path)
    assert apply.returncode == 1
    _no_traceback(apply)
    assert apply.stderr.startswith("error: t_cli: removes attribute note")
    assert _typedef_writes(emulator) == []


def test_bad_bundle_is_one_line_error_naming_the_file(
    env: dict[str, str], emulator: Any, tmp_path: Path
) -> None:
    proc = cli(["typedefs", "apply", str(DATA / "bad_redeclare")], env, tmp_path)
    assert proc.returncode == 1
    _no_traceback(proc)
    first = proc.stderr.splitlines()[0]
    assert "0010-seed.json" in first and "t_seed_process.inputs" in first and "ATLAS-400-00-09E" in first
    assert emulator.request_log == []  # refused before any request


def test_validate_lists_every_problem_offline(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    ok = cli(["typedefs", "validate", "pico", "lineage"], clean, tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("29 types OK in 4 files")  # pico 19, lineage 6, its BI part 4
    one = cli(["typedefs", "validate", str(DATA / "bad_dangling")], clean, tmp_path)  # one type, one file
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("1 type OK in 1 file\n")
    bad = cli(["typedefs", "validate", str(DATA / "bad_redeclare")], clean, tmp_path)
    assert bad.returncode == 1
    assert len([x for x in bad.stderr.splitlines() if "ATLAS-400-00-09E" in x]) == 2


def test_delete_refuses_in_use_types_then_deletes_with_entities(
    env: dict[str, str], emulator: Any, tmp_path: Path
) -> None:
    assert cli(["typedefs", "apply", "pico"], env, tmp_path).returncode == 0
    client = embedded_client(emulator=emulator)
    client.upsert_entities(
        [
            {
                "typeName": "pico_spark_data_type",
                "guid": "-1",
                "attributes": {"qualifiedName": "x@demo", "name": "x"},
            },
            {
                "typeName": "pico_spark_join_type",
                "guid": "-2",
                "attributes": {"qualifiedName": "j@demo", "name": "j"},
            },
        ]
    )
    emulator.clear_log()
    refused = cli(["typedefs", "delete", "pico", "--yes"], env, tmp_path)
    assert refused.returncode == 1
    _no_traceback(refused)
    assert "2 entities" in refused.stderr and "domain demo" in refused.stderr
    assert "--with-entities" in refused.stderr
    assert _typedef_writes(emulator) == []

    no_yes = cli(["typedefs", "delete", "pico", "--with-entities"], env, tmp_path)
    assert no_yes.returncode == 1 and "--yes" in no_yes.stderr

    done = cli(["typedefs", "delete", "pico", "--with-entities", "--yes", "--json"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["deleted"]
    assert result["entities_purged"] == 2
    assert sorted(result["deleted"]) == load_bundle("pico").names
    assert client.get_typedef_by_name("pico_spark_data_type") is None


def test_concurrent_apply_from_two_processes_both_succeed(
    env: dict[str, str], emulator: Any, tmp_path: Path
) -> None:
    names = load_bundle("lineage", "pico").names
    procs = [_spawn(["typedefs", "apply", "lineage", "pico"], env, tmp_path) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    posts = [s for m, _, s in _typedef_writes(emulator) if m == "POST"]
    assert posts.count(200) == 1  # the types were created exactly once
    assert set(posts) <= {200, 409}  # the loser saw "already exists", re-planned and found nothing to do
    final = cli(["typedefs", "plan", "lineage", "pico", "--detailed-exitcode"], env, tmp_path)
    assert final.returncode == 0, final.stdout
    assert (
        final.stdout.splitlines()[-1]
        == f"Plan: 0 to create, 0 to update, {len(names)} unchanged, 0 incompatible."
    )
