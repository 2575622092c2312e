"""Lineage pictures (DOT/SVG/HTML): structure, layout, escaping.

Inputs are the seed's Spark plan and every shared Spark fixture (repo copies under tests/data/spark),
read by the spark-plan reader in operator and job mode, plus small hand-made graphs.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from atlas_sync.cli.main import cli
from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import ColumnEdge, ColumnRef, Dataset, LineageGraph, Process
from atlas_sync.view import pictures

DATA = Path(__file__).resolve().parents[2] / "data"
SEED = DATA / "spark" / "spark-plan-to-atlas.logical.txt"
FIXTURES = sorted((DATA / "spark" / "fixtures").glob("*/analyzed.txt"))
SEED_SQL = Path(__file__).resolve().parents[3] / "examples" / "sql" / "etl.sql"
SVG = "{http://www.w3.org/2000/svg}"


def read_plan(path: Path, mode: str) -> LineageGraph:
    return registry.read("spark-plan", [str(path)], mode=mode)


def parse_svg(text: str) -> tuple[dict[str, str], set[tuple[str, str]], list[ET.Element]]:
    """(node key -> graph id, set of (src id, dst id) arrows, node elements) of an SVG picture."""
    root = ET.fromstring(text)
    ids: dict[str, str] = {}
    elements = []
    for g in root.iter(SVG + "g"):
        if "node" in (g.get("class") or "").split():
            title = g.find(SVG + "title")
            assert title is not None and title.text
            ids[g.get("data-k", "")] = title.text.split("\n")[0]
            elements.append(g)
    arrows = set()
    for p in root.iter(SVG + "path"):
        if "flow" in (p.get("class") or "").split():
            arrows.add((ids[p.get("data-s", "")], ids[p.get("data-t", "")]))
    return ids, arrows, elements


def boxes(elements: list[ET.Element]) -> list[tuple[float, float, float, float]]:
    out = []
    for g in elements:
        m = re.match(r"translate\(([-\d.]+),([-\d.]+)\)", g.get("transform", ""))
        rect = g.find(SVG + "rect")
        assert m and rect is not None
        x, y = float(m.group(1)), float(m.group(2))
        out.append((x, y, x + float(rect.get("width", 0)), y + float(rect.get("height", 0))))
    return out


def assert_no_overlap(bs: list[tuple[float, float, float, float]]) -> None:
    for i, a in enumerate(bs):
        for b in bs[i + 1 :]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, f"boxes overlap: {a} {b}"


# ------------------------------------------------------------------------------- the seed example
def test_seed_operator_tree_is_drawn_as_the_plan_tree() -> None:
    g = read_plan(SEED, "operator")
    ids, arrows, elements = parse_svg(pictures.render(g, "svg"))
    # The seed plan, by hand: both relations read the input; 6_0 feeds 5_1; 5_0 and 5_1 feed the
    # union 4_0; then Filter 3_0, Project 2_0, Project 1_0, which writes the output.
    expected = {
        ("input", "5_0"),
        ("input", "6_0"),
        ("6_0", "5_1"),
        ("5_0", "4_0"),
        ("5_1", "4_0"),
        ("4_0", "3_0"),
        ("3_0", "2_0"),
        ("2_0", "1_0"),
        ("1_0", "output"),
    }
    assert arrows == expected
    assert set(ids.values()) == {"input", "output", "1_0", "2_0", "3_0", "4_0", "5_0", "5_1", "6_0"}
    # Left to right: every arrow points rightwards.
    x = {ids[g.get("data-k", "")]: b[0] for g, b in zip(elements, boxes(elements), strict=True)}
    assert all(x[a] < x[b] for a, b in expected)
    assert_no_overlap(boxes(elements))


def test_seed_operator_labels_name_operator_and_level() -> None:
    svg = pictures.render(read_plan(SEED, "operator"), "svg")
    root = ET.fromstring(svg)
    texts = {t.text for t in root.iter(SVG + "text")}
    for label in (
        "Project [1_0]",
        "Filter [3_0]",
        "Union [4_0]",
        "LogicalRelation [5_0]",
        "LocalRelation [6_0]",
    ):
        assert label in texts
    assert "NOT (manufacturer#18 = Audi)" in texts


def test_seed_job_mode_has_one_process_between_sources_and_result() -> None:
    g = read_plan(SEED, "job")
    ids, arrows, _ = parse_svg(pictures.render(g, "svg"))
    job = g.processes[0]
    assert {(i, job.id) for i in job.inputs} | {(job.id, o) for o in job.outputs} == arrows
    assert len(job.inputs) == 2 and len(job.outputs) == 1


def test_seed_columns_show_every_column_and_the_column_lineage() -> None:
    g = read_plan(SEED, "job")
    root = ET.fromstring(pictures.render(g, "svg", columns=True))
    rows = [t.text for t in root.iter(SVG + "text") if t.get("font-size") == str(pictures.SMALL_SIZE + 1)]
    for d in g.datasets:
        for c in d.columns:
            assert c.name in rows
    cols = [p for p in root.iter(SVG + "path") if "col" in (p.get("class") or "").split()]
    assert len(cols) == len({(e.source, e.target, e.kind) for e in g.edges}) > 0


def test_sql_seed_columns_match_the_seed_lineage() -> None:
    g = registry.read("sql", [str(SEED_SQL)], dialect="spark")
    root = ET.fromstring(pictures.render(g, "svg", columns=True))
    tips = {
        (p.find(SVG + "title").text or "").split(" (")[0]  # type: ignore[union-attr]
        for p in root.iter(SVG + "path")
        if "identity" in (p.get("class") or "") or "transformation" in (p.get("class") or "")
    }
    # From the seed README: tab3.id <- tab1.id, tab3.name <- tab1.name, tabb2.name, tab3.age <- tabb2.age
    want = {"tab3.id ← tab1.id", "tab3.name ← tab1.name", "tab3.name ← tabb2.name", "tab3.age ← tabb2.age"}
    assert want <= tips


# ------------------------------------------------------------------------------- shared fixtures
@pytest.mark.parametrize("mode", ["operator", "job"])
@pytest.mark.parametrize("plan", FIXTURES, ids=lambda p: p.parent.name)
def test_every_fixture_renders_every_node_and_arrow(plan: Path, mode: str) -> None:
    g = read_plan(plan, mode)
    ids, arrows, elements = parse_svg(pictures.render(g, "svg"))
    drawn = set(ids.values())
    assert {p.id for p in g.processes} <= drawn
    intermediates = {d.id for d in g.datasets if d.kind == "intermediate"}
    assert {d.id for d in g.datasets} - intermediates <= drawn
    for p in g.processes:
        for i in p.inputs:
            if i not in intermediates:
                assert (i, p.id) in arrows
        for o in p.outputs:
            if o not in intermediates:
                assert (p.id, o) in arrows
        # An operator feeds its parent (through a folded intermediate result).
        if p.parent:
            assert (p.id, p.parent) in arrows
    assert_no_overlap(boxes(elements))


@pytest.mark.parametrize("plan", FIXTURES, ids=lambda p: p.parent.name)
def test_every_fixture_html_and_dot_are_well_formed(plan: Path) -> None:
    g = read_plan(plan, "operator")
    page = pictures.render(g, "html", columns=True)
    svg = page[page.index("<svg") : page.index("</svg>") + 6]
    ET.fromstring(svg)
    assert page.count("<script>") == 1
    check_dot(pictures.render(g, "dot", columns=True))
    check_dot(pictures.render(g, "dot"))


# ------------------------------------------------------------------------------- DOT syntax
_DOT_TOKEN = re.compile(
    r'\s+|//[^\n]*|"(?:\\.|[^"\\])*"|[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?|->|[{}\[\];,=:]'
)


def dot_tokens(text: str) -> list[str]:
    """Tokens of a DOT text; HTML-like <...> labels are taken whole (balanced brackets)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "<":
            depth, j = 0, i
            while True:
                depth += {"<": 1, ">": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            out.append(text[i:j])
            i = j
            continue
        m = _DOT_TOKEN.match(text, i)
        assert m, f"bad DOT at {text[i : i + 40]!r}"
        if not m.group(0).isspace():
            out.append(m.group(0))
        i = m.end()
    return out


def check_dot(text: str) -> list[str]:
    toks = dot_tokens(text)
    assert toks[:3] == ["digraph", "lineage", "{"] and toks[-1] == "}"
    assert toks.count("[") == toks.count("]")
    for t in toks:
        if t.startswith("<"):
            ET.fromstring(t[1:-1])  # HTML-like labels are XML
    return toks


def unquote_dot(tok: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), tok[1:-1])


