"""A job's lifecycle in a domain it shares, driven as a user would (`atlas-sync` processes): `teardown
--job`, `rebuild --job` and a sync of a job to nothing, on the emulator over HTTP and on a real Atlas
(``ATLAS_URL``; CI's real-Atlas step). Job ``a`` reads ``t1`` into ``t2`` and ``t2`` into ``t3``; job ``b``
reads ``t2`` (which ``a`` created) into ``t4``. None of them may touch job ``b``'s entities.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient


def _doc(processes: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A graph document: each process (id, input, output) copies column ``a``."""
    names = sorted({n for _, i, o in processes for n in (i, o)})
    return {
        "datasets": [{"id": f"s.{n}", "namespace": "s", "name": n, "columns": ["a"]} for n in names],
        "processes": [
            {"id": p, "name": p, "inputs": [f"s.{i}"], "outputs": [f"s.{o}"]} for p, i, o in processes
        ],
        "columns": [
            {"source": f"s.{i}.a", "target": f"s.{o}.a", "kind": "IDENTITY", "process": p}
            for p, i, o in processes
        ],
    }


A = _doc([("load_t2", "t1", "t2"), ("load_t3", "t2", "t3")])
B = _doc([("load_t4", "t2", "t4")])
EMPTY: dict[str, Any] = {"datasets": [], "processes": [], "columns": []}
# Job a: 3 datasets, 3 columns, 2 processes, 2 column lineages (10); t2 and t2.a stay while b reads
# them, and pass to b when a goes. Job b: t4, t4.a, its process and column lineage (4).


@pytest.fixture
def domain(client: AtlasClient) -> Iterator[str]:
    name = "lifecycle" + uuid.uuid4().hex[:8]
    yield name
    Publisher(client, domain=name).teardown(purge=True)


@pytest.fixture
def env(client: AtlasClient) -> dict[str, str]:
    e = dict(os.environ)
    if not os.environ.get("ATLAS_URL") or client.base_url != os.environ["ATLAS_URL"].rstrip("/"):
        e = {k: v for k, v in e.items() if not k.startswith(("ATLAS_", "ATLAS_SYNC_"))}
        e.update({"ATLAS_URL": client.base_url, "ATLAS_USERNAME": "admin", "ATLAS_PASSWORD": "admin"})
    return e


def cli(env: dict[str, str], cwd: Path, *args: str, code: int = 0) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def write(tmp_path: Path, name: str, doc: dict[str, Any]) -> str:
    path = tmp_path / f"{name}.lineage.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def held(client: AtlasClient, domain: str) -> dict[str, tuple[Any, ...]]:
    """qualifiedName -> (guid, version, updateTime) of the domain's ACTIVE entities."""
    headers = Publisher(client, domain=domain).list_domain()
    # (not minExtInfo: an owned entity asked after its owner comes back with its name alone)
    got = client.get_entities([h.guid for h in headers.values()], ignore_relationships=True)
    return {
        e["attributes"]["qualifiedName"].removesuffix("@" + domain): (
            e["guid"],
            e.get("version"),
            e.get("updateTime"),
        )
        for e in got
        if e.get("status", "ACTIVE") == "ACTIVE"
    }


