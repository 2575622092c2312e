"""The `powerbi` reader on real .pbix files saved by Power BI Desktop (pbixray's MIT test data,
tests/data/powerbi/pbixray/README.md), read through pbixray. Every expectation here is written by hand
from the files themselves: their model's partitions (the SQL of each), columns (their sourceColumn) and
the report layout's visuals (`Report/Layout`), read with a script printing the raw content, never from
the reader's output."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import LineageGraph

pytest.importorskip("pbixray", reason="pip install 'atlas-sync[pbix]' (pbixray) to read .pbix files")

DATA = Path(__file__).resolve().parents[2] / "data" / "powerbi" / "pbixray"
DQ = "powerbi:bi_dataset:directquery-parameters."
PAGE = "powerbi:chart:directquery-parameters.ReportSection."
YEAR, COLOR = PAGE + "b37ef1bc7e82875d8e3b", PAGE + "e646567e5db750a8a684"

# the four tables of directquery-parameters.pbix: each column's sourceColumn is its name, and each
# table's partition is `select [col], ... from [dbo].[T] as [$Table]` naming exactly these columns
DQ_COLUMNS = {
    "DimDate": [
        "DateKey", "FullDateAlternateKey", "DayNumberOfWeek", "EnglishDayNameOfWeek", "DayNumberOfMonth",
        "EnglishMonthName", "MonthNumberOfYear", "CalendarYear",
    ],
    "FactResellerSales": [
        "ProductKey", "OrderDateKey", "ResellerKey", "SalesOrderNumber", "SalesOrderLineNumber",
        "OrderQuantity", "SalesAmount",
    ],
    "DimReseller": [
        "ResellerKey", "ResellerAlternateKey", "BusinessType", "ResellerName", "OrderFrequency", "ProductLine",
    ],
    "DimProduct": [
        "ProductKey", "ProductAlternateKey", "EnglishProductName", "Color", "SizeRange", "ProductLine",
        "Class", "Style",
    ],
}  # fmt: skip


def _datasets(g: LineageGraph) -> dict[str, tuple[str, set[str]]]:
    return {d.id: (d.kind, set(d.column_names())) for d in g.datasets}


def _edges(g: LineageGraph) -> set[tuple[str, str | None, str, str | None, str]]:
    return {(e.source.dataset, e.source.column, e.target.dataset, e.target.column, e.kind) for e in g.edges}


# the model's data source is stored encrypted; the file's DataMashup (Formulas/Section1.m) names it:
# shared ServerName = "localhost\v2017", DatabaseName = "AdventureWorksDW2014", and each table's query
# Sql.Database(ServerName, DatabaseName){[Schema="dbo",Item=<table>]}[Data]
AW = {"localhost\\v2017/AdventureWorksDW2014": "aw"}


def test_directquery_pbix_gives_exactly_its_tables_columns_and_visuals() -> None:
    g = registry.read("powerbi", [str(DATA / "directquery-parameters.pbix")], connection_map=AW)
    expected = {DQ + t: ("bi_dataset", set(cols)) for t, cols in DQ_COLUMNS.items()}
    # the warehouse tables their SQL reads (T-SQL: names fold to lower case as the SQL reader's)
    expected |= {f"aw.dbo.{t.lower()}": ("table", set()) for t in DQ_COLUMNS}
    # the report: one page (ReportSection, "Page 1") of two visuals, each with two fields
    expected[YEAR] = ("chart", {"DimDate.CalendarYear", "Sum(FactResellerSales.SalesAmount)"})
    expected[COLOR] = ("chart", {"DimProduct.Color", "Sum(FactResellerSales.OrderQuantity)"})
    expected["powerbi:dashboard:directquery-parameters.ReportSection"] = ("dashboard", set())
    assert _datasets(g) == expected
    assert {p.id: p.inputs for p in g.processes} == {
        **{DQ + t: [f"aw.dbo.{t.lower()}"] for t in DQ_COLUMNS},
        YEAR: [DQ + "DimDate", DQ + "FactResellerSales"],
        COLOR: [DQ + "DimProduct", DQ + "FactResellerSales"],
        "powerbi:dashboard:directquery-parameters.ReportSection": [YEAR, COLOR],
    }
    column_edges = {
        (f"aw.dbo.{t.lower()}", c.lower(), DQ + t, c, "IDENTITY")
        for t, cols in DQ_COLUMNS.items()
        for c in cols
    }
    visual_edges = {
        (DQ + "DimDate", "CalendarYear", YEAR, "DimDate.CalendarYear", "IDENTITY"),
        (DQ + "FactResellerSales", "SalesAmount", YEAR, "Sum(FactResellerSales.SalesAmount)", "AGGREGATION"),
        (DQ + "DimProduct", "Color", COLOR, "DimProduct.Color", "IDENTITY"),
        (
            DQ + "FactResellerSales",
            "OrderQuantity",
            COLOR,
            "Sum(FactResellerSales.OrderQuantity)",
            "AGGREGATION",
        ),
    }
    assert _edges(g) == column_edges | visual_edges
    assert g.dataset(YEAR).facets["chartType"] == "clusteredColumnChart"  # type: ignore[union-attr]
    assert g.dataset(COLOR).facets["chartType"] == "barChart"  # type: ignore[union-attr]
    assert not g.problems


def test_directquery_pbix_without_a_map_names_the_server_of_its_data_mashup() -> None:
    g = registry.read("powerbi", [str(DATA / "directquery-parameters.pbix")])
    assert {d.id for d in g.datasets if d.kind == "table"} == {f"dbo.{t.lower()}" for t in DQ_COLUMNS}
    (warning,) = g.problems
    assert warning.code == "powerbi-unmapped-connection"
    assert "v2017/AdventureWorksDW2014" in warning.message and "(sqlserver)" in warning.message


LIVE = "powerbi:bi_dataset:live-connection-ssas."
PIVOT = "powerbi:chart:live-connection-ssas.ReportSection.1e106986d9db0be0e78c"
SLICER = "powerbi:chart:live-connection-ssas.ReportSection.f87d9f0dc9259789aba1"


def test_live_connection_pbix_gives_exactly_the_tables_and_fields_its_report_names() -> None:
    g = registry.read("powerbi", [str(DATA / "live-connection-ssas.pbix")])
    # no model in the file: the tables and fields are those the visuals' prototype queries name
    assert _datasets(g) == {
        LIVE + "Date": ("bi_dataset", {"Calendar Year"}),
        LIVE + "Product": ("bi_dataset", {"Brand"}),
        LIVE + "Sales": ("bi_dataset", {"Top Sales Amount"}),
        LIVE + "Threshold Best Products": ("bi_dataset", {"Threshold Best Products"}),
        PIVOT: ("chart", {"Date.Calendar Year", "Product.Brand", "Sales.Top Sales Amount"}),
        SLICER: ("chart", {"Threshold Best Products.Threshold Best Products"}),
        # the page's third visual is a text box: no chart
        "powerbi:dashboard:live-connection-ssas.ReportSection": ("dashboard", set()),
    }
    assert {p.id: p.inputs for p in g.processes} == {
        PIVOT: [LIVE + "Date", LIVE + "Product", LIVE + "Sales"],
        SLICER: [LIVE + "Threshold Best Products"],
        "powerbi:dashboard:live-connection-ssas.ReportSection": [PIVOT, SLICER],
    }
    assert _edges(g) == {
        (LIVE + "Date", "Calendar Year", PIVOT, "Date.Calendar Year", "IDENTITY"),
        (LIVE + "Product", "Brand", PIVOT, "Product.Brand", "IDENTITY"),
        (LIVE + "Sales", "Top Sales Amount", PIVOT, "Sales.Top Sales Amount", "IDENTITY"),
        (
            LIVE + "Threshold Best Products",
            "Threshold Best Products",
            SLICER,
            "Threshold Best Products.Threshold Best Products",
            "IDENTITY",
        ),
    }
    (warning,) = g.problems
    assert warning.code == "powerbi-live-connection"
    # the file's Connections part names the Analysis Services database it is live on
    assert ".\\tab17" in warning.message and "TableFunctionsDetailRows" in warning.message


def test_tables_typed_into_the_file_have_exactly_their_columns_no_upstream_and_no_warning() -> None:
    g = registry.read("powerbi", [str(DATA / "abc.pbix")])
    # Table.FromRows(Json.Document(...)) typed as [Col1, Col2] and [ID, FileName, Name, Type]
    assert _datasets(g) == {
        "powerbi:bi_dataset:abc.ABC": ("bi_dataset", {"Col1", "Col2"}),
        "powerbi:bi_dataset:abc.BrokenColumns": ("bi_dataset", {"ID", "FileName", "Name", "Type"}),
        "powerbi:dashboard:abc.ReportSection": ("dashboard", set()),  # "Page 1", no visual
    }
    assert not g.processes and not g.edges and not g.problems


def test_a_corrupt_pbix_is_an_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbix"
    bad.write_bytes((DATA / "abc.pbix").read_bytes()[:5000])
    with pytest.raises(InputError) as err:
        registry.read("powerbi", [str(bad)])
    assert "bad.pbix" in str(err.value)


def test_a_damaged_data_mashup_leaves_the_server_unknown_and_said(tmp_path: Path) -> None:
    damaged = tmp_path / "dq.pbix"
    with zipfile.ZipFile(DATA / "directquery-parameters.pbix") as src, zipfile.ZipFile(damaged, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            dst.writestr(item, data[:40] if item.filename == "DataMashup" else data)
    g = registry.read("powerbi", [str(damaged)], connection_map=AW)
    assert {d.id for d in g.datasets if d.kind == "table"} == {f"dbo.{t.lower()}" for t in DQ_COLUMNS}
    (warning,) = g.problems
    assert warning.code == "powerbi-unmapped-connection" and "unknown server" in warning.message
