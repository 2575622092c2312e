"""Jobs of one domain that describe the same tables (dbt builds `main_marts.customers`, an SQL job and
BI jobs read it): a re-sync of any of them, with nothing changed, writes nothing.

Each reader knows its own part of a table (the SQL job two columns, numbered 0 and 1; a BI job the
columns its charts use) and renders it as it sees it. The table is its owner's (the job that created
it, ``atlasSyncJob``): the others only complete it, never rewrite what the owner wrote (docs/design.md,
"Shared datasets"). Before that rule the jobs rewrote the shared entities back and forth on every sync
(3 updates a sync with dbt and SQL, 10 with a Power BI job). Runs on the embedded emulator and, with
``ATLAS_URL`` (CI's real-Atlas step), against a real Atlas.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.config import load_settings
from atlas_sync.emulator import Emulator
from atlas_sync.factory import client_from_settings, embedded_client

DATA = Path(__file__).resolve().parents[1] / "data"
DBT = DATA / "dbt" / "artifacts" / "1.10"
SQL = "INSERT INTO jaffle.rpt.big SELECT customer_id, lifetime_value FROM jaffle.main_marts.customers;\n"
CUSTOMERS = "jaffle.main_marts.customers"


@pytest.fixture(params=["emulator", "real"])
def client(request: pytest.FixtureRequest) -> Any:
    """The embedded emulator, or the real Atlas that ``ATLAS_URL`` names."""
    if request.param == "real":
        if not os.environ.get("ATLAS_URL"):
            pytest.skip("needs a real Atlas (ATLAS_URL)")
        return client_from_settings(load_settings())
    return embedded_client(emulator=Emulator(None))


@pytest.fixture
def domain(client: Any) -> Iterator[str]:
    name = "shared" + uuid.uuid4().hex[:10]
    yield name
    for profile in ("lineage", "atlas"):
        Publisher(client, profile=profile, domain=name).teardown(purge=True)


def _publisher(client: Any, domain: str, profile: str = "lineage") -> Publisher:
    return Publisher(client, profile=profile, domain=domain)


def _sql_file(tmp_path: Path) -> Path:
    sql = tmp_path / "q.sql"
    sql.write_text(SQL, encoding="utf-8")
    return sql


def _jobs(tmp_path: Path) -> list[tuple[str, str, list[str], dict[str, Any]]]:
    """(job, reader, inputs, options): every reader whose test data reads the dbt project's tables."""
    return [
        ("dbt", "dbt", [str(DBT)], {}),
        ("sqljob", "sql", [str(_sql_file(tmp_path))], {"dialect": "duckdb"}),
        (
            "pbi",
            "powerbi",
            [str(DATA / "powerbi" / "shop")],
            {"connection_map": {"warehouse.example.com/jaffle": "jaffle"}},
        ),
        (
            "tab",
            "tableau",
            [str(DATA / "tableau" / "shop.twb")],
            {"connection_map": {"warehouse.example.com/jaffle": "jaffle"}},
        ),
        (
            "sup",
            "superset",
            [str(DATA / "superset" / "export-6.1.0.zip")],
            {"connection_map": {"t-Warehouse": "jaffle"}},
        ),
    ]


def test_a_dbt_resync_after_another_job_read_its_table_writes_nothing(
    tmp_path: Path, client: Any, domain: str
) -> None:
    pub = _publisher(client, domain)
    pub.sync(pub.read("dbt", [str(DBT)]), job="dbt")
    sql = _sql_file(tmp_path)
    pub.sync(pub.read("sql", [str(sql)], dialect="duckdb"), job="sqljob")
    again = pub.plan(pub.read("dbt", [str(DBT)]), "dbt")
    assert not again.has_changes, [i.key for i in again.by_action("update")]
    sql_again = pub.plan(pub.read("sql", [str(sql)], dialect="duckdb"), "sqljob")
    assert not sql_again.has_changes, [i.key for i in sql_again.by_action("update")]


def test_a_job_reading_another_jobs_table_leaves_the_owners_column_positions(
    tmp_path: Path, client: Any, domain: str
) -> None:
    pub = _publisher(client, domain)
    pub.sync(pub.read("dbt", [str(DBT)]), job="dbt")
    # the SQL job knows two of the table's six columns, and numbers lifetime_value 1
    plan = pub.plan(pub.read("sql", [str(_sql_file(tmp_path))], dialect="duckdb"), "sqljob")
    changed = [(i.qualified_name, c.attribute) for i in plan.by_action("update") for c in i.changes]
    assert all(attribute == "atlasSyncDigest" for _, attribute in changed), changed
    pub.sync(pub.read("sql", [str(_sql_file(tmp_path))], dialect="duckdb"), job="sqljob")
    column = client.get_entity_by_unique("lineage_column", f"{CUSTOMERS}.lifetime_value@{domain}")
    assert column["attributes"]["position"] == 5  # the sixth of dbt's columns
    assert column["attributes"]["atlasSyncJob"] == "dbt"


@pytest.mark.parametrize("profile", ["lineage", "atlas"])
def test_a_second_round_of_dbt_sql_and_bi_syncs_over_the_same_tables_writes_nothing(
    tmp_path: Path, client: Any, domain: str, profile: str
) -> None:
    pub = _publisher(client, domain, profile)
    jobs = _jobs(tmp_path)
    for job, reader, inputs, options in jobs:
        graph = pub.read(reader, inputs, **options)
        assert CUSTOMERS in {d.id for d in graph.datasets}, job  # (each reads the shared table)
        pub.sync(graph, job=job)
    for job, reader, inputs, options in jobs:
        plan = pub.plan(pub.read(reader, inputs, **options), job)
        changed = [
            (i.action, i.qualified_name) for i in plan.items if i.action in ("create", "update", "delete")
        ]
        assert changed == [], job
