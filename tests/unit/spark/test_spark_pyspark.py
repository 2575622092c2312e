"""Optional: run the seed's Spark job with real pyspark, read its plan and sync it (needs pyspark + Java).

Skipped unless ``pyspark`` is importable and ``java`` is on PATH (``pip install pyspark``; Java 17 for
Spark 4). Marked ``pyspark``: ``pytest -m pyspark`` runs only these. One JVM start takes ~10 s.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

from atlas_sync.factory import embedded_client

pytestmark = pytest.mark.pyspark

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install pyspark)")
if shutil.which("java") is None:
    pytest.skip("no java on PATH (pyspark needs a JVM)", allow_module_level=True)


@pytest.fixture(scope="module")
def seed_plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The seed job (spark-plan-to-atlas.txt) ported to PySpark; its analyzed plan, JSON and explain."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    out = tmp_path_factory.mktemp("seed")
    cars = out / "cars.csv"
    cars.write_text("model,manufacturer\nModel S,Tesla\nModel 3,Tesla\nMustang,Ford\nCivic,Honda\n")
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("Logical Plan Example")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    try:
        cars_csv = spark.read.option("header", "true").csv(str(cars))
        cars_seq = spark.createDataFrame(
            [("i8", "BMW"), ("A4", "Audi"), ("911", "Porsche"), ("Corolla", "Toyota")],
            ["model", "manufacturer"],
        )
        res = (
            cars_csv.union(cars_seq)
            .where(F.col("manufacturer") != "Audi")
            .select("model", "manufacturer")
            .withColumn("processedDDTM", F.current_timestamp())
        )
        qe = res._jdf.queryExecution()
        (out / "analyzed.txt").write_text(qe.analyzed().toString())
        (out / "analyzed.json").write_text(qe.analyzed().toJSON())
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            res.explain(extended=True)
        (out / "explain.txt").write_text(buf.getvalue())
        assert res.count() == 7  # 4 csv rows + 4 in-memory rows - the Audi
    finally:
        spark.stop()
    return {"dir": out, "cars": cars}


def test_real_plan_reads_with_column_lineage(seed_plans: dict[str, Path]) -> None:
    from atlas_sync.lineage.readers.spark_plan import JSON_READER, TEXT_READER

    d = seed_plans["dir"]
    cars = "file:" + str(seed_plans["cars"])
    g = TEXT_READER.read([str(d / "explain.txt")], job="seed")
    assert cars in g.end_to_end_tables()["read"]
    direct = {(e.source.dataset, e.source.column, e.target.column) for e in g.edges if e.kind == "IDENTITY"}
    assert (cars, "model", "model") in direct and (cars, "manufacturer", "manufacturer") in direct
    assert {e.kind for e in g.edges if e.target.column is None} == {"FILTER"}
    js = JSON_READER.read([str(d / "analyzed.json")], job="seed", explain=str(d / "explain.txt"))
    assert {(e.source.dataset, e.source.column, e.target.column, e.kind) for e in js.edges} == {
        (e.source.dataset, e.source.column, e.target.column, e.kind) for e in g.edges
    }


def test_real_plan_syncs_with_the_pico_profile(seed_plans: dict[str, Path]) -> None:
    from atlas_sync.api import Publisher

    pub = Publisher(embedded_client(None), profile="pico", domain="picoDomain")
    graph = pub.read("spark-plan", [str(seed_plans["dir"] / "analyzed.txt")], job="seed")
    first = pub.sync(graph)
    # 6 operators (Project, Project, Filter, Union, LogicalRelation, LogicalRDD), 5 intermediates, input, output
    assert first.plan.counts["create"] == 13
    again = pub.sync(pub.read("spark-plan", [str(seed_plans["dir"] / "analyzed.txt")], job="seed"))
    assert again.plan.counts["create"] == 0 and again.plan.counts["update"] == 0
