"""A dbt project, a Power BI project (PBIP) and a Tableau workbook over the same warehouse tables, synced
with the CLI into one domain of the embedded emulator as a user would: one entity per table, and `show`
walks from a visual or a sheet through the BI objects and the tables to the dbt models' sources."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data"
CLI = Path(sys.executable).parent / "atlas-sync"
VISUAL = "powerbi:chart:Shop.a1b2c3d4e5f6.v0001"  # Orders: Order date, Total Sales
SHEET = "tableau:chart:shop.Big spenders"  # custom SQL over customers and fct_orders


def _run(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS")}
    res = subprocess.run([str(CLI), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("bi-files")
    shutil.copytree(DATA / "powerbi" / "shop", here / "pbip")
    shutil.copy(DATA / "tableau" / "shop.twb", here / "shop.twb")
    (here / "connections.toml").write_text('"warehouse.example.com/jaffle" = "jaffle"\n')
    _run(here, "sync", "--domain", "shop", str(DATA / "dbt" / "artifacts" / "1.10"))
    _run(here, "sync", "--domain", "shop", "pbip", "-o", "connection_map=connections.toml")
    _run(here, "sync", "--domain", "shop", "shop.twb", "-o", "connection_map=connections.toml")
    return here


def test_one_entity_per_warehouse_table_across_dbt_powerbi_and_tableau(synced: Path) -> None:
    doc = json.loads(_run(synced, "show", "--domain", "shop", "--format", "json"))
    names = [d.get("id") or d.get("qualifiedName") for d in doc["datasets"]]
    for table in ("jaffle.main_marts.fct_orders", "jaffle.main_marts.customers"):
        assert names.count(table) == 1, table


def test_show_walks_from_a_power_bi_visual_to_the_dbt_sources(synced: Path) -> None:
    out = _run(synced, "show", "--domain", "shop", VISUAL, "--depth", "12")
    assert "lineage_process powerbi table Orders" in out
    assert re.search(r"^  <- jaffle\.main_marts\.fct_orders$", out, flags=re.M)
    # and on through the dbt model that builds fct_orders to its staging models
    assert re.search(r"^  <- jaffle\.main\.stg_orders$", out, flags=re.M)


def test_show_walks_from_a_tableau_sheet_through_custom_sql_to_the_dbt_sources(synced: Path) -> None:
    out = _run(synced, "show", "--domain", "shop", SHEET, "--depth", "12")
    assert "lineage_process tableau data source Big spenders (custom SQL)" in out
    assert re.search(r"^  <- jaffle\.main_marts\.customers$", out, flags=re.M)
    assert re.search(r"^  <- jaffle\.main\.stg_customers$", out, flags=re.M)
