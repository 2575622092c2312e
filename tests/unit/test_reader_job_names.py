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
