"""Shared helpers of the Spark reader tests (imported as a plain module, like atlas_test_support)."""

from __future__ import annotations

from pathlib import Path

from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.readers.spark_plan import JSON_READER, TEXT_READER

DATA = Path(__file__).resolve().parents[2] / "data" / "spark"
FIXTURES = DATA / "fixtures"
FIXTURES35 = DATA / "fixtures35"
MORE = DATA / "more"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
SEED = DATA / "spark-plan-to-atlas.logical.txt"


def read_text_plan(plan: Path | str, /, **options: object) -> LineageGraph:
    return TEXT_READER.read([str(plan)], **options)


def read_json_plan(plan: Path | str, /, **options: object) -> LineageGraph:
    return JSON_READER.read([str(plan)], **options)


def direct_edges(g: LineageGraph) -> set[tuple[str, str, str, str]]:
    """(source dataset, source column, target column, kind) of every edge to a column."""
    return {
        (e.source.dataset, str(e.source.column), str(e.target.column), e.kind)
        for e in g.edges
        if e.target.column is not None and e.kind in ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
    }


def indirect_edges(g: LineageGraph) -> set[tuple[str, str, str]]:
    """(source dataset, source column, kind) of every edge aimed at the whole target."""
    return {(e.source.dataset, str(e.source.column), e.kind) for e in g.edges if e.target.column is None}
