"""The `powerbi` reader on a PBIP project written by hand after Microsoft's TMDL and PBIR documentation
(tests/data/powerbi/shop) and on .pbit templates made here; expectations written by hand."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry

SHOP = Path(__file__).resolve().parents[2] / "data" / "powerbi" / "shop"
MAP = {"warehouse.example.com/jaffle": "jaffle"}
ORDERS, CUSTOMERS, TARGETS = (f"powerbi:bi_dataset:Shop.{t}" for t in ("Orders", "Customers", "Targets"))
V1, V2 = "powerbi:chart:Shop.a1b2c3d4e5f6.v0001", "powerbi:chart:Shop.a1b2c3d4e5f6.v0002"
PAGE = "powerbi:dashboard:Shop.a1b2c3d4e5f6"
FO, CU = "jaffle.main_marts.fct_orders", "jaffle.main_marts.customers"


def _edges(graph) -> set[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return {(str(e.source), str(e.target), e.kind) for e in graph.edges}


def test_pbip_gives_tables_to_visuals_lineage_named_as_dbt_names_the_tables() -> None:
    g = registry.read("powerbi", [str(SHOP)], connection_map=MAP)
    assert {d.id: d.kind for d in g.datasets} == {
        FO: "table",
        CU: "table",
        ORDERS: "bi_dataset",
        CUSTOMERS: "bi_dataset",
        TARGETS: "bi_dataset",
        V1: "chart",
        V2: "chart",  # the text box is no chart
        PAGE: "dashboard",
    }
    assert {p.id: p.inputs for p in g.processes} == {
        # the shared expression Warehouse = PostgreSQL.Database(Server, Database), navigated
        ORDERS: [FO, CUSTOMERS],  # RELATED(Customers[first_name]) reads the Customers table
        CUSTOMERS: [CU],  # its native query
        V1: [ORDERS],
        V2: [CUSTOMERS],
        PAGE: [V1, V2],
    }
    # each table's columns and measures as its .tmdl names them; each visual's projections (queryRef)
    assert {d.id: sorted(d.column_names()) for d in g.datasets if d.kind != "table"} == {
        ORDERS: sorted(
            ["Total Sales", "Sales per customer", "order_id", "customer_id", "Amount", "Order date", "Big order",
             "Customer name"]
        ),
        CUSTOMERS: ["customer_id", "first_name", "ltv"],
        TARGETS: ["Month"],
        V1: ["Orders.Order date", "Orders.Total Sales"],
        V2: ["Customers.first_name", "Sum(Customers.ltv)"],
        PAGE: [],
    }  # fmt: skip
    assert g.dataset(PAGE).name == "Sales overview"  # type: ignore[union-attr]
    assert g.dataset(FO).facets["connection"] == "postgresql://warehouse.example.com"  # type: ignore[union-attr]
    assert _edges(g) == {
        (f"{FO}.order_id", f"{ORDERS}.order_id", "IDENTITY"),
        (f"{FO}.customer_id", f"{ORDERS}.customer_id", "IDENTITY"),
        (f"{FO}.amount", f"{ORDERS}.Amount", "IDENTITY"),  # through Table.RenameColumns amount -> Amount
        (f"{FO}.order_date", f'{ORDERS}."Order date"', "IDENTITY"),
        (f"{FO}.amount", f'{ORDERS}."Big order"', "TRANSFORMATION"),  # calculated column
        (f"{CUSTOMERS}.first_name", f'{ORDERS}."Customer name"', "TRANSFORMATION"),
        (f"{FO}.amount", f'{ORDERS}."Total Sales"', "AGGREGATION"),  # SUM(Orders[amount]): names fold
        (f"{FO}.amount", f'{ORDERS}."Sales per customer"', "AGGREGATION"),  # through [Total Sales]
        (f"{FO}.customer_id", f'{ORDERS}."Sales per customer"', "AGGREGATION"),
        # the native query through the SQL reader (postgres)
        (f"{CU}.customer_id", f"{CUSTOMERS}.customer_id", "IDENTITY"),
        (f"{CU}.first_name", f"{CUSTOMERS}.first_name", "IDENTITY"),
        (f"{CU}.lifetime_value", f"{CUSTOMERS}.ltv", "IDENTITY"),
        (f"{CU}.number_of_orders", f"{CUSTOMERS}.*", "FILTER"),
        # visuals: their queryState projections
        (f'{ORDERS}."Order date"', f'{V1}."Orders.Order date"', "IDENTITY"),
        (f'{ORDERS}."Total Sales"', f'{V1}."Orders.Total Sales"', "IDENTITY"),
        (f"{CUSTOMERS}.first_name", f'{V2}."Customers.first_name"', "IDENTITY"),
        (f"{CUSTOMERS}.ltv", f'{V2}."Sum(Customers.ltv)"', "AGGREGATION"),
    }
    (warning,) = g.problems
    assert warning.code == "powerbi-unresolved"
    assert "table 'Targets'" in warning.message and "step 'Source'" in warning.message
    assert "Excel.Workbook" in warning.message


def test_auto_detection_picks_powerbi_for_a_project_folder_and_a_pbit(tmp_path: Path) -> None:
    assert registry.detect(str(SHOP)).name == "powerbi"
    assert registry.detect(str(SHOP / "Shop.SemanticModel")).name == "powerbi"
    pbit = tmp_path / "t.pbit"
    pbit.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    assert registry.detect(str(pbit)).name == "powerbi"


def test_an_m_syntax_error_is_a_warning_naming_table_and_file(tmp_path: Path) -> None:
    proj = tmp_path / "shop"
    shutil.copytree(SHOP, proj)
    f = proj / "Shop.SemanticModel" / "definition" / "tables" / "Customers.tmdl"
    f.write_text(
        f.read_text().replace(
            'Query = Value.NativeQuery(Source, "SELECT', 'Query = Value.NativeQuery(Source,, "SELECT'
        )
    )
    g = registry.read("powerbi", [str(proj)], connection_map=MAP)
    syntax = [p for p in g.problems if p.code == "powerbi-m-syntax"]
    assert len(syntax) == 1 and "table 'Customers'" in syntax[0].message and syntax[0].file == str(f)
    assert CU not in {d.id for d in g.datasets}  # nothing guessed


def test_a_tmdl_file_that_does_not_parse_is_an_error_and_nothing_of_its_model_is_read(tmp_path: Path) -> None:
    proj = tmp_path / "shop"
    shutil.copytree(SHOP, proj)
    bad = proj / "Shop.SemanticModel" / "definition" / "tables" / "Targets.tmdl"
    bad.write_text("table Targets\n\tpartition Targets = m\n\t\tsource = ```\n\t\t\tlet\n")  # unclosed fence
    g = registry.read("powerbi", [str(proj)], connection_map=MAP)
    errors = [p for p in g.problems if p.severity == "error"]
    assert [(p.file, p.code) for p in errors] == [(str(bad), "powerbi-invalid")]
    # no table of the model is read (the report still names its tables, without lineage)
    assert FO not in {d.id for d in g.datasets} and CU not in {d.id for d in g.datasets}
    assert not any(p.id == ORDERS for p in g.processes)


def _pbit(path: Path, model: dict, layout: dict | None = None) -> None:  # type: ignore[type-arg]
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("DataModelSchema", json.dumps(model).encode("utf-16-le"))
        if layout is not None:
            zf.writestr("Report/Layout", json.dumps(layout).encode("utf-16-le"))


def test_pbit_template_model_and_layout(tmp_path: Path) -> None:
    model = {
        "name": "x",
        "model": {
            "expressions": [
                {
                    "name": "Srv",
                    "kind": "m",
                    "expression": ['"acme.snowflakecomputing.com" meta [IsParameterQuery=true]'],
                }
            ],
            "tables": [
                {
                    "name": "Sales",
                    "columns": [
                        {"name": "Amount", "dataType": "double", "sourceColumn": "AMOUNT"},
                        {"name": "Double", "type": "calculated", "expression": "Sales[Amount] * 2"},
                    ],
                    "measures": [{"name": "Total", "expression": "SUM ( 'Sales'[Amount] )"}],
                    "partitions": [
                        {
                            "name": "Sales",
                            "mode": "import",
                            "source": {
                                "type": "m",
                                "expression": [
                                    "let",
                                    '    S = Snowflake.Databases(Srv, "WH"),',
                                    '    D = S{[Name="ANALYTICS",Kind="Database"]}[Data],',
                                    '    Sc = D{[Name="MART",Kind="Schema"]}[Data],',
                                    '    T = Sc{[Name="SALES",Kind="Table"]}[Data]',
                                    "in",
                                    "    T",
                                ],
                            },
                        }
                    ],
                }
            ],
        },
    }
    config = {
        "name": "vc1",
        "singleVisual": {
            "visualType": "card",
            "prototypeQuery": {
                "From": [{"Name": "s", "Entity": "Sales", "Type": 0}],
                "Select": [
                    {
                        "Measure": {"Expression": {"SourceRef": {"Source": "s"}}, "Property": "Total"},
                        "Name": "Sales.Total",
                    }
                ],
            },
        },
    }
    layout = {
        "sections": [
            {
                "name": "ReportSection",
                "displayName": "Page 1",
                "visualContainers": [{"config": json.dumps(config)}],
            }
        ]
    }
    path = tmp_path / "Sales.pbit"
    _pbit(path, model, layout)
    g = registry.read(
        "powerbi", [str(path)], connection_map={"acme.snowflakecomputing.com/ANALYTICS": "analytics"}
    )
    ds, chart = "powerbi:bi_dataset:Sales.Sales", "powerbi:chart:Sales.ReportSection.vc1"
    assert _edges(g) == {
        ("analytics.mart.sales.amount", f"{ds}.Amount", "IDENTITY"),  # Snowflake folds AMOUNT
        ("analytics.mart.sales.amount", f"{ds}.Double", "TRANSFORMATION"),
        ("analytics.mart.sales.amount", f"{ds}.Total", "AGGREGATION"),
        (f"{ds}.Total", f'{chart}."Sales.Total"', "IDENTITY"),
    }
    assert not g.problems


def test_a_corrupt_pbit_is_an_error_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbit"
    bad.write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(InputError) as err:
        registry.read("powerbi", [str(bad)])
    assert "bad.pbit" in str(err.value) and "zip" in str(err.value)


def test_model_bim_query_partition_reads_its_sql_on_its_data_source(tmp_path: Path) -> None:
    sm = tmp_path / "Legacy.SemanticModel"
    sm.mkdir()
    bim = {
        "name": "Legacy",
        "model": {
            "dataSources": [
                {
                    "name": "SqlServer sql.example.com sales",
                    "connectionString": "Provider=SQLNCLI11;Data Source=sql.example.com;Initial Catalog=sales;Integrated Security=SSPI",
                }
            ],
            "tables": [
                {
                    "name": "Orders",
                    "columns": [
                        {"name": "Id", "sourceColumn": "OrderId"},
                        {"name": "Total", "sourceColumn": "Total"},
                    ],
                    "partitions": [
                        {
                            "name": "Orders",
                            "mode": "directQuery",
                            "source": {
                                "type": "query",
                                "query": "SELECT [OrderId], [Amount] * 2 AS [Total] FROM [dbo].[Orders]",
                                "dataSource": "SqlServer sql.example.com sales",
                            },
                        }
                    ],
                }
            ],
        },
    }
    (sm / "model.bim").write_text(json.dumps(bim))
    g = registry.read("powerbi", [str(sm)], connection_map={"sql.example.com/sales": "salesdb"})
    ds = "powerbi:bi_dataset:Legacy.Orders"
    assert {p.id: p.inputs for p in g.processes} == {ds: ["salesdb.dbo.orders"]}
    assert _edges(g) == {
        ("salesdb.dbo.orders.orderid", f"{ds}.Id", "IDENTITY"),
        ("salesdb.dbo.orders.amount", f"{ds}.Total", "TRANSFORMATION"),
    }
    assert not g.problems


def test_a_parameter_that_does_not_parse_is_named_in_the_warning_of_each_table_using_it(
    tmp_path: Path,
) -> None:
    proj = tmp_path / "shop"
    shutil.copytree(SHOP, proj)
    f = proj / "Shop.SemanticModel" / "definition" / "expressions.tmdl"
    f.write_text(
        f.read_text().replace('expression Server = "warehouse.example.com"', 'expression Server = "warehouse')
    )
    g = registry.read("powerbi", [str(proj)], connection_map=MAP)
    said = [p.message for p in g.problems if "does not parse" in p.message]
    # the tables on the shared Warehouse expression (PostgreSQL.Database(Server, Database)): no guess
    assert said and all("shared expression 'Server' does not parse: unterminated string" in m for m in said)
    assert not [p for p in g.processes if p.id in (FO, CU)]


def test_a_nested_join_expanded_gives_column_lineage_from_each_joined_table(tmp_path: Path) -> None:
    m = [
        "let",
        '    S = Sql.Database("srv", "db"),',
        '    o = S{[Schema="dbo",Item="orders"]}[Data],',
        '    c = S{[Schema="dbo",Item="customers"]}[Data],',
        '    j = Table.NestedJoin(o, {"customer_id"}, c, {"id"}, "c", JoinKind.LeftOuter),',
        '    e = Table.ExpandTableColumn(j, "c", {"name", "city"}, {"c.name", "city"})',
        "in",
        "    e",
    ]
    columns = [
        {"name": "Amount", "sourceColumn": "amount"},
        {"name": "Customer", "sourceColumn": "c.name"},
        {"name": "City", "sourceColumn": "city"},
    ]
    table = {
        "name": "Orders",
        "columns": columns,
        "partitions": [{"name": "Orders", "source": {"type": "m", "expression": m}}],
    }
    path = tmp_path / "Joined.pbit"
    _pbit(path, {"name": "x", "model": {"tables": [table]}})
    g = registry.read("powerbi", [str(path)], connection_map={"srv/db": "wh"})
    ds = "powerbi:bi_dataset:Joined.Orders"
    assert {p.id: p.inputs for p in g.processes} == {ds: ["wh.dbo.orders", "wh.dbo.customers"]}
    assert _edges(g) == {
        ("wh.dbo.orders.amount", f"{ds}.Amount", "IDENTITY"),  # the first table's column
        ("wh.dbo.customers.name", f"{ds}.Customer", "IDENTITY"),  # expanded: from the joined table
        ("wh.dbo.customers.city", f"{ds}.City", "IDENTITY"),
        ("wh.dbo.orders.customer_id", f"{ds}.*", "JOIN"),  # the join's keys
        ("wh.dbo.customers.id", f"{ds}.*", "JOIN"),
    }
    assert not g.problems  # column level: no "table-level lineage only" warning


def test_an_expand_of_a_column_that_is_not_the_joined_one_stays_table_level(tmp_path: Path) -> None:
    m = (
        'let S = Sql.Database("srv", "db"), o = S{[Schema="dbo",Item="orders"]}[Data], '
        'c = S{[Schema="dbo",Item="customers"]}[Data], j = Table.NestedJoin(o, {"customer_id"}, c, {"id"}, "c"), '
        'e = Table.ExpandTableColumn(j, "lines", {"sku"}) in e'
    )
    columns = [{"name": "Amount", "sourceColumn": "amount"}, {"name": "Sku", "sourceColumn": "sku"}]
    table = {
        "name": "Orders",
        "columns": columns,
        "partitions": [{"name": "Orders", "source": {"type": "m", "expression": m}}],
    }
    path = tmp_path / "Odd.pbit"
    _pbit(path, {"name": "x", "model": {"tables": [table]}})
    g = registry.read("powerbi", [str(path)], connection_map={"srv/db": "wh"})
    # "lines" is not the joined column: where sku comes from is not known, so no column is placed
    assert {p.id: p.inputs for p in g.processes} == {
        "powerbi:bi_dataset:Odd.Orders": ["wh.dbo.orders", "wh.dbo.customers"]
    }
    assert not g.edges
    (warning,) = g.problems
    assert warning.code == "powerbi-join" and "table-level lineage only" in warning.message
