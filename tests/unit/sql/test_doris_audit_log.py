"""Doris's audit log (an export of __internal_schema.audit_log, tests/data/doris/audit_log.csv, its
rows modelled on the Doris lineage seed's example) through the query-log reader. Expectations
worked out by hand from the file."""

from __future__ import annotations

from pathlib import Path

from atlas_sync.lineage import registry
from atlas_sync.lineage.readers.query_log import READER

AUDIT = Path(__file__).resolve().parents[2] / "data" / "doris" / "audit_log.csv"


def test_writes_go_through_the_sql_reader_and_reads_become_per_user_read_lineage() -> None:
    graph = READER.read([str(AUDIT)], workers=1)
    by_id = {p.id.split(":", 1)[1]: p for p in graph.processes}
    assert len(by_id) == 3
    assert sorted(k for k in by_id if k.startswith("reads:")) == ["reads:analyst", "reads:auditor"]
    (write,) = [p for k, p in by_id.items() if not k.startswith("reads:")]
    # the INSERT, named as the SQL reader names it under the row's catalog and database
    assert write.outputs == ["internal.tpch.order_summary"]
    # its query was rewritten to a materialized view: the MV is an input too
    assert write.inputs == ["internal.tpch.orders", "internal.tpch.mv_order_totals"]
    assert write.attributes["materializedViews"] == ["internal.tpch.mv_order_totals"]
    cols = {(str(e.source), str(e.target), e.kind) for e in graph.edges if e.process == write.id}
    assert ("internal.tpch.orders.o_totalprice", "internal.tpch.order_summary.total", "AGGREGATION") in cols
    analyst = by_id["reads:analyst"]
    assert analyst.outputs == []
    assert analyst.inputs == [
        "internal.tpch.orders",
        "internal.tpch.nation",
        "internal.tpch.lineitem",
        "internal.tpch.mv_daily_revenue",
    ]
    assert analyst.attributes["queries"] == 3
    assert analyst.attributes["materializedViews"] == ["internal.tpch.mv_daily_revenue"]
    assert analyst.attributes["firstStartTime"] == "2026-05-09 10:14:22"
    assert analyst.attributes["lastStartTime"] == "2026-05-09 10:19:00"
    assert by_id["reads:auditor"].inputs == ["internal.tpch.customer"]
    # the failed INSERT (state ERR) and the internal query of root are left out
    assert not any("broken" in d.id or "audit_log" in d.id for d in graph.datasets)
    assert "reads:root" not in by_id
    kinds = {d.id: d.kind for d in graph.datasets}
    assert kinds["internal.tpch.mv_daily_revenue"] == kinds["internal.tpch.mv_order_totals"] == "view"


def test_an_audit_log_export_is_picked_by_auto() -> None:
    assert registry.detect(str(AUDIT)).name == "query-log"


def test_read_lineage_syncs_and_resyncs_to_nothing(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    env["ATLAS_SYNC_DATA_DIR"] = str(tmp_path / "atlas")
    cmd = [sys.executable, "-m", "atlas_sync.cli.main", "sync", "--domain", "doris", "--from", "query-log"]
    cmd += [str(AUDIT), "-o", "workers=1", "--json"]
    runs = [
        subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
        for _ in range(2)
    ]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr
    first, second = (json.loads(r.stdout) for r in runs)
    assert first["applied"]["created"] == first["plan"]["create"] > 0
    assert second["plan"]["create"] == second["plan"]["update"] == second["plan"]["delete"] == 0
