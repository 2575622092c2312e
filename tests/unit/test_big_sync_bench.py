"""bench/big_sync.py writes issue 15's workload without building the graph: the same document as
``issue_graph(N).to_document()``, a 1%-changed variant that differs only in column types, and the
entity count the ``lineage`` profile renders from it."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from atlas_sync.render.profile import load_profile
from atlas_sync.render.renderer import render

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from big_sync import changed_datasets, expected_entities, write_issue_document  # noqa: E402
from issue_workload import issue_graph  # noqa: E402


@pytest.mark.parametrize("n", [1, 7, 60])
def test_the_streamed_document_is_the_workloads_document(n):
    out = io.StringIO()
    write_issue_document(out, n)
    assert out.getvalue() == json.dumps(issue_graph(n).to_document(), indent=2, ensure_ascii=False)


def test_the_changed_variant_changes_the_column_types_of_one_percent_of_the_datasets():
    n = 400
    changed = changed_datasets(n)
    assert len(changed) == 6  # ceil(1% of 200 sources + 400 outputs)
    base, variant = io.StringIO(), io.StringIO()
    write_issue_document(base, n)
    write_issue_document(variant, n, changed=changed)
    a, b = json.loads(base.getvalue()), json.loads(variant.getvalue())
    assert {k: v for k, v in a.items() if k != "datasets"} == {k: v for k, v in b.items() if k != "datasets"}
    differ = [i for i, (x, y) in enumerate(zip(a["datasets"], b["datasets"], strict=True)) if x != y]
    assert set(differ) == changed
    for i in differ:
        assert [c["type"] for c in b["datasets"][i]["columns"]] == [
            "changed_" + c["type"] for c in a["datasets"][i]["columns"]
        ]


def test_expected_entities_is_what_the_lineage_profile_renders():
    g = issue_graph(90)
    counts = {"datasets": len(g.datasets), "processes": len(g.processes), "edges": len(g.edges)}
    desired = render(g, load_profile("lineage"), domain="bench", job=g.job)
    assert expected_entities(counts) == len(desired.entities) == 12.5 * 90
