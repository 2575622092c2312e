"""The `powerbi` reader on real .pbix files saved by Power BI Desktop (pbixray's MIT test data,
tests/data/powerbi/pbixray/README.md), read through pbixray; expectations written by hand from the
files' partitions (their SQL) and report layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry

pytest.importorskip("pbixray", reason="pip install 'atlas-sync[pbix]' (pbixray) to read .pbix files")

DATA = Path(__file__).resolve().parents[2] / "data" / "powerbi" / "pbixray"
DQ = "powerbi:bi_dataset:directquery-parameters."
PAGE = "powerbi:chart:directquery-parameters.ReportSection."


def test_directquery_pbix_tables_come_from_their_sql_and_visuals_from_the_layout() -> None:
    g = registry.read("powerbi", [str(DATA / "directquery-parameters.pbix")])
    io = {p.id: p.inputs for p in g.processes}
    # select [col], ... from [dbo].[T] as [$Table] (T-SQL: names fold to lower case as the SQL reader's)
    assert io[DQ + "DimDate"] == ["dbo.dimdate"]
    assert io[DQ + "FactResellerSales"] == ["dbo.factresellersales"]
    assert io[DQ + "DimReseller"] == ["dbo.dimreseller"]
    assert io[DQ + "DimProduct"] == ["dbo.dimproduct"]
    year, color = PAGE + "b37ef1bc7e82875d8e3b", PAGE + "e646567e5db750a8a684"
    assert io[year] == [DQ + "DimDate", DQ + "FactResellerSales"]
    assert io[color] == [DQ + "DimProduct", DQ + "FactResellerSales"]
    assert g.dataset(year).facets["chartType"] == "clusteredColumnChart"  # type: ignore[union-attr]
    edges = {(str(e.source), str(e.target), e.kind) for e in g.edges}
    assert ("dbo.factresellersales.salesamount", f"{DQ}FactResellerSales.SalesAmount", "IDENTITY") in edges
    assert ("dbo.dimdate.calendaryear", f"{DQ}DimDate.CalendarYear", "IDENTITY") in edges
    assert (
        f"{DQ}FactResellerSales.SalesAmount",
        f'{year}."Sum(FactResellerSales.SalesAmount)"',
        "AGGREGATION",
    ) in edges
    assert (f"{DQ}DimProduct.Color", f'{color}."DimProduct.Color"', "IDENTITY") in edges
    # 8 + 7 + 6 + 8 columns in the four queries, 4 fields on the two visuals
    assert len(edges) == 8 + 7 + 6 + 8 + 4
    # the data source's connection string is encrypted in the file: said, not guessed
    (warning,) = g.problems
    assert warning.code == "powerbi-unmapped-connection" and "unknown server" in warning.message


def test_live_connection_pbix_reads_what_its_report_names_and_says_so() -> None:
    g = registry.read("powerbi", [str(DATA / "live-connection-ssas.pbix")])
    charts = {d.id for d in g.datasets if d.kind == "chart"}
    assert len(charts) == 2
    assert {d.name for d in g.datasets if d.kind == "bi_dataset"} == {
        "Date",
        "Product",
        "Sales",
        "Threshold Best Products",
    }
    (warning,) = g.problems
    assert warning.code == "powerbi-live-connection"


def test_tables_typed_into_the_file_have_no_upstream_and_no_warning() -> None:
    g = registry.read("powerbi", [str(DATA / "abc.pbix")])
    assert {d.id for d in g.datasets if d.kind == "bi_dataset"} == {
        "powerbi:bi_dataset:abc.ABC",
        "powerbi:bi_dataset:abc.BrokenColumns",
    }
    assert not g.processes and not g.problems  # no upstream; the page has no visual with fields


def test_a_corrupt_pbix_is_an_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbix"
    bad.write_bytes((DATA / "abc.pbix").read_bytes()[:5000])
    with pytest.raises(InputError) as err:
        registry.read("powerbi", [str(bad)])
    assert "bad.pbix" in str(err.value)