# ------------------------------------------------------------------------------- hostile names
HOSTILE = 'x</title></svg><script>alert("1")</script>&amp;\'"\\N\\l\x01\nnext'


def hostile_graph() -> LineageGraph:
    g = LineageGraph(job=HOSTILE)
    g.add_dataset(Dataset(id=HOSTILE, name=HOSTILE, columns=[HOSTILE, "b"]))
    g.add_dataset(Dataset(id="out", name="out", columns=["c"]))
    g.add_process(Process(id="p", name=HOSTILE, inputs=[HOSTILE], outputs=["out"]))
    g.add_edge(
        ColumnEdge(
            source=ColumnRef(dataset=HOSTILE, column=HOSTILE),
            target=ColumnRef(dataset="out", column="c"),
            kind="TRANSFORMATION",
            expression=HOSTILE,
        )
    )
    return g


@pytest.mark.parametrize("columns", [False, True])
def test_hostile_names_stay_text_in_svg(columns: bool) -> None:
    svg = pictures.render(hostile_graph(), "svg", columns=columns)
    root = ET.fromstring(svg.split("\n", 1)[1])
    assert not any(el.tag.endswith("script") for el in root.iter())
    titles = [t.text or "" for t in root.iter(SVG + "title")]
    # The control character is replaced; everything else arrives as written.
    assert any(t.startswith(HOSTILE.replace("\x01", "\ufffd")) for t in titles)


