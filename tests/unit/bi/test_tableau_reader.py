"""The `tableau` reader on workbooks and data sources written by hand after Tableau's document schema
(tests/data/tableau); expectations written by hand from the files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry

DATA = Path(__file__).resolve().parents[2] / "data" / "tableau"
SHOP = DATA / "shop.twb"
MAP = {"warehouse.example.com/jaffle": "jaffle"}
JOINED = "tableau:bi_dataset:shop.federated.0a1b2c3"
CUSTOM = "tableau:bi_dataset:shop.federated.4d5e6f7"
BROKEN = "tableau:bi_dataset:shop.federated.8h9i0j"
BY_MONTH = "tableau:chart:shop.Amount by month"
SPENDERS = "tableau:chart:shop.Big spenders"
PRODUCTS = "tableau:chart:shop.3f2a9c1e-7b4d-4e8a-9c0f-5d6e7f8a9b0c"  # its <simple-id uuid>
DASH = "tableau:dashboard:shop.Overview"
ORD, C = "jaffle.main_marts.fct_orders", "jaffle.main_marts.customers"


def _edges(graph) -> set[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return {(str(e.source), str(e.target), e.kind) for e in graph.edges}


def test_workbook_gives_tables_to_dashboard_lineage_named_as_dbt_names_the_tables() -> None:
    g = registry.read("tableau", [str(SHOP)], connection_map=MAP)
    kinds = {d.id: d.kind for d in g.datasets}
    assert kinds == {
        ORD: "table",
        C: "table",
        JOINED: "bi_dataset",
        CUSTOM: "bi_dataset",
        BROKEN: "bi_dataset",
        BY_MONTH: "chart",
        SPENDERS: "chart",
        PRODUCTS: "chart",
        DASH: "dashboard",
    }  # the Parameters pseudo data source is no dataset
    io = {p.id: p.inputs for p in g.processes}
    assert io == {
        JOINED: [ORD, C],
        CUSTOM: [C, ORD],
        BY_MONTH: [JOINED],
        SPENDERS: [CUSTOM],
        PRODUCTS: [BROKEN],  # its table cannot be resolved: it keeps its edge to the data source
        DASH: [BY_MONTH, SPENDERS],  # the text zone is no sheet
    }
    # each data source's fields (metadata records, <map> keys, <column>s) and each sheet's fields used
    assert {d.id: sorted(d.column_names()) for d in g.datasets if d.kind != "table"} == {
        JOINED: sorted(
            ["status", "amount", "order_date", "customer_id", "customer_id (customers)", "first_name",
             "Calculation_1001", "Calculation_1002"]
        ),
        CUSTOM: ["full_name", "ltv", "order_date"],
        BROKEN: ["product_name"],
        BY_MONTH: ["amount", "order_date"],
        SPENDERS: ["full_name", "ltv"],
        PRODUCTS: ["product_name"],
        DASH: [],
    }  # fmt: skip
    assert g.dataset(DASH).facets["charts"] == [BY_MONTH, SPENDERS]  # type: ignore[union-attr]
    assert g.dataset(JOINED).name == "Orders and customers"  # type: ignore[union-attr]
    assert g.dataset(CUSTOM).facets["extract"] == "true"  # type: ignore[union-attr]
    assert g.dataset(ORD).facets["connection"] == "postgresql://warehouse.example.com"  # type: ignore[union-attr]
    edges = _edges(g)
    expected = {
        # <cols> maps and a metadata record
        (f"{ORD}.amount", f"{JOINED}.amount", "IDENTITY"),
        (f"{ORD}.order_date", f"{JOINED}.order_date", "IDENTITY"),
        (f"{ORD}.customer_id", f"{JOINED}.customer_id", "IDENTITY"),
        (f"{C}.customer_id", f'{JOINED}."customer_id (customers)"', "IDENTITY"),
        (f"{C}.first_name", f"{JOINED}.first_name", "IDENTITY"),
        (f"{ORD}.status", f"{JOINED}.status", "IDENTITY"),
        # the join's clause [fct_orders].[customer_id] = [customers].[customer_id]
        (f"{ORD}.customer_id", f"{JOINED}.*", "JOIN"),
        (f"{C}.customer_id", f"{JOINED}.*", "JOIN"),
        # calculated fields by the fields their formula names
        (f"{ORD}.amount", f"{JOINED}.Calculation_1001", "TRANSFORMATION"),
        (f"{ORD}.amount", f"{JOINED}.Calculation_1002", "AGGREGATION"),
        (f"{ORD}.customer_id", f"{JOINED}.Calculation_1002", "AGGREGATION"),
        # custom SQL through the SQL reader: column lineage through it
        (f"{C}.first_name", f"{CUSTOM}.full_name", "TRANSFORMATION"),
        (f"{C}.last_name", f"{CUSTOM}.full_name", "TRANSFORMATION"),
        (f"{C}.lifetime_value", f"{CUSTOM}.ltv", "IDENTITY"),
        (f"{ORD}.order_date", f"{CUSTOM}.order_date", "IDENTITY"),
        (f"{C}.lifetime_value", f"{CUSTOM}.*", "FILTER"),
        (f"{ORD}.customer_id", f"{CUSTOM}.*", "JOIN"),
        (f"{C}.customer_id", f"{CUSTOM}.*", "JOIN"),
        # sheets: the fields they use, SUM as an aggregation
        (f"{JOINED}.amount", f"{BY_MONTH}.amount", "AGGREGATION"),
        (f"{JOINED}.order_date", f"{BY_MONTH}.order_date", "IDENTITY"),
        (f"{CUSTOM}.full_name", f"{SPENDERS}.full_name", "IDENTITY"),
        (f"{CUSTOM}.ltv", f"{SPENDERS}.ltv", "AGGREGATION"),
        (f"{BROKEN}.product_name", f"{PRODUCTS}.product_name", "IDENTITY"),
    }
    assert edges == expected
    warnings = [(p.code, p.message) for p in g.problems]
    assert [c for c, _ in warnings] == ["tableau-unparsed-sql", "tableau-unresolved"]
    assert "'Products'" in warnings[0][1] and "'Broken SQL'" in warnings[0][1]
    assert "worksheet 'Products'" in warnings[1][1]


def test_a_connection_the_map_does_not_name_keeps_sql_names_with_one_warning() -> None:
    g = registry.read("tableau", [str(SHOP)])
    assert {d.id for d in g.datasets if d.kind == "table"} == {
        "main_marts.fct_orders",
        "main_marts.customers",
    }
    unmapped = [p for p in g.problems if p.code == "tableau-unmapped-connection"]
    assert len(unmapped) == 1 and "warehouse.example.com/jaffle" in unmapped[0].message


def test_published_data_source_object_graph_union_and_snowflake_folding() -> None:
    g = registry.read(
        "tableau",
        [str(DATA / "sales.twb"), str(DATA / "orders_published.tds")],
        connection_map={"acme.snowflakecomputing.com/*": "analytics"},
    )
    pub, wb_ds = "tableau:bi_dataset:orders_published", "tableau:bi_dataset:sales.sqlproxy.42xyz"
    sheet = "tableau:chart:sales.By region"
    assert {d.id: (d.kind, sorted(d.column_names())) for d in g.datasets} == {
        "analytics.mart.orders": ("table", []),
        "analytics.mart.regions_eu": ("table", []),
        "analytics.mart.regions_us": ("table", []),
        pub: ("bi_dataset", ["AMOUNT", "ORDER_ID", "REGION"]),  # its metadata records
        wb_ds: ("bi_dataset", ["AMOUNT", "REGION"]),  # its <column>s
        "tableau:bi_dataset:sales.sqlproxy.77": ("bi_dataset", ["x"]),
        sheet: ("chart", ["AMOUNT", "REGION"]),  # its shelves: [sum:AMOUNT:qk], [none:REGION:nk]
    }
    io = {p.id: p.inputs for p in g.processes}
    assert io == {
        pub: ["analytics.mart.orders", "analytics.mart.regions_eu", "analytics.mart.regions_us"],
        wb_ds: [pub],  # joined by name to the published data source
        sheet: [wb_ds],
    }
    assert _edges(g) == {
        ("analytics.mart.orders.order_id", f"{pub}.ORDER_ID", "IDENTITY"),
        ("analytics.mart.orders.amount", f"{pub}.AMOUNT", "IDENTITY"),
        ("analytics.mart.regions_eu.region", f"{pub}.REGION", "IDENTITY"),  # each part of the union
        ("analytics.mart.regions_us.region", f"{pub}.REGION", "IDENTITY"),
        (f"{pub}.AMOUNT", f"{wb_ds}.AMOUNT", "IDENTITY"),
        (f"{pub}.REGION", f"{wb_ds}.REGION", "IDENTITY"),
        (f"{wb_ds}.REGION", f"{sheet}.REGION", "IDENTITY"),
        (f"{wb_ds}.AMOUNT", f"{sheet}.AMOUNT", "AGGREGATION"),
    }
    (warning,) = g.problems
    assert "'Elsewhere'" in warning.message and "'NotGiven'" in warning.message


def test_packaged_workbook_reads_as_its_twb_and_auto_detection_picks_tableau(tmp_path: Path) -> None:
    twbx = tmp_path / "shop.twbx"
    with zipfile.ZipFile(twbx, "w") as zf:
        zf.write(SHOP, "shop.twb")
        zf.writestr("Data/Extracts/big.hyper", b"not read")
    assert registry.detect(str(twbx)).name == "tableau"
    assert registry.detect(str(SHOP)).name == "tableau"
    g = registry.read("tableau", [str(twbx)], connection_map=MAP)
    assert {p.id for p in g.processes} == {JOINED, CUSTOM, BY_MONTH, SPENDERS, PRODUCTS, DASH}


def test_truncated_xml_is_an_error_naming_the_file_and_nothing_of_it_is_read(tmp_path: Path) -> None:
    cut = tmp_path / "cut.twb"
    cut.write_bytes(SHOP.read_bytes()[:3000])
    with pytest.raises(InputError) as err:
        registry.read("tableau", [str(cut)])
    assert "cut.twb" in str(err.value) and "well-formed" in str(err.value)
    # with a good file beside it: the good one is read, the bad one is an error of the batch
    g = registry.read("tableau", [str(cut), str(DATA / "orders_published.tds")])
    assert g.has_errors
    assert [p.file for p in g.problems if p.severity == "error"] == [str(cut)]
    assert not any(d.id.startswith("tableau:bi_dataset:cut") for d in g.datasets)


def test_a_corrupt_packaged_file_is_an_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.twbx"
    twbx = tmp_path / "good.twbx"
    with zipfile.ZipFile(twbx, "w") as zf:
        zf.write(SHOP, "shop.twb")
    bad.write_bytes(twbx.read_bytes()[:40])
    with pytest.raises(InputError) as err:
        registry.read("tableau", [str(bad)])
    assert "bad.twbx" in str(err.value) and "zip" in str(err.value)


REAL = DATA / "document-api-python"


def test_real_workbook_joining_two_connections_gives_exactly_its_tables_and_join_columns() -> None:
    g = registry.read(
        "tableau",
        [str(REAL / "multiple_connections.twb")],
        connection_map={"mysql55/testv1": "mysqlprod", "mssql2012/TestV1": "mssqlprod"},
    )
    fed = "tableau:bi_dataset:multiple_connections.federated.1bw8gel1hkm5ms1c8jgrm0zixmde"
    proxy = "tableau:bi_dataset:multiple_connections.sqlproxy.0uczajf02b02kv16u6atd08pslj5"
    # written from the file: two data sources, neither with a <column>; no worksheet, no dashboard
    assert {d.id: (d.kind, d.name, d.column_names()) for d in g.datasets} == {
        proxy: ("bi_dataset", "xy (TestV1)", []),
        fed: ("bi_dataset", "xy+ (Multiple Connections)", []),
        # [xy] on MySQL (its database testv1 is the schema), [dbo].[xy] on SQL Server
        "mysqlprod.testv1.xy": ("table", "xy", []),
        "mssqlprod.dbo.xy": ("table", "xy", []),
    }
    assert {p.id: p.inputs for p in g.processes} == {fed: ["mysqlprod.testv1.xy", "mssqlprod.dbo.xy"]}
    # the join's clause [xy].[a] = [xy1].[a]: column a of each table, as SQL's JOIN ... ON gives it
    assert _edges(g) == {
        ("mysqlprod.testv1.xy.a", f"{fed}.*", "JOIN"),
        ("mssqlprod.dbo.xy.a", f"{fed}.*", "JOIN"),
    }
    assert g.dataset("mysqlprod.testv1.xy").facets["connection"] == "mysql://mysql55"  # type: ignore[union-attr]
    assert g.dataset("mssqlprod.dbo.xy").facets["connection"] == "mssql://mssql2012"  # type: ignore[union-attr]
    (warning,) = g.problems  # the published data source xyTestV1 is not given
    assert "'xyTestV1'" in warning.message


def test_a_data_source_without_relations_is_said() -> None:
    g = registry.read("tableau", [str(REAL / "TABLEAU_10_TDS.tds")], connection_map={"*": "x"})
    assert {d.id: (d.kind, d.name, d.column_names()) for d in g.datasets} == {
        "tableau:bi_dataset:TABLEAU_10_TDS": ("bi_dataset", "xy+ (Multiple Connections)", [])
    }
    assert not g.processes and not g.edges
    (warning,) = g.problems
    assert warning.code == "tableau-unresolved" and "no table or query" in warning.message


TSC = DATA / "tableau-server-client" / "SampleWB.twbx"
WI = "tableau:bi_dataset:SampleWB.World Indicators new"
GDP, GDPC = "F: GDP (curr $)", "F: GDP per capita (curr $)"
POP, LIFE, HEALTH = "P: Population (count)", "H: Life exp (years)", "H: Health exp/cap (curr $)"
LEND, DEPOSIT = "F: Lending interest rate (%)", "F: Deposit interest rate (%)"
CALC1, CALC_GDP, CALC_SPREAD = "Calculation1", "Calculation_1590906174513693", "Calculation_8570907072742130"
AG, ID = "AGGREGATION", "IDENTITY"
# each worksheet's <datasource-dependencies> columns; AGGREGATION where one of its column-instances has
# an aggregating derivation (Sum, Avg), IDENTITY for None, Year and User (a calculated field)
SHEETS = {
    "Country ranks": {
        "Country / Region": ID, "Date": ID, GDP: AG, GDPC: AG, LIFE: AG, POP: AG,
    },
    "GDP per capita": {CALC1: ID, "Country / Region": ID, "Date": ID, GDPC: AG, "Region": ID},
    "GDP per capita by region": {
        CALC_GDP: ID, "Country / Region": ID, "Date": ID, GDP: AG, POP: ID, "Region": ID,
    },
    "GDP per capita map": {
        CALC1: ID, "Country / Region": ID, "Date": ID, GDPC: AG, POP: AG, "Region": ID, "Subregion": ID,
    },
    "Health spending vs life expectancy": {"Country / Region": ID, "Date": ID, HEALTH: AG, LIFE: AG, "Region": ID},
    "Interest rates": {
        CALC_GDP: ID, CALC_SPREAD: ID, "Date": ID, DEPOSIT: AG, GDP: AG, LEND: AG, POP: ID, "Region": ID,
        "Subregion": ID,
    },
    "Share of World GDP": {"Country / Region": ID, "Date": ID, GDP: AG, "Region": ID},
}  # fmt: skip


def test_real_packaged_workbook_gives_exactly_its_data_source_sheets_and_dashboard() -> None:
    g = registry.read("tableau", [str(TSC)], connection_map={"*": "x"})
    chart = {s: f"tableau:chart:SampleWB.{s}" for s in SHEETS}
    dash = "tableau:dashboard:SampleWB.GDP per Capita Dashboard"
    ds_fields = {
        "Country / Region", "Date", DEPOSIT, GDP, GDPC, LEND, "H: Health exp (% GDP)", HEALTH, LIFE,
        "Number of Records", POP, "Region", "Subregion", CALC1, CALC_GDP, CALC_SPREAD,
    }  # fmt: skip
    assert {d.id: (d.kind, d.name, set(d.column_names())) for d in g.datasets} == {
        WI: ("bi_dataset", "World Indicators", ds_fields),
        **{chart[s]: ("chart", s, set(used)) for s, used in SHEETS.items()},
        dash: ("dashboard", "GDP per Capita Dashboard", set()),
    }  # the extract is no warehouse table
    assert {p.id: p.inputs for p in g.processes} == {
        **{chart[s]: [WI] for s in SHEETS},
        dash: [chart["GDP per capita by region"], chart["GDP per capita map"]],
    }
    assert {
        (e.source.dataset, e.source.column, e.target.dataset, e.target.column, e.kind) for e in g.edges
    } == {(WI, f, chart[s], f, kind) for s, used in SHEETS.items() for f, kind in used.items()}
    codes = [p.code for p in g.problems]
    # the extract said once, and each sheet said to end at a data source of no warehouse table
    assert codes == ["tableau-extract"] + ["tableau-unresolved"] * 7
    assert "World Indicators.tde" in g.problems[0].message


def test_a_field_aggregated_in_any_of_its_sheet_instances_is_an_aggregation_whatever_their_order(
    tmp_path: Path,
) -> None:
    twb = tmp_path / "order.twb"
    twb.write_text(
        "<workbook><datasources><datasource name='ds' caption='DS'>"
        "<connection class='postgres' server='h' dbname='d'>"
        "<relation name='t' table='[s].[t]' type='table'/></connection>"
        "<column name='[amount]' datatype='real'/></datasource></datasources>"
        "<worksheets><worksheet name='W'><table><view><datasource-dependencies datasource='ds'>"
        "<column name='[amount]' datatype='real'/>"
        "<column-instance column='[amount]' derivation='Sum' name='[sum:amount:qk]'/>"
        "<column-instance column='[amount]' derivation='None' name='[none:amount:qk]'/>"
        "</datasource-dependencies></view></table></worksheet></worksheets></workbook>"
    )
    g = registry.read("tableau", [str(twb)], connection_map={"h/d": "x"})
    assert ("tableau:bi_dataset:order.ds.amount", "tableau:chart:order.W.amount", "AGGREGATION") in _edges(g)
