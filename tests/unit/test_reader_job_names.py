"""The job a reader takes from its files' names: the first file by name (whatever order they are given
in), marked as taken from the name when one file's name is the job (``LineageGraph.job_from_name``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from atlas_sync.inputs import file_job
from atlas_sync.lineage import registry

ROOT = Path(__file__).resolve().parents[2]
CASES = {
    "sql": (ROOT / "examples/sql/etl.sql", ".sql", {"dialect": "spark"}),
    "spark-plan": (ROOT / "examples/spark-cars/cars.plan.txt", ".plan.txt", {}),
    "seatunnel": (ROOT / "examples/seatunnel/orders_to_dw.conf", ".conf", {}),
}


def test_the_job_of_several_files_is_the_first_by_name() -> None:
    assert file_job(["b.sql", "dir/a.x.sql"]) == file_job(["dir/a.x.sql", "b.sql"]) == "a"
    assert file_job(["-"]) == "stdin"
    assert file_job([".sql"], "sql") == "sql"


@pytest.mark.parametrize("reader", sorted(CASES))
def test_files_given_in_another_order_give_the_same_job_and_processes(tmp_path: Path, reader: str) -> None:
    source, ext, options = CASES[reader]
    a, b = tmp_path / f"alpha{ext}", tmp_path / f"beta{ext}"
    shutil.copy(source, a)
    shutil.copy(source, b)
    one = registry.read(reader, [str(a), str(b)], **options)
    other = registry.read(reader, [str(b), str(a)], **options)
    assert one.job == other.job == "alpha"
    assert sorted(p.id for p in one.processes) == sorted(p.id for p in other.processes)


@pytest.mark.parametrize("reader", sorted(CASES))
def test_one_files_name_is_a_job_taken_from_the_name_unless_a_job_is_given(
    tmp_path: Path, reader: str
) -> None:
    source, ext, options = CASES[reader]
    path = tmp_path / f"nightly{ext}"
    shutil.copy(source, path)
    graph = registry.read(reader, [str(path)], **options)
    assert graph.job == "nightly" and graph.job_from_name
    named = registry.read(reader, [str(path)], job="etl", **options)
    assert named.job == "etl" and not named.job_from_name


def test_a_spark_plan_that_writes_a_dataset_keeps_its_name_when_a_plan_is_added_before_it(
    tmp_path: Path,
) -> None:
    fixtures = ROOT / "tests/data/spark/fixtures"
    cte = (fixtures / "insert_into_cte/analyzed.txt").read_text(encoding="utf-8").strip()
    jdbc = (fixtures / "append_data_v2_jdbc/analyzed.txt").read_text(encoding="utf-8").strip()
    parquet = (fixtures / "write_parquet_path/analyzed.txt").read_text(encoding="utf-8").strip()
    path = tmp_path / "etl.plan.txt"
    path.write_text(cte + "\n\n" + jdbc + "\n", encoding="utf-8")
    before = [p.id for p in registry.read("spark-plan", [str(path)]).processes]
    assert before == ["etl:spark_catalog.default.tab3", "etl:jdb.app.customers_eu"]
    path.write_text(parquet + "\n\n" + cte + "\n\n" + jdbc + "\n", encoding="utf-8")
    after = [p.id for p in registry.read("spark-plan", [str(path)]).processes]
    assert after[1:] == before and after[0] == "etl:file:/tmp/sparkdata/out/sales_totals"


SPARK_FIXTURES = ROOT / "tests/data/spark/fixtures"
WRITES_TAB3 = SPARK_FIXTURES / "insert_into_cte/analyzed.txt"  # tab1, tabb2 -> spark_catalog.default.tab3
WRITES_JDBC = SPARK_FIXTURES / "append_data_v2_jdbc/analyzed.txt"  # -> jdb.app.customers_eu


def _spark_ids(paths: list[Path], **options: str) -> set[str]:
    return {p.id for p in registry.read("spark-plan", [str(p) for p in paths], **options).processes}


@pytest.mark.parametrize(
    ("options", "prefix"), [({}, ""), ({"job": "J"}, "J:")], ids=["job-from-names", "job-option"]
)
def test_spark_plan_files_that_write_named_tables_are_named_by_them_whatever_the_files_names_and_order(
    tmp_path: Path, options: dict[str, str], prefix: str
) -> None:
    a, b, c = (tmp_path / f"{n}.plan.txt" for n in "abc")
    shutil.copy(WRITES_JDBC, a)
    shutil.copy(WRITES_TAB3, b)
    shutil.copy(WRITES_JDBC, c)
    expected = {f"{prefix}jdb.app.customers_eu", f"{prefix}spark_catalog.default.tab3"}
    assert _spark_ids([a, b], **options) == expected
    assert _spark_ids([b, a], **options) == expected
    assert _spark_ids([c, b], **options) == expected


def test_a_spark_plan_file_that_writes_no_named_dataset_is_still_named_after_its_file(tmp_path: Path) -> None:
    cars, tab3 = tmp_path / "cars.plan.txt", tmp_path / "tab3.plan.txt"
    shutil.copy(ROOT / "examples/spark-cars/cars.plan.txt", cars)  # a query: writes result:cars/result
    shutil.copy(WRITES_TAB3, tab3)
    assert _spark_ids([tab3, cars]) == {"cars", "spark_catalog.default.tab3"}
    assert _spark_ids([tab3, cars], job="J") == {"J:2", "J:spark_catalog.default.tab3"}


def test_spark_plan_files_writing_one_table_are_numbered_by_their_plans_not_by_the_files(
    tmp_path: Path,
) -> None:
    text = WRITES_TAB3.read_text(encoding="utf-8")
    later = text.replace("Filter (id#31 > 100)", "Filter (id#31 > 500)")
    assert later != text
    a, b = tmp_path / "a.plan.txt", tmp_path / "b.plan.txt"
    a.write_text(text, encoding="utf-8")
    b.write_text(later, encoding="utf-8")

    def named(paths: list[Path]) -> dict[str, str]:
        graph = registry.read("spark-plan", [str(p) for p in paths])
        return {p.id: str(p.attributes["queryText"]) for p in graph.processes}

    first = named([a, b])
    assert sorted(first) == ["spark_catalog.default.tab3", "spark_catalog.default.tab3:2"]
    assert named([b, a]) == first
    a.write_text(later, encoding="utf-8")  # the files' contents swapped: the names follow the plans
    b.write_text(text, encoding="utf-8")
    assert named([a, b]) == first
    graph = registry.read("spark-plan", [str(a), str(b)])
    assert {e.process for e in graph.edges} == set(first)  # the column edges follow their process


SEATUNNEL = ROOT / "tests/data/seatunnel"


def _ids(reader: str, paths: list[Path], **options: str) -> set[str]:
    return {p.id for p in registry.read(reader, [str(p) for p in paths], **options).processes}


@pytest.mark.parametrize(("options", "prefix"), [({}, ""), ({"job": "J"}, "J:")], ids=["no-job", "job"])
def test_seatunnel_files_sinks_are_named_without_the_files_names_whatever_their_order(
    tmp_path: Path, options: dict[str, str], prefix: str
) -> None:
    a, b, c = (tmp_path / f"{n}.conf" for n in "abc")
    shutil.copy(SEATUNNEL / "mysql_to_pg.conf", a)  # -> dw.mart.orders
    shutil.copy(SEATUNNEL / "sql_transform.conf", b)  # -> ods.adults
    shutil.copy(SEATUNNEL / "mysql_to_pg.conf", c)
    expected = {f"{prefix}dw.mart.orders", f"{prefix}ods.adults"}
    assert _ids("seatunnel", [a, b], **options) == expected
    assert _ids("seatunnel", [b, a], **options) == expected
    assert _ids("seatunnel", [c, b], **options) == expected


def test_a_seatunnel_jobs_own_name_still_names_its_sinks_among_several_files(tmp_path: Path) -> None:
    a, named = tmp_path / "a.conf", tmp_path / "named.conf"
    shutil.copy(SEATUNNEL / "mysql_to_pg.conf", a)
    shutil.copy(SEATUNNEL / "two_jdbc_sources.conf", named)  # env { job.name = "customers_sync" }
    assert _ids("seatunnel", [named, a]) == {
        "dw.mart.orders",
        "customers_sync:lake.crm_customers",
        "customers_sync:lake.erp_customers",
    }


def test_seatunnel_files_writing_one_table_under_one_job_are_numbered_not_a_crash(tmp_path: Path) -> None:
    text = (SEATUNNEL / "sql_transform.conf").read_text(encoding="utf-8")
    a, b = tmp_path / "a.conf", tmp_path / "b.conf"
    a.write_text(text, encoding="utf-8")
    b.write_text(text.replace("age + 1", "age + 2"), encoding="utf-8")
    assert "age + 1" in text

    def named(paths: list[Path]) -> dict[str, set[str | None]]:
        graph = registry.read("seatunnel", [str(p) for p in paths], job="J")
        return {p.id: {e.expression for e in graph.edges if e.process == p.id} for p in graph.processes}

    first = named([a, b])
    assert sorted(first) == ["J:ods.adults", "J:ods.adults:2"]
    assert first["J:ods.adults"] != first["J:ods.adults:2"]
    assert named([b, a]) == first


def test_whaletunnel_files_sinks_are_named_without_the_files_names(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    shutil.copy(SEATUNNEL / "whaletunnel-minimal.json", a)  # no jobName: the job is the file's name
    shutil.copy(SEATUNNEL / "whaletunnel-minimal.json", b)
    assert sorted(_ids("whaletunnel", [a, b])) == ["mart.customer", "mart.customer:2"]
    assert sorted(_ids("whaletunnel", [b, a], job="J")) == ["J:mart.customer", "J:mart.customer:2"]
