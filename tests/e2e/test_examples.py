"""Every example README's commands, run exactly as written in a copy of the example folder.

The ``sh`` blocks of each ``examples/<name>/README.md`` are run line by line with the installed
``atlas-sync`` against the embedded emulator (a fresh working directory, no ATLAS_* settings). Each
``text`` block (what the README says you will see) must appear in the output, line for line, so the
READMEs cannot drift; each example also has checks derived by hand from its input.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CLI = Path(sys.executable).parent / "atlas-sync"
NAMES = [
    "spark-cars",
    "sql",
    "openlineage",
    "pii-flow",
    "seatunnel",
    "whaletunnel",
    "dbt",
    "superset",
    "lookml",
    "powerbi",
    "tableau",
]


def blocks(readme: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", readme.read_text(encoding="utf-8"), flags=re.S)


def run_readme(name: str, workdir: Path) -> tuple[str, Path, list[str]]:
    """Run every command of the example's README in a copy of its folder.

    Returns all stdout, the folder, and each command's stdout."""
    here = workdir / name
    shutil.copytree(EXAMPLES / name, here)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS")}
    out = []
    for block in blocks(EXAMPLES / name / "README.md", "sh"):
        for line in block.strip().splitlines():
            argv = shlex.split(line)
            assert argv[0] == "atlas-sync", line
            res = subprocess.run(
                [str(CLI), *argv[1:]], cwd=here, env=env, capture_output=True, text=True, timeout=120
            )
            assert res.returncode == 0, f"{line}\n{res.stdout}\n{res.stderr}"
            out.append(res.stdout)
    return "\n".join(out), here, out


_RUNS: dict[str, tuple[str, Path, list[str]]] = {}


@pytest.fixture
def readme_run(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Run an example's README once per test session (the checks below share the run)."""

    def run(name: str) -> tuple[str, Path, list[str]]:
        if name not in _RUNS:
            _RUNS[name] = run_readme(name, tmp_path_factory.mktemp(name))
        return _RUNS[name]

    return run


def test_every_example_folder_has_a_readme_with_commands() -> None:
    folders = {p.name for p in EXAMPLES.iterdir() if p.is_dir() and p.name != "reader-plugin"}
    assert folders == set(NAMES)
    for name in NAMES:
        assert blocks(EXAMPLES / name / "README.md", "sh"), name


@pytest.mark.parametrize("name", NAMES)
def test_example_readme_commands_print_what_the_readme_says(name: str, readme_run) -> None:  # type: ignore[no-untyped-def]
    output, _, _ = readme_run(name)
    lines = set(output.splitlines())
    for block in blocks(EXAMPLES / name / "README.md", "text"):
        for line in block.rstrip("\n").splitlines():
            assert line in lines, f"README line not in the output: {line!r}\n--- output:\n{output}"


def test_spark_cars_example_publishes_the_seed_operator_tree(readme_run) -> None:  # type: ignore[no-untyped-def]
    _, here, outputs = readme_run("spark-cars")
    shown = outputs[1]  # atlas-sync show --domain cars --profile pico
    # The seed plan has seven operators: three Project, a Filter, a Union and two relations.
    for op, count in [
        ("project", 3),
        ("filter", 1),
        ("union", 1),
        ("logical_relation", 1),
        ("local_relation", 1),
    ]:
        assert len(re.findall(rf"^\W*pico_spark_{op}_type ", shown, flags=re.M)) == count, op
    # The pictures the README makes are complete pages.
    for page in ("cars.html", "cars-columns.html"):
        text = (here / page).read_text(encoding="utf-8")
        ET.fromstring(text[text.index("<svg") : text.index("</svg>") + 6])
    assert "model" in (here / "cars-columns.html").read_text(encoding="utf-8")
    # A second sync of the same input writes nothing.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS")}
    again = subprocess.run(
        [str(CLI), "sync", "--domain", "cars", "--profile", "pico", "cars.plan.txt"],
        cwd=here,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0 and "Nothing to do" in again.stdout


def test_sql_example_readme_shows_every_column_lineage_line_show_prints(readme_run) -> None:  # type: ignore[no-untyped-def]
    _, _, outputs = readme_run("sql")
    shown = outputs[1].splitlines()  # atlas-sync show --domain etl
    printed = shown[shown.index("column lineage:") + 1 :]
    (block,) = [b for b in blocks(EXAMPLES / "sql" / "README.md", "text") if "column lineage:" in b]
    written = block.splitlines()
    section = list(itertools.takewhile(lambda line: line.startswith("  "), printed))
    assert written[written.index("column lineage:") + 1 :] == section


def test_sql_example_picture_has_the_seed_column_lineage(readme_run) -> None:  # type: ignore[no-untyped-def]
    _, here, _ = readme_run("sql")
    page = (here / "etl.html").read_text(encoding="utf-8")
    svg = ET.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])
    tips = {(t.text or "").split(" (")[0] for t in svg.iter("{http://www.w3.org/2000/svg}title")}
    # From the seed: tab3.name <- tab1.name, tabb2.name (through concat).
    assert {
        "tab3.name ← tab1.name",
        "tab3.name ← tabb2.name",
        "tab3.id ← tab1.id",
        "tab3.age ← tabb2.age",
    } <= tips