def of_b(entities: dict[str, tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
    return {k: v for k, v in entities.items() if "t4" in k}


def two_jobs(env: dict[str, str], tmp_path: Path, domain: str) -> None:
    cli(env, tmp_path, "sync", "-q", "-d", domain, "-j", "a", write(tmp_path, "a", A))
    cli(env, tmp_path, "sync", "-q", "-d", domain, "-j", "b", write(tmp_path, "b", B))


def test_teardown_of_a_job_deletes_what_it_owns_and_leaves_the_other_job_alone(
    client: AtlasClient, env: dict[str, str], tmp_path: Path, domain: str
) -> None:
    two_jobs(env, tmp_path, domain)
    before = held(client, domain)
    assert len(before) == 14 and len(of_b(before)) == 4

    shown = cli(env, tmp_path, "teardown", "-d", domain, "--job", "a", "--plan")
    assert f"Teardown of job a in domain {domain} (profile lineage):" in shown
    listed = [line for line in shown.splitlines() if line.startswith("  - ")]
    assert len(listed) == 8 and all(line.endswith(f"@{domain} (delete)") for line in listed)
    assert not [
        line for line in listed if "lineage_dataset s.t2@" in line or "lineage_column s.t2.a@" in line
    ]
    assert "Plan: 8 to delete, nothing purged (no --purge)." in shown
    assert "warning: 2 entities of job 'a' stay" in shown and "they pass to job 'b', which uses them" in shown
    assert held(client, domain) == before  # --plan writes nothing

    out = cli(env, tmp_path, "teardown", "-d", domain, "--job", "a", "--purge", "--yes")
    assert f"Teardown of job a in {domain}: 8 deleted, 8 purged" in out
    after = held(client, domain)
    # b's entities untouched (same guid, version and update time); a's shared t2 and t2.a kept, now b's
    assert of_b(after) == of_b(before)
    assert sorted(set(after) - set(of_b(after))) == ["s.t2", "s.t2.a"]
    assert after["s.t2"][0] == before["s.t2"][0] and after["s.t2.a"][0] == before["s.t2.a"][0]
    for type_name, qn in (("lineage_dataset", "s.t2"), ("lineage_column", "s.t2.a")):
        got = client.get_entity_by_unique(type_name, f"{qn}@{domain}")
        assert got is not None and got["attributes"]["atlasSyncJob"] == "b"

    again = cli(env, tmp_path, "teardown", "-d", domain, "--job", "a", "--purge", "--yes")
    assert f"Teardown of job a in {domain}: 0 deleted, 0 purged" in again
    assert held(client, domain) == after
    # b's sync finds them its own, unchanged
    assert "Nothing to do" in cli(env, tmp_path, "sync", "-d", domain, "-j", "b", write(tmp_path, "b", B))

    # b's teardown then takes them too: the domain is empty
    out = cli(env, tmp_path, "teardown", "-d", domain, "--job", "b", "--yes")
    assert f"Teardown of job b in {domain}: 6 deleted" in out
    assert held(client, domain) == {}


def test_rebuild_of_a_job_rebuilds_it_alone(
    client: AtlasClient, env: dict[str, str], tmp_path: Path, domain: str
) -> None:
    two_jobs(env, tmp_path, domain)
    before = held(client, domain)
    out = cli(env, tmp_path, "rebuild", "-d", domain, "--job", "a", write(tmp_path, "a", A), "--yes")
    assert f"Rebuilt job a in {domain}: 8 deleted, 8 created" in out
    after = held(client, domain)
    assert set(after) == set(before)
    assert of_b(after) == of_b(before)
    assert after["s.t1"][0] != before["s.t1"][0]  # a's own entities were made again


def test_a_job_synced_to_nothing_only_when_asked_and_says_so(
    client: AtlasClient, env: dict[str, str], tmp_path: Path, domain: str
) -> None:
    two_jobs(env, tmp_path, domain)
    before = held(client, domain)
    empty = write(tmp_path, "empty", EMPTY)
    # --force alone keeps the job: the message says what was skipped, not that Atlas matches
    out = cli(env, tmp_path, "sync", "-d", domain, "-j", "a", empty, "--force")
    assert "Nothing to do" not in out
    assert "Nothing written: 8 deletes skipped: the input produced nothing" in out
    assert held(client, domain) == before
    # --allow-empty: the job's entities go (the share of the domain still needs --force)
    cli(env, tmp_path, "sync", "-d", domain, "-j", "a", empty, "--allow-empty", code=1)
    out = cli(env, tmp_path, "sync", "-d", domain, "-j", "a", empty, "--allow-empty", "--force")
    assert "Applied: 0 created, 0 updated, 8 deleted" in out
    assert "warning: 2 entities of job 'a' stay" in out and "they pass to job 'b'" in out
    after = held(client, domain)
    assert of_b(after) == of_b(before)
    assert sorted(set(after) - set(of_b(after))) == ["s.t2", "s.t2.a"]
    again = cli(env, tmp_path, "sync", "-d", domain, "-j", "a", empty, "--allow-empty", "--force")
    assert "Nothing to do: Atlas already matches the input." in again


CARS = Path(__file__).resolve().parents[2] / "examples" / "spark-cars" / "cars.plan.txt"


def test_show_and_teardown_say_what_the_domain_holds_under_another_profile(
    client: AtlasClient, env: dict[str, str], tmp_path: Path, domain: str
) -> None:
    # the README's quick start, then the commands without --profile
    cli(env, tmp_path, "sync", "-q", "-d", domain, "--profile", "pico", str(CARS))
    try:
        shown = cli(env, tmp_path, "show", "-d", domain)
        assert shown == (
            "(no lineage under profile lineage; the domain holds 15 entities under profile pico "
            "(to see them: add --profile pico))\n"
        )
        planned = cli(env, tmp_path, "teardown", "-d", domain, "--plan")
        assert planned.splitlines() == [
            f"Teardown of domain {domain}: nothing to delete.",
            "note: the domain holds 15 entities under profile pico (they stay; to remove them too: add "
            "--profile pico)",
        ]
        done = cli(env, tmp_path, "teardown", "-d", domain, "--yes")
        assert "0 deleted" in done and "the domain holds 15 entities under profile pico" in done
        # with the profile it holds them, and nothing else is said
        assert "the domain holds" not in cli(env, tmp_path, "show", "-d", domain, "--profile", "pico")
    finally:
        Publisher(client, domain=domain, profile="pico").teardown(purge=True)