def test_hostile_names_stay_text_in_html() -> None:
    page = pictures.render(hostile_graph(), "html", columns=True)
    assert page.count("<script") == 1
    assert "<script>alert" not in page
    body = page[page.index("<svg") : page.index("</svg>") + 6]
    ET.fromstring(body)


@pytest.mark.parametrize("columns", [False, True])
def test_hostile_names_stay_inside_dot_strings(columns: bool) -> None:
    toks = check_dot(pictures.render(hostile_graph(), "dot", columns=columns))
    strings = [unquote_dot(t) for t in toks if t.startswith('"')]
    clean = HOSTILE.replace("\x01", "\ufffd")
    assert any(clean in s for s in strings)
    if columns:
        labels = [t for t in toks if t.startswith("<<")]
        texts = ["".join(ET.fromstring(t[1:-1]).itertext()) for t in labels]
        assert any(clean in t for t in texts)


# ------------------------------------------------------------------------------- other shapes
def test_a_cycle_still_lays_out_every_node() -> None:
    g = LineageGraph()
    for name in ("a", "b"):
        g.add_dataset(Dataset(id=name, name=name))
    g.add_process(Process(id="p1", name="p1", inputs=["a"], outputs=["b"]))
    g.add_process(Process(id="p2", name="p2", inputs=["b"], outputs=["a"]))
    g.add_process(Process(id="p3", name="p3", inputs=["a"], outputs=["a"]))
    ids, arrows, elements = parse_svg(pictures.render(g, "svg"))
    assert set(ids.values()) == {"a", "b", "p1", "p2", "p3"}
    assert arrows == {("a", "p1"), ("p1", "b"), ("b", "p2"), ("p2", "a"), ("a", "p3"), ("p3", "a")}
    assert_no_overlap(boxes(elements))