@pytest.mark.pyspark
def test_cars_pyspark_script_prints_a_plan_atlas_sync_reads(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("needs Java for PySpark")
    from atlas_sync.lineage import registry

    here = tmp_path / "spark-cars"
    shutil.copytree(EXAMPLES / "spark-cars", here)
    (here / "cars.plan.txt").unlink()
    subprocess.run([sys.executable, "cars_job.py"], cwd=here, check=True, capture_output=True, timeout=300)
    g = registry.read("spark-plan", [str(here / "cars.plan.txt")], mode="operator")
    ops = sorted(p.operator or "" for p in g.processes)
    assert ops.count("Project") >= 2 and "Filter" in ops and "Union" in ops


def test_dbt_example_is_the_test_projects_artifacts_and_syncs_every_relation(readme_run) -> None:  # type: ignore[no-untyped-def]
    # the example's target/ is the dbt 1.10 artifact set of the tests (tests/data/dbt/README.md)
    for name in ("manifest.json", "catalog.json", "run_results.json"):
        kept = ROOT / "tests" / "data" / "dbt" / "artifacts" / "1.10" / name
        assert (EXAMPLES / "dbt" / "target" / name).read_bytes() == kept.read_bytes(), name
    _, _, outs = readme_run("dbt")
    # 14 relations, 70 columns, 12 processes, 54 column lineages (tests/e2e/test_dbt_sync.py)
    assert "Applied: 150 created, 0 updated, 0 deleted" in outs[0]
    shown = outs[1]
    for process in ("customers", "orders", "stg_payments", "customers_snapshot", "raw_orders"):
        assert f"lineage_process {process}\n" in shown, process
    assert "int_order_payments" not in shown  # ephemeral: no relation, no process


def test_pii_flow_example_tags_the_email_column_and_atlas_propagates_it_downstream(readme_run) -> None:  # type: ignore[no-untyped-def]
    # job.sql: raw.customers.email -> stage.customers.email -> mart.contacts.email (lower()); the rule
    # tags raw.customers.email only and gives it the term Email; ids and country carry no email
    _, _, outputs = readme_run("pii-flow")
    lines = outputs[-2].splitlines()  # what `show` printed (the last command writes the picture)
    start = lines.index("classified (own and propagated classifications; glossary terms):")
    section = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        section.append(line)
    assert section == [
        "  mart.contacts.email: PII",
        "  raw.customers.email: PII; terms: Email",
        "  stage.customers.email: PII",
    ]


class _Tree(HTMLParser):
    """A small element tree of an HTML page (tag, attributes, children, text), enough to read the SVG."""

    def __init__(self) -> None:
        super().__init__()
        self.root: dict[str, Any] = {"tag": "", "attrs": {}, "children": [], "text": ""}
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = {"tag": tag, "attrs": {k: v or "" for k, v in attrs}, "children": [], "text": ""}
        self.stack[-1]["children"].append(node)
        if tag != "meta":  # the page's only void element not written as <x/>
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1]["children"].append({"tag": tag, "attrs": dict(attrs), "children": [], "text": ""})

    def handle_endtag(self, tag: str) -> None:
        if any(n["tag"] == tag for n in self.stack[1:]):
            while self.stack.pop()["tag"] != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.stack[-1]["text"] += data


def _all(node: dict[str, Any], pred: Any) -> list[dict[str, Any]]:
    out = [node] if pred(node) else []
    for c in node["children"]:
        out += _all(c, pred)
    return out


def _classes(node: dict[str, Any]) -> set[str]:
    return set(node["attrs"].get("class", "").split())


