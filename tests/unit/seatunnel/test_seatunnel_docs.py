"""docs/seatunnel.md's connector table is generated from the connector registry (one source of truth)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _gen():
    spec = importlib.util.spec_from_file_location(
        "gen_seatunnel_docs", ROOT / "scripts" / "gen_seatunnel_docs.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_connector_table_in_docs_matches_the_registry():
    gen = _gen()
    page = (ROOT / "docs" / "seatunnel.md").read_text(encoding="utf-8")
    assert page == gen.render(page), (
        "docs/seatunnel.md is out of date: run python scripts/gen_seatunnel_docs.py"
    )


def test_generated_table_lists_every_connector_and_role():
    from atlas_sync.lineage.seatunnel.connectors import CONNECTORS

    table = _gen().generate()
    for c in CONNECTORS:
        for role, naming in (("source", c.source), ("sink", c.sink)):
            if naming is not None:
                assert f"| {c.name} | {role} |" in table


def test_a_stale_table_is_detected():
    gen = _gen()
    page = (ROOT / "docs" / "seatunnel.md").read_text(encoding="utf-8")
    stale = page.replace("| Kudu | sink |", "| Kudu | sink (old) |")
    assert stale != page and gen.render(stale) == page
