"""The `superset` reader on export ZIPs: a real Superset 6.1.0 export (tests/data/superset/README.md) and
small exports written here for the cases a real one cannot show. Expectations by hand from the files."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import yaml

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.superset.build import dialect_of, render_jinja

DATA = Path(__file__).resolve().parents[2] / "data" / "superset"
EXPORT = DATA / "export-6.1.0.zip"
CUSTOMERS = "superset:bi_dataset:c9154bae-5f3d-4cac-8ebb-ed088b727420"
ORDERS = "superset:bi_dataset:e45dc8df-59fe-4b70-9426-1b2f71a9e559"
VIRTUAL = "superset:bi_dataset:e82c7595-fb9b-46fa-aa32-acf444828f62"
LTV = "superset:chart:2943501f-61fe-4000-accd-16f6f77fe0b5"
AMOUNT = "superset:chart:5fe6a3f0-3d80-478b-a5c2-badc8836840c"
BIG = "superset:chart:6eb4229d-3734-40bd-bd1f-c2dc9b8cecde"
DASH = "superset:dashboard:cabf0a67-af9a-4bbc-afc5-16488c83262f"
MAP = {"t-Warehouse": "jaffle"}


def _edges(graph) -> set[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return {(str(e.source), str(e.target), e.kind) for e in graph.edges}


def test_real_export_gives_table_to_dashboard_lineage_named_as_dbt_names_the_tables() -> None:
    g = registry.read("superset", [str(EXPORT)], connection_map=MAP)
    kinds = {d.id: d.kind for d in g.datasets}
    assert kinds == {
        "jaffle.main_marts.customers": "table",
        "jaffle.main_marts.fct_orders": "table",
        CUSTOMERS: "bi_dataset",
        ORDERS: "bi_dataset",
        VIRTUAL: "bi_dataset",
        LTV: "chart",
        AMOUNT: "chart",
        BIG: "chart",
        DASH: "dashboard",
    }
    io = {p.id: (p.inputs, p.outputs) for p in g.processes}
    assert io == {
        CUSTOMERS: (["jaffle.main_marts.customers"], [CUSTOMERS]),
        ORDERS: (["jaffle.main_marts.fct_orders"], [ORDERS]),
        VIRTUAL: (["jaffle.main_marts.customers", "jaffle.main_marts.fct_orders"], [VIRTUAL]),
        LTV: ([CUSTOMERS], [LTV]),
        AMOUNT: ([ORDERS], [AMOUNT]),
        BIG: ([VIRTUAL], [BIG]),
        DASH: ([AMOUNT, LTV, BIG], [DASH]),
    }
    dash = g.dataset(DASH)
    assert dash is not None and dash.name == "t Customer overview"
    assert dash.facets["charts"] == [AMOUNT, LTV, BIG]
    assert g.dataset(LTV).facets["chartType"] == "table"  # type: ignore[union-attr]
    edges = _edges(g)
    # the saved metric through its expression, then the chart's use of it
    assert ("jaffle.main_marts.customers.lifetime_value", f"{CUSTOMERS}.total_ltv", "AGGREGATION") in edges
    assert (f"{CUSTOMERS}.total_ltv", f"{LTV}.total_ltv", "IDENTITY") in edges
    assert (f"{CUSTOMERS}.first_name", f"{LTV}.first_name", "IDENTITY") in edges
    # an adhoc SUM(amount)
    assert (f"{ORDERS}.amount", f'{AMOUNT}."SUM(amount)"', "AGGREGATION") in edges
    # the virtual dataset's SQL, column level, with its join and filter
    assert ("jaffle.main_marts.fct_orders.amount", f"{VIRTUAL}.order_amount", "IDENTITY") in edges
    assert ("jaffle.main_marts.customers.first_name", f"{VIRTUAL}.first_name", "IDENTITY") in edges
    assert ("jaffle.main_marts.fct_orders.customer_id", f"{VIRTUAL}.*", "JOIN") in edges
    assert ("jaffle.main_marts.fct_orders.amount", f"{VIRTUAL}.*", "FILTER") in edges
    assert (f"{VIRTUAL}.order_amount", f"{BIG}.order_amount", "IDENTITY") in edges
    # every column edge's source is an input of its process
    for e in g.edges:
        assert e.source.dataset in io[e.process][0]  # type: ignore[index]
    # the Jinja comment is said, not silent
    codes = [p.code for p in g.problems]
    assert codes == ["superset-jinja"]
    assert "t_big_customers" in g.problems[0].message


def test_a_database_the_map_does_not_name_keeps_sql_names_with_one_warning() -> None:
    g = registry.read("superset", [str(EXPORT)])
    assert {d.id for d in g.datasets if d.kind == "table"} == {
        "main_marts.customers",
        "main_marts.fct_orders",
    }
    unmapped = [p for p in g.problems if p.code == "superset-unmapped-database"]
    assert len(unmapped) == 1 and "t-Warehouse" in unmapped[0].message


def test_auto_detection_picks_the_superset_reader_for_an_export() -> None:
    assert registry.detect(str(EXPORT)).name == "superset"


def _write_export(folder: Path, objects: dict[str, dict]) -> Path:  # type: ignore[type-arg]
    """A ZIP export of ``{"charts/x.yaml": {...}}`` under one top folder, with its metadata.yaml."""
    path = folder / "export.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("export/metadata.yaml", "version: 1.0.0\ntype: Dashboard\n")
        for name, doc in objects.items():
            zf.writestr(f"export/{name}", doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return path


DB = {"database_name": "PG", "sqlalchemy_uri": "postgresql+psycopg2://u@pg:5432/shop", "uuid": "db-1"}


def _dataset(uuid: str, **kw: object) -> dict:  # type: ignore[type-arg]
    return {
        "uuid": uuid,
        "database_uuid": "db-1",
        "table_name": uuid,
        "schema": "public",
        "sql": None,
        "columns": [],
        "metrics": [],
        **kw,
    }


def _chart(uuid: str, dataset: str, params: dict | None = None) -> dict:  # type: ignore[type-arg]
    return {
        "uuid": uuid,
        "slice_name": f"chart {uuid}",
        "viz_type": "table",
        "dataset_uuid": dataset,
        "params": params or {},
    }


def test_unresolvable_tables_and_missing_datasets_warn_per_chart_and_the_rest_is_read(tmp_path: Path) -> None:
    export = _write_export(
        tmp_path,
        {
            "databases/PG.yaml": DB,
            "datasets/PG/bad.yaml": _dataset("bad", sql="SELEC nonsense FROM WHERE"),
            "datasets/PG/good.yaml": _dataset("good", table_name="orders", columns=[{"column_name": "id"}]),
            "charts/a.yaml": _chart("a", "bad"),
            "charts/b.yaml": _chart("b", "gone"),
            "charts/c.yaml": _chart("c", "good", {"groupby": ["id"]}),
        },
    )
    g = registry.read("superset", [str(export)], connection_map={"PG": "pg"})
    io = {p.id: p.inputs for p in g.processes}
    # the chart on the unparseable dataset keeps its edge to the dataset only
    assert io["superset:chart:a"] == ["superset:bi_dataset:bad"]
    assert "superset:bi_dataset:bad" not in io
    assert "superset:chart:b" not in io  # its dataset is not in the export
    assert io["superset:bi_dataset:good"] == ["pg.public.orders"]
    by_code: dict[str, list[str]] = {}
    for p in g.problems:
        by_code.setdefault(p.code or "", []).append(p.message)
    assert len(by_code["superset-unparsed-sql"]) == 1 and "'bad'" in by_code["superset-unparsed-sql"][0]
    unresolved = by_code["superset-chart-unresolved"]
    assert len(unresolved) == 2
    assert any("chart 'chart a' (a)" in m and "cannot be resolved" in m for m in unresolved)
    assert any("chart 'chart b' (b)" in m and "gone is not in the input" in m for m in unresolved)
    assert all(p.severity == "warning" for p in g.problems)


def test_dialect_comes_from_the_database_uri_and_jinja_ifs_keep_their_first_branch(tmp_path: Path) -> None:
    sql = (
        "SELECT `id`, amount FROM shop.orders {# a comment #}\n"
        "{% if filter_values('x') %}WHERE amount > {{ url_param('min') }}{% else %}WHERE bogus ((({% endif %}"
    )
    export = _write_export(
        tmp_path,
        {
            "databases/My.yaml": {
                "database_name": "My",
                "sqlalchemy_uri": "mysql+pymysql://u@my/shop",
                "uuid": "db-1",
            },
            "datasets/My/v.yaml": _dataset("v", sql=sql, columns=[{"column_name": "id"}]),
        },
    )
    g = registry.read("superset", [str(export)], connection_map={"My": ""})
    assert g.process("superset:bi_dataset:v").inputs == ["shop.orders"]  # type: ignore[union-attr]
    assert ("shop.orders.id", "superset:bi_dataset:v.id", "IDENTITY") in _edges(g)
    assert ("shop.orders.amount", "superset:bi_dataset:v.*", "FILTER") in _edges(g)
    assert [p.code for p in g.problems] == ["superset-jinja"]


def test_jinja_placeholders() -> None:
    assert render_jinja("SELECT 1") == ("SELECT 1", False)
    assert render_jinja("a {{ x }} b {% if y %}c{% elif z %}d{% else %}e{% endif %} {# n #}") == (
        "a NULL b c ",
        True,
    )
    assert dialect_of("postgresql+psycopg2://u@h/db") == "postgres"
    assert dialect_of("duckdb:////tmp/x.duckdb") == "duckdb"
    assert dialect_of("mssql+pyodbc://h/db") == "tsql"
    assert dialect_of("nosuchdb://h") == ""


def test_a_truncated_zip_is_an_error_naming_the_file(tmp_path: Path) -> None:
    cut = tmp_path / "cut.zip"
    cut.write_bytes(EXPORT.read_bytes()[:3000])
    with pytest.raises(InputError) as exc:
        registry.read("superset", [str(cut)])
    assert str(cut) in str(exc.value)


def test_an_unreadable_yaml_is_an_error_naming_it_and_the_other_files_are_read(tmp_path: Path) -> None:
    export = _write_export(
        tmp_path,
        {
            "databases/PG.yaml": DB,
            "datasets/PG/good.yaml": _dataset("good", table_name="orders"),
            "charts/broken.yaml": "slice_name: [unclosed\n",
        },
    )
    g = registry.read("superset", [str(export)], connection_map={"PG": "pg"})
    errors = [p for p in g.problems if p.severity == "error"]
    assert len(errors) == 1 and "charts/broken.yaml" in str(errors[0]) and "invalid YAML" in errors[0].message
    assert g.dataset("superset:bi_dataset:good") is not None


def test_select_keeps_the_named_dashboard_and_what_it_uses() -> None:
    g = registry.read("superset", [str(EXPORT)], connection_map=MAP, select=["t Customer overview"])
    assert g.dataset(DASH) is not None
    with pytest.raises(InputError, match="no dashboard matches"):
        registry.read("superset", [str(EXPORT)], select=["nope"])


def test_the_lineage_document_round_trips() -> None:
    g = registry.read("superset", [str(EXPORT)], connection_map=MAP)
    doc = json.loads(json.dumps(g.to_document()))
    assert {d["id"] for d in doc["datasets"]} >= {DASH, LTV}


def test_hand_edited_exports_with_odd_values_are_read_without_a_crash(tmp_path: Path) -> None:
    export = _write_export(
        tmp_path,
        {
            "databases/PG.yaml": {"database_name": "PG", "sqlalchemy_uri": True, "uuid": "db-1"},
            "datasets/PG/d.yaml": _dataset("d", columns=1, metrics="x", catalog={"a": 1}, table_name={}),
            "charts/c.yaml": {
                "uuid": "c",
                "slice_name": ["x"],
                "viz_type": 3,
                "dataset_uuid": "d",
                "params": "{no json",
            },
            "dashboards/x.yaml": {
                "uuid": "x",
                "dashboard_title": None,
                "position": "not json",
                "chart_uuids": 5,
            },
        },
    )
    g = registry.read("superset", [str(export)], connection_map={"PG": "pg"})
    # names fall back to the uuid; the dataset reads nothing it can name: said, not guessed
    assert g.dataset("superset:bi_dataset:d").name == "d"  # type: ignore[union-attr]
    assert g.dataset("superset:dashboard:x") is not None
    assert all(p.severity == "warning" for p in g.problems)


def test_names_fold_as_the_other_readers_fold_them_and_reserved_words_still_read(tmp_path: Path) -> None:
    export = _write_export(
        tmp_path,
        {
            "databases/SF.yaml": {
                "database_name": "SF",
                "sqlalchemy_uri": "snowflake://acct/db",
                "uuid": "db-1",
            },
            "datasets/SF/o.yaml": _dataset(
                "o",
                schema="MART",
                table_name="ORDERS",
                columns=[{"column_name": "ORDER_ID"}, {"column_name": "order"}],
            ),
        },
    )
    g = registry.read("superset", [str(export)], connection_map={"SF": "ANALYTICS"})
    # Snowflake folds unquoted names: ANALYTICS.MART.ORDERS is analytics.mart.orders (dbt's and the SQL
    # reader's name); `order` is a reserved word, read quoted; the fields keep Superset's names
    assert g.process("superset:bi_dataset:o").inputs == ["analytics.mart.orders"]  # type: ignore[union-attr]
    edges = _edges(g)
    assert ("analytics.mart.orders.order_id", "superset:bi_dataset:o.ORDER_ID", "IDENTITY") in edges
    assert any(t == "superset:bi_dataset:o.order" for _s, t, _k in edges)
    assert not g.problems