def test_pii_flow_picture_marks_the_three_email_columns_own_and_propagated(readme_run) -> None:  # type: ignore[no-untyped-def]
    # by hand from job.sql and rules.toml: the rule tags raw.customers.email (own PII, term Email);
    # Atlas propagates PII to stage.customers.email and mart.contacts.email; no other column or table
    _, here, _ = readme_run("pii-flow")
    page = _Tree()
    page.feed((here / "pii-flow.html").read_text(encoding="utf-8"))
    marks: dict[str, tuple[str, str, str, list[tuple[str, str]]]] = {}
    tables = _all(page.root, lambda n: n["tag"] == "g" and {"node", "dataset"} <= _classes(n))
    for table in tables:
        (title,) = [t["text"] for t in table["children"] if t["tag"] == "text" and "t" in _classes(t)]
        assert "classified" in _classes(table), title  # each of the three has a marked column
        assert not {"data-own", "data-propagated", "data-terms"} & set(table["attrs"]), title  # no table is
        for row in _all(table, lambda n: n["tag"] == "g" and "row" in _classes(n)):
            (text,) = [t for t in row["children"] if t["tag"] == "text"]
            a = row["attrs"]
            spans = [(sorted(_classes(s) - {"mark"})[0], s["text"]) for s in text["children"]]
            marks[f"{title}.{text['text']}"] = (
                a.get("data-own", ""),
                a.get("data-propagated", ""),
                a.get("data-terms", ""),
                spans,
            )
    assert sorted(marks) == [
        "mart.contacts.email",
        "mart.contacts.id",
        "raw.customers.country",
        "raw.customers.email",
        "raw.customers.id",
        "stage.customers.country",
        "stage.customers.email",
        "stage.customers.id",
    ]
    assert marks.pop("raw.customers.email") == (
        "PII",
        "",
        "Email",
        [("own", "\u00a0\u25cfPII"), ("term", "\u00a0\u25aaEmail")],
    )
    for name in ("stage.customers.email", "mart.contacts.email"):
        assert marks.pop(name) == ("", "PII", "", [("propagated", "\u00a0\u25cbPII")]), name
    assert all(m == ("", "", "", []) for m in marks.values()), marks  # the others carry none
    legend = (here / "pii-flow.html").read_text(encoding="utf-8")
    assert "own classification</span>" in legend and "propagated classification</span>" in legend


@pytest.mark.slow
def test_reader_plugin_readme_runs_inside_its_folder(tmp_path: Path) -> None:
    """As examples/README.md says: each command run inside the (copied) folder; `pip install` into a
    temporary target, not this environment."""
    here = tmp_path / "reader-plugin"
    shutil.copytree(EXAMPLES / "reader-plugin", here)
    target = tmp_path / "site"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS")} | {"PYTHONPATH": str(target)}
    out = []
    for line in blocks(EXAMPLES / "reader-plugin" / "README.md", "sh")[0].strip().splitlines():
        argv = shlex.split(line, comments=True)
        if argv[:2] == ["pip", "install"]:
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--target",
                str(target),
                *argv[2:],
            ]
        else:
            assert argv[0] == "atlas-sync", line
            cmd = [str(CLI), *argv[1:]]
        res = subprocess.run(cmd, cwd=here, env=env, capture_output=True, text=True, timeout=300)
        if res.returncode != 0 and "NewConnectionError" in res.stderr:
            pytest.skip("package index unreachable to build the example plugin")
        assert res.returncode == 0, f"{line}\n{res.stdout}\n{res.stderr}"
        out.append(res.stdout)
    lines = set("\n".join(out).splitlines())
    for block in blocks(EXAMPLES / "reader-plugin" / "README.md", "text"):
        for line in block.rstrip("\n").splitlines():
            assert line in lines, f"README line not in the output: {line!r}"


def test_superset_example_reaches_the_warehouse_tables_and_draws_bi_nodes(readme_run) -> None:  # type: ignore[no-untyped-def]
    _, here, outputs = readme_run("superset")
    # from the export: the dashboard's three charts, over datasets on main_marts.customers and fct_orders
    assert set(re.findall(r"^  <- (jaffle\.\S+)$", outputs[1], flags=re.M)) == {
        "jaffle.main_marts.customers",
        "jaffle.main_marts.fct_orders",
    }
    page = (here / "dashboard.html").read_text(encoding="utf-8")
    assert (
        page.count('class="node dataset bi chart"') == 3
        and page.count('class="node dataset bi dashboard"') == 1
    )


def test_lookml_example_reaches_the_warehouse_tables(readme_run) -> None:  # type: ignore[no-untyped-def]
    _, _, outputs = readme_run("lookml")
    # the overview's elements use the orders explore: orders joined to customers
    assert set(re.findall(r"^  <- (jaffle\.\S+)$", outputs[1], flags=re.M)) == {
        "jaffle.main_marts.fct_orders",
        "jaffle.main_marts.customers",
    }


def test_powerbi_example_reaches_the_warehouse_tables(readme_run) -> None:  # type: ignore[no-untyped-def]
    _, _, outputs = readme_run("powerbi")
    # Orders navigates to fct_orders, Customers is a native query on customers (by hand from the TMDL)
    assert set(re.findall(r"^  <- (jaffle\.\S+)$", outputs[1], flags=re.M)) == {
        "jaffle.main_marts.fct_orders",
        "jaffle.main_marts.customers",
    }


def test_tableau_example_reaches_the_warehouse_tables(readme_run) -> None:  # type: ignore[no-untyped-def]
    _, _, outputs = readme_run("tableau")
    assert set(re.findall(r"^  <- (jaffle\.\S+)$", outputs[1], flags=re.M)) == {
        "jaffle.main_marts.fct_orders",
        "jaffle.main_marts.customers",
    }
