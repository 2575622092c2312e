from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from atlas_sync.lineage.sql.analyze import StatementLineage
from atlas_sync.lineage.sql.script import analyze_sql


def one(sql: str, dialect: str = "spark", **kw: Any) -> StatementLineage:
    """The lineage of a single-statement script."""
    results = analyze_sql(sql, dialect=dialect, **kw)
    assert len(results) == 1, [r.type for r in results]
    return results[0]


def triples(st: StatementLineage, kinds: set[str] | None = None) -> set[tuple[str, str, str]]:
    """Edges as ("src.col", "tgt.col" or "tgt.*", KIND)."""
    return {
        (f"{e.source}.{e.source_column}", f"{e.target}.{e.target_column or '*'}", e.kind)
        for e in st.edges
        if kinds is None or e.kind in kinds
    }


DIRECT = {"IDENTITY", "TRANSFORMATION", "AGGREGATION"}


@pytest.fixture
def lineage() -> Any:
    def run(
        sql: str, dialect: str = "spark", schema: Mapping[str, list[str]] | None = None, **kw: Any
    ) -> Any:
        return one(sql, dialect, schema=schema, **kw)

    return run
