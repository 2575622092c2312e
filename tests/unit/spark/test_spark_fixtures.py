"""Every shared real-Spark fixture against its hand-written expected.md (job mode, lineage profile).

The expectations below are transcribed by hand from each case's ``expected.md`` in
``../shared/fixtures/spark/`` (dataset names as the README's conventions give them). ``LOCAL`` stands for
the case's one anonymous in-memory dataset and ``RESULT`` for the unpersisted result DataFrame; both are
looked up by kind rather than by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from spark_test_support import (
    CASES,
    FIXTURES,
    FIXTURES35,
    direct_edges,
    indirect_edges,
    read_json_plan,
    read_text_plan,
)

from atlas_sync.lineage.model import LineageGraph

ID, T, A = "IDENTITY", "TRANSFORMATION", "AGGREGATION"


@dataclass
class Expected:
    sources: set[str]
    target: str
    direct: set[tuple[str, str, str, str]]  # (source dataset, source column, target column, kind)
    indirect: set[tuple[str, str, str]] = field(default_factory=set)  # (source dataset, column, kind)


CARS = "file:/tmp/sparkdata/cars.csv"
ORDERS = "file:/tmp/sparkdata/orders.parquet"
CUSTOMERS = "file:/tmp/sparkdata/customers.parquet"
SALES = "file:/tmp/sparkdata/sales.json"
VISITS = "file:/tmp/sparkdata/visits.csv"
EMP, DEPT, PROJ = (f"spark_catalog.default.{t}" for t in ("emp", "dept", "proj"))
S23, S24 = "spark_catalog.default.sales_2023", "spark_catalog.default.sales_2024"
TAB1, TABB2, TAB3 = (f"spark_catalog.default.{t}" for t in ("tab1", "tabb2", "tab3"))
SRC, EU = "jdb.app.customers_src", "jdb.app.customers_eu"
OUT = "file:/tmp/sparkdata/out/sales_totals"

EXPECTED: dict[str, Expected] = {
    "cars_union_filter": Expected(
        {CARS, "LOCAL"},
        "RESULT",
        {
            (CARS, "model", "model", ID),
            ("LOCAL", "model", "model", ID),
            (CARS, "manufacturer", "manufacturer", ID),
            ("LOCAL", "manufacturer", "manufacturer", ID),
        },
        {(CARS, "manufacturer", "FILTER"), ("LOCAL", "manufacturer", "FILTER")},
    ),
    "inner_join_parquet": Expected(
        {ORDERS, CUSTOMERS},
        "RESULT",
        {
            (ORDERS, "order_id", "order_id", ID),
            (CUSTOMERS, "name", "customer_name", ID),
            (CUSTOMERS, "country", "country", ID),
            (ORDERS, "amount", "amount", ID),
        },
        {(ORDERS, "customer_id", "JOIN"), (CUSTOMERS, "customer_id", "JOIN")},
    ),
    "groupby_agg_json": Expected(
        {SALES},
        "RESULT",
        {
            (SALES, "region", "region", ID),
            (SALES, "qty", "revenue", A),
            (SALES, "price", "revenue", A),
            (SALES, "price", "max_price", A),
        },
        {(SALES, "region", "GROUP_BY")},
    ),
    "subquery_in_exists": Expected(
        {EMP, DEPT, PROJ},
        "RESULT",
        {(EMP, "emp_id", "emp_id", ID), (EMP, "emp_name", "emp_name", ID), (EMP, "salary", "salary", ID)},
        {
            (EMP, "dept_id", "FILTER"),
            (DEPT, "dept_id", "FILTER"),
            (DEPT, "region", "FILTER"),
            (EMP, "emp_id", "FILTER"),
            (PROJ, "emp_id", "FILTER"),
            (PROJ, "status", "FILTER"),
        },
    ),
    "union_all_three": Expected(
        {S23, S24, "LOCAL"},
        "RESULT",
        {
            (S23, "id", "id", ID),
            (S24, "id", "id", ID),
            ("LOCAL", "id", "id", ID),
            (S23, "amount", "amount", ID),
            (S24, "amount", "amount", ID),
            ("LOCAL", "amount", "amount", T),
        },
    ),
    "distinct_dedup": Expected(
        {VISITS},
        "RESULT",
        {(VISITS, "user", "user", ID), (VISITS, "page", "page", ID)},
        {(VISITS, "user", "GROUP_BY"), (VISITS, "page", "GROUP_BY")},
    ),
    "sort_limit": Expected(
        {ORDERS},
        "RESULT",
        {
            (ORDERS, "order_id", "order_id", ID),
            (ORDERS, "customer_id", "customer_id", ID),
            (ORDERS, "amount", "amount", ID),
        },
        {(ORDERS, "amount", "SORT"), (ORDERS, "order_id", "SORT")},
    ),
    "rename_drop": Expected(
        {CUSTOMERS},
        "RESULT",
        {
            (CUSTOMERS, "customer_id", "customer_id", ID),
            (CUSTOMERS, "name", "customer_name", ID),
            (CUSTOMERS, "country", "country_code", ID),
        },
    ),
    "insert_into_cte": Expected(
        {TAB1, TABB2},
        TAB3,
        {
            (TAB1, "id", "id", ID),
            (TAB1, "name", "name", T),
            (TABB2, "name", "name", T),
            (TABB2, "age", "age", ID),
        },
        {
            (TAB1, "id", "FILTER"),
            (TABB2, "age", "FILTER"),
            (TAB1, "id", "GROUP_BY"),
            (TAB1, "name", "GROUP_BY"),
            (TAB1, "id", "JOIN"),
            (TABB2, "id", "JOIN"),
        },
    ),
    "write_parquet_path": Expected(
        {SALES},
        OUT,
        {
            (SALES, "region", "region", ID),
            (SALES, "product", "product", ID),
            (SALES, "qty", "total", T),
            (SALES, "price", "total", T),
        },
        {(SALES, "qty", "FILTER")},
    ),
    "append_data_v2_jdbc": Expected(
        {SRC},
        EU,
        {(SRC, "id", "id", ID), (SRC, "name", "name", T)},
        {(SRC, "country", "FILTER")},
    ),
}


def test_every_fixture_has_expectations() -> None:
    assert set(CASES) == set(EXPECTED)


def _resolve(g: LineageGraph, name: str) -> str:
    if name == "LOCAL":
        locals_ = [d.id for d in g.datasets if d.kind == "local"]
        assert len(locals_) == 1, locals_
        return locals_[0]
    if name == "RESULT":
        results = [d.id for d in g.datasets if d.kind == "query"]
        assert len(results) == 1, results
        return results[0]
    return name


def _check(g: LineageGraph, exp: Expected) -> None:
    sources = {_resolve(g, s) for s in exp.sources}
    target = _resolve(g, exp.target)
    tables = g.end_to_end_tables()
    assert set(tables["read"]) == sources and len(tables["read"]) == len(sources)
    assert tables["write"] == [target]
    [proc] = g.processes
    assert set(proc.inputs) == sources and proc.outputs == [target]
    assert direct_edges(g) == {(_resolve(g, s), c, t, k) for s, c, t, k in exp.direct}
    assert indirect_edges(g) == {(_resolve(g, s), c, k) for s, c, k in exp.indirect}
    assert all(e.target.dataset == target for e in g.edges)
    assert g.check() == []


VERSIONS = {"spark4.3": FIXTURES, "spark3.5": FIXTURES35}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_analyzed_text_with_explain_matches_expected(case: str, version: str) -> None:
    folder = VERSIONS[version] / case
    g = read_text_plan(folder / "analyzed.txt", explain=str(folder / "explain.txt"))
    _check(g, EXPECTED[case])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_explain_output_alone_matches_expected(case: str, version: str) -> None:
    g = read_text_plan(VERSIONS[version] / case / "explain.txt")
    _check(g, EXPECTED[case])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_analyzed_json_with_explain_matches_expected(case: str, version: str) -> None:
    folder = VERSIONS[version] / case
    g = read_json_plan(folder / "analyzed.json", explain=str(folder / "explain.txt"))
    _check(g, EXPECTED[case])


def test_target_columns_map_by_position_to_the_command_column_list() -> None:
    g = read_text_plan(FIXTURES / "insert_into_cte" / "analyzed.txt")
    tab3 = g.dataset(TAB3)
    assert tab3 is not None and tab3.column_names() == ["id", "name", "age"]
    assert tab3.facets["writeMode"] == "Append"


def test_unused_columns_get_no_lineage() -> None:
    g = read_text_plan(FIXTURES / "insert_into_cte" / "explain.txt")
    # C computes max(age) of tab1 but nobody selects it
    assert not any(
        e.source == e.source.model_copy(update={"dataset": TAB1, "column": "age"}) for e in g.edges
    )
    g = read_text_plan(FIXTURES / "rename_drop" / "explain.txt")
    assert not any(e.source.column == "segment" for e in g.edges)


def test_file_paths_come_from_the_explain_physical_plan_or_the_path_option() -> None:
    without = read_text_plan(FIXTURES / "groupby_agg_json" / "analyzed.txt")
    assert [p.code for p in without.problems] == ["spark-path-unknown"]
    assert not any(d.id == SALES for d in without.datasets)
    given = read_text_plan(FIXTURES / "groupby_agg_json" / "analyzed.txt", path="/tmp/sparkdata/sales.json")
    assert given.end_to_end_tables()["read"] == [SALES]
    assert given.problems == []
    src = given.dataset(SALES)
    assert src is not None and src.namespace == "file" and src.name == "/tmp/sparkdata/sales.json"
    assert src.facets["format"] == "json"


def test_catalog_tables_get_their_location_from_explain() -> None:
    g = read_text_plan(FIXTURES / "subquery_in_exists" / "explain.txt")
    emp = g.dataset(EMP)
    assert emp is not None
    assert (emp.namespace, emp.name, emp.kind) == ("spark_catalog.default", "emp", "table")
    assert emp.facets == {"format": "parquet", "location": "file:/tmp/sparkdata/warehouse/emp"}


def test_optimized_subquery_plan_reads_as_semi_joins() -> None:
    """expected.md accepts JOIN for the keys and FILTER for the predicates when reading optimized.txt."""
    g = read_text_plan(FIXTURES / "subquery_in_exists" / "optimized.txt")
    assert indirect_edges(g) == {
        (EMP, "dept_id", "JOIN"),
        (DEPT, "dept_id", "JOIN"),
        (EMP, "emp_id", "JOIN"),
        (PROJ, "emp_id", "JOIN"),
        (DEPT, "region", "FILTER"),
        (PROJ, "status", "FILTER"),
    }


def test_inferred_not_null_filters_of_optimized_plans_add_no_dependency() -> None:
    g = read_text_plan(FIXTURES / "inner_join_parquet" / "optimized.txt", path=[ORDERS, CUSTOMERS])
    assert indirect_edges(g) == {(ORDERS, "customer_id", "JOIN"), (CUSTOMERS, "customer_id", "JOIN")}


def test_pushed_down_filter_is_lost_only_in_the_optimized_v2_plan() -> None:
    g = read_text_plan(FIXTURES / "append_data_v2_jdbc" / "optimized.txt")
    assert direct_edges(g) == {(SRC, "id", "id", ID), (SRC, "name", "name", T)}
    assert indirect_edges(g) == set()


@pytest.mark.parametrize("case", CASES)
def test_parsed_plans_read_without_errors(case: str) -> None:
    """Parsed (unresolved) plans have no exprIds: no column lineage, but the tree and table names."""
    g = read_text_plan(FIXTURES / case / "logical.txt")
    assert not g.has_errors
    assert len(g.processes) == 1
    assert g.check() == []