def test_long_edges_route_around_the_boxes_they_skip() -> None:
    # a -> p1 -> m -> p2 -> z and a -> p3 -> z: the a -> p3 or p3 -> z arrow spans layers.
    g = LineageGraph()
    for name in ("a", "m", "z"):
        g.add_dataset(Dataset(id=name, name=name))
    g.add_process(Process(id="p1", name="p1", inputs=["a"], outputs=["m"]))
    g.add_process(Process(id="p2", name="p2", inputs=["m"], outputs=["z"]))
    g.add_process(Process(id="p3", name="p3", inputs=["a"], outputs=["z"]))
    scene = pictures.layout(g)
    real = [n for n in scene.nodes.values() if n.role != "dummy"]
    for lk in scene.links:
        for x, y in lk.points[1:-1]:
            for n in real:
                inside = n.x < x < n.x + n.width and n.y < y < n.y + n.height
                assert not inside, f"{lk.src}->{lk.dst} passes through {n.key}"


def test_datasets_named_only_by_processes_are_drawn() -> None:
    g = LineageGraph()
    g.add_process(Process(id="p", name="p", inputs=["ghost"]))
    ids, arrows, _ = parse_svg(pictures.render(g, "svg"))
    assert arrows == {("ghost", "p")}


def test_operator_children_without_datasets_between_them_are_linked() -> None:
    g = LineageGraph()
    g.add_process(Process(id="root", name="root", kind="operator", operator="Project", children=["leaf"]))
    g.add_process(Process(id="leaf", name="leaf", kind="operator", operator="Relation", parent="root"))
    _, arrows, _ = parse_svg(pictures.render(g, "svg"))
    assert arrows == {("leaf", "root")}


def test_column_lineage_without_processes_orders_datasets() -> None:
    g = LineageGraph()
    g.add_dataset(Dataset(id="t", name="t", columns=["y"]))
    g.add_dataset(Dataset(id="s", name="s", columns=["x"]))
    g.add_edge(
        ColumnEdge(
            source=ColumnRef(dataset="s", column="x"),
            target=ColumnRef(dataset="t", column="y"),
            kind="IDENTITY",
        )
    )
    scene = pictures.layout(g, columns=True)
    by_title = {n.title: n for n in scene.nodes.values()}
    assert by_title["s"].x < by_title["t"].x
    assert "constraint=false" not in pictures.render(g, "dot", columns=True)


def test_empty_graph_gives_a_valid_picture() -> None:
    svg = pictures.render(LineageGraph(), "svg")
    root = ET.fromstring(svg.split("\n", 1)[1])
    assert "(no lineage)" in [t.text for t in root.iter(SVG + "text")]
    check_dot(pictures.render(LineageGraph(), "dot"))


def test_html_page_loads_nothing_from_the_network() -> None:
    page = pictures.render(read_plan(SEED, "operator"), "html")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"\b(src|href)\s*=", page)
    assert re.findall(r"https?://[^\"' ]+", page) == ["http://www.w3.org/2000/svg"]


def test_long_labels_are_shortened_in_the_middle() -> None:
    name = "warehouse." + "x" * 80 + ".orders"
    short = pictures.shorten(name)
    assert len(short) == pictures.MAX_LABEL
    assert short.startswith("warehouse.") and short.endswith(".orders") and "…" in short


def test_unknown_format_is_an_input_error() -> None:
    with pytest.raises(InputError):
        pictures.render(LineageGraph(), "png")


