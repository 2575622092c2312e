"""`atlas-sync show` on BI lineage read back from Atlas (the embedded emulator, CLI as a user runs it):
`show DASHBOARD` walks upstream to the warehouse tables, `--format html` draws BI datasets, charts and
dashboards as their own kind of node. The export is the real Superset one (tests/data/superset)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from atlas_sync.lineage.model import Dataset, LineageGraph
from atlas_sync.view.pictures import to_html

EXPORT = Path(__file__).resolve().parents[2] / "data" / "superset" / "export-6.1.0.zip"
CLI = Path(sys.executable).parent / "atlas-sync"
DASH = "superset:dashboard:cabf0a67-af9a-4bbc-afc5-16488c83262f"


def _run(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS")}
    res = subprocess.run([str(CLI), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("bi-show")
    shutil.copy(EXPORT, here / "export.zip")
    (here / "connections.toml").write_text('"t-Warehouse" = "jaffle"\n')
    _run(here, "sync", "--domain", "shop", "export.zip", "-o", "connection_map=connections.toml")
    return here


def test_show_dashboard_walks_upstream_to_the_source_tables(synced: Path) -> None:
    out = _run(synced, "show", "--domain", "shop", DASH, "--depth", "5")
    sources = set(re.findall(r"^  <- (jaffle\.\S+)$", out, flags=re.M))
    assert sources == {"jaffle.main_marts.customers", "jaffle.main_marts.fct_orders"}
    assert "lineage_process superset dashboard t Customer overview" in out
    assert out.count("lineage_process superset chart ") == 3


def test_show_html_draws_bi_objects_as_their_own_kind_of_node(synced: Path) -> None:
    _run(synced, "show", "--domain", "shop", DASH, "--format", "html", "--out", "d.html")
    html = (synced / "d.html").read_text()
    classes = re.findall(r'class="node (dataset[^"]*)"', html)
    assert classes.count("dataset bi dashboard") == 1
    assert classes.count("dataset bi chart") == 3
    assert classes.count("dataset bi bi_dataset") == 3
    assert classes.count("dataset") == 2  # the two warehouse tables
    assert ">dashboard</span>" in html and ">chart</span>" in html  # in the legend


def test_model_kinds_draw_the_same_as_atlas_types() -> None:
    g = LineageGraph(
        datasets=[Dataset(id="d", name="Sales", kind="dashboard"), Dataset(id="c", name="C", kind="bi_chart")]
    )
    html = to_html(g)
    assert 'class="node dataset bi dashboard"' in html and 'class="node dataset bi chart"' in html
    assert "\u25a6 dashboard" in html and "\u25d4 chart" in html


def test_sync_counts_the_input_warnings_in_its_summary_and_json(tmp_path: Path) -> None:
    import json

    shutil.copy(EXPORT, tmp_path / "export.zip")
    text = _run(tmp_path, "sync", "--domain", "w1", "export.zip")
    # no connection map: the unmapped database, and the virtual dataset's Jinja
    assert "Input: 2 warning(s), listed above" in text
    doc = json.loads(_run(tmp_path, "sync", "--domain", "w2", "export.zip", "--json"))
    assert len(doc["input_warnings"]) == 2
    assert any("t_big_customers" in w for w in doc["input_warnings"])
