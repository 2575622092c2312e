"""Bad Power BI and Tableau files through the CLI as a user runs it (embedded emulator): a corrupt
.pbix, a truncated workbook, a TMDL file that does not parse are errors naming the file (one line, no
traceback, exit 1) and nothing of the batch is published; an M expression with a syntax error and an
unknown connector are warnings naming the file, the table (and the step), and nothing is guessed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data"
CLI = Path(sys.executable).parent / "atlas-sync"


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS")}
    return subprocess.run([str(CLI), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def _published(cwd: Path, domain: str) -> list[str]:
    res = _run(cwd, "show", "--domain", domain, "--format", "json")
    assert res.returncode == 0, res.stderr
    return [d.get("id") or d.get("qualifiedName") for d in json.loads(res.stdout)["datasets"]]


def _refused(res: subprocess.CompletedProcess[str], *named: str) -> None:
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert errors and all(n in errors[0] for n in named), res.stderr


def test_a_corrupt_pbix_is_an_error_naming_it_and_nothing_is_published(tmp_path: Path) -> None:
    (tmp_path / "bad.pbix").write_bytes((DATA / "powerbi" / "pbixray" / "abc.pbix").read_bytes()[:5000])
    _refused(_run(tmp_path, "sync", "--domain", "bad", "bad.pbix"), "bad.pbix", "corrupt or truncated")
    assert _published(tmp_path, "bad") == []


def test_a_corrupt_pbix_beside_a_good_project_fails_the_whole_batch(tmp_path: Path) -> None:
    shutil.copytree(DATA / "powerbi" / "shop", tmp_path / "both" / "shop")
    (tmp_path / "both" / "bad.pbix").write_bytes(b"PK\x03\x04 not really a zip")
    res = _run(tmp_path, "sync", "--from", "powerbi", "--domain", "bad", "both")
    _refused(res, "bad.pbix")
    assert "nothing was published" in res.stderr
    assert _published(tmp_path, "bad") == []  # not even the good project's tables


def test_a_truncated_workbook_is_an_error_naming_it_and_its_line(tmp_path: Path) -> None:
    text = (DATA / "tableau" / "shop.twb").read_text()
    (tmp_path / "cut.twb").write_text(text[: len(text) // 2])
    _refused(_run(tmp_path, "sync", "--domain", "bad", "cut.twb"), "cut.twb", "line ", "truncated")
    assert _published(tmp_path, "bad") == []


def test_a_tmdl_file_that_does_not_parse_fails_its_project(tmp_path: Path) -> None:
    shutil.copytree(DATA / "powerbi" / "shop", tmp_path / "shop")
    bad = tmp_path / "shop" / "Shop.SemanticModel" / "definition" / "tables" / "Targets.tmdl"
    bad.write_text("table Targets\n\tpartition Targets = m\n\t\tsource = ```\n\t\t\tlet\n")
    _refused(_run(tmp_path, "sync", "--domain", "bad", "shop"), "Targets.tmdl", "line 3")
    assert _published(tmp_path, "bad") == []


def test_an_m_syntax_error_and_an_unknown_connector_are_warnings_naming_file_table_and_step(
    tmp_path: Path,
) -> None:
    shutil.copytree(DATA / "powerbi" / "shop", tmp_path / "shop")
    tables = tmp_path / "shop" / "Shop.SemanticModel" / "definition" / "tables"
    customers = tables / "Customers.tmdl"
    customers.write_text(
        customers.read_text().replace("Value.NativeQuery(Source,", "Value.NativeQuery(Source,,")
    )
    (tmp_path / "map.toml").write_text('"warehouse.example.com/jaffle" = "jaffle"\n')
    res = _run(tmp_path, "sync", "--domain", "warn", "shop", "-o", "connection_map=map.toml")
    assert res.returncode == 0, res.stderr
    warnings = [line for line in (res.stdout + res.stderr).splitlines() if line.startswith("warning:")]
    assert any(
        "Customers.tmdl" in w and "table 'Customers'" in w and "does not parse" in w and "(line " in w
        for w in warnings
    ), warnings
    # Targets.tmdl reads an Excel workbook: a connector the reader does not know
    assert any(
        "Targets.tmdl" in w and "table 'Targets'" in w and "step 'Source'" in w and "Excel.Workbook" in w
        for w in warnings
    ), warnings
    published = _published(tmp_path, "warn")
    assert "powerbi:bi_dataset:Shop.Customers" in published
    # nothing guessed: no warehouse table behind Customers (its native query is the only one reading customers)
    assert "jaffle.main_marts.customers" not in published