def test_cli_lineage_writes_html_with_columns(tmp_path: Path) -> None:
    out = tmp_path / "seed.html"
    res = CliRunner().invoke(
        cli,
        [
            "lineage",
            "spark-plan",
            str(SEED),
            "--mode",
            "job",
            "--format",
            "html",
            "--columns",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    page = out.read_text(encoding="utf-8")
    assert 'class="link col' in page and page.startswith("<!DOCTYPE html>")


def classified_graph() -> LineageGraph:
    from atlas_sync.lineage.model import Classification, Column

    g = LineageGraph()
    g.add_dataset(
        Dataset(
            id="raw.users",
            name="raw.users",
            columns=[
                Column(name="id"),
                Column(name="email", classifications=(Classification(name="PII"),), terms=("Email",)),
            ],
            classifications=[Classification(name="Confidential")],
        )
    )
    g.add_dataset(
        Dataset(
            id="mart.users",
            name="mart.users",
            columns=[
                Column(name="id"),
                Column(
                    name="mail",
                    classifications=(Classification(name="PII", propagated=True), Classification(name="<b>")),
                ),
            ],
        )
    )
    g.add_process(Process(id="p", name="p", inputs=["raw.users"], outputs=["mart.users"]))
    return g


def _svg_rows(svg: str) -> dict[tuple[str, str], dict[str, str]]:
    """(dataset id, row text without marks) -> the row's attributes and its marks' text by kind."""
    root = ET.fromstring(svg.split("\n", 1)[1] if svg.startswith("<?xml") else svg)
    out: dict[tuple[str, str], dict[str, str]] = {}
    for g in root.iter(SVG + "g"):
        if "dataset" not in (g.get("class") or "").split():
            continue
        title = g.find(SVG + "title")
        assert title is not None and title.text
        ds = title.text.split("\n")[0]
        for row in g.iter(SVG + "g"):
            if "row" not in (row.get("class") or "").split():
                continue
            text = row.find(SVG + "text")
            assert text is not None
            info = {k: v for k, v in row.attrib.items() if k.startswith("data-") and k != "data-k"}
            info["class"] = row.get("class", "")
            for span in text.iter(SVG + "tspan"):
                kind = (span.get("class") or "").split()[-1]
                info["mark:" + kind] = info.get("mark:" + kind, "") + (span.text or "")
            out[(ds, text.text or "")] = info
    return out


@pytest.mark.parametrize("columns", [True, False])
def test_classified_columns_are_marked_own_propagated_and_terms(columns: bool) -> None:
    rows = _svg_rows(pictures.render(classified_graph(), "svg", columns=columns))
    own, prop, term = "\u00a0\u25cf", "\u00a0\u25cb", "\u00a0\u25aa"
    assert rows[("raw.users", "email")] == {
        "data-own": "PII",
        "data-terms": "Email",
        "class": "row classified",
        "mark:own": own + "PII",
        "mark:term": term + "Email",
    }
    assert rows[("mart.users", "mail")] == {
        "data-own": "<b>",
        "data-propagated": "PII",
        "class": "row classified",
        "mark:propagated": prop + "PII",
        "mark:own": own + "<b>",
    }
    plain = {k for k, v in rows.items() if v == {"class": "row"}}
    # without --columns only the columns that carry metadata are listed
    assert plain == ({("raw.users", "id"), ("mart.users", "id")} if columns else set())


def test_a_classified_dataset_is_marked_in_its_header_and_the_legend_explains() -> None:
    page = pictures.render(classified_graph(), "html")
    svg = page[page.index("<svg") : page.index("</svg>") + 6]
    root = ET.fromstring(svg)
    marked = {
        (g.find(SVG + "title").text or "").split("\n")[0]: g.get("data-own")  # type: ignore[union-attr]
        for g in root.iter(SVG + "g")
        if "node" in (g.get("class") or "").split() and g.get("data-own")
    }
    assert marked == {"raw.users": "Confidential"}
    for words in ("own classification", "propagated classification", "glossary term"):
        assert f"{words}</span>" in page
    assert "<b>" not in svg  # a name is text, never markup
    dot = pictures.render(classified_graph(), "dot", columns=True)
    assert "email\u00a0\u25cfPII\u00a0\u25aaEmail" in dot and "mail\u00a0\u25cbPII" in dot


def test_an_unclassified_picture_has_no_marks_or_legend() -> None:
    page = pictures.render(hostile_graph(), "html", columns=True)
    assert "classified" not in page and 'class="mark' not in page
