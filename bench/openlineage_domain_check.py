"""A self-check of bench/openlineage_domain.py at a tiny size, for whoever changes the bench (not a test
of atlas-sync, not in the suite: ``.venv/bin/pytest bench/openlineage_domain_check.py``). A real
emulator (built, then restarted with latency), real `atlas-sync openlineage serve` processes and
producers, and figures that agree with each other and with what Atlas holds afterwards. (It lived in
tests/unit, where its ``> 0`` checks held for any run: what it tells is whether the bench still runs
and adds up.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import openlineage_domain  # noqa: E402

pytest.importorskip("openlineage.client")


def test_the_bench_syncs_every_event_into_both_domains_and_reports_consistent_figures(tmp_path, capsys):
    out = tmp_path / "figures.json"
    argv = ["--size", "500", "--events", "6", "--producers", "2", "--repeat", "1", "--out", str(out)]
    argv += ["--dir", str(tmp_path / "work")]
    assert openlineage_domain.main(argv) == 0

    rows = json.loads(out.read_text())["rows"]
    assert sorted(r["domain"] for r in rows) == [0, 500]
    for r in rows:
        assert r["synced"] == r["events"] == 6
        assert r["found"] == 6  # every job's process is in the emulator
        assert r["failed_attempts"] == 0
        assert r["events_per_s"] > 0
        assert r["events_per_s"] == pytest.approx(r["events"] / r["span_s"], rel=0.01)
        assert 0 < r["p50_s"] <= r["p95_s"] <= r["span_s"]
        assert r["server_p50_s"] is not None and r["server_p50_s"] > 0
        # each new job writes its datasets and columns, then its process and column lineages
        assert r["writes"] >= 2 * r["events"]
        assert r["requests"] > r["writes"]
        assert r["bytes_sent"] > 0 and r["bytes_received"] > 0
        assert r["server_cpu_ms"] > 0
    big = next(r for r in rows if r["domain"] == 500)
    empty = next(r for r in rows if r["domain"] == 0)
    assert big["from_bulk"] == 6  # the events' shared input is the bulk job's dataset
    assert empty["from_bulk"] == 0  # in the empty domain the first job that reads it creates it
    table = capsys.readouterr().out
    assert "rate(500) / rate(empty)" in table
    assert f"{big['events_per_s'] / empty['events_per_s']:.2f}" in table
