"""The seed's cars job in PySpark: writes its logical plan to cars.plan.txt for atlas-sync.

    pip install pyspark          # needs Java 17+
    python cars_job.py           # reads cars.csv next to this script, writes cars.plan.txt
    atlas-sync sync --domain cars --profile pico cars.plan.txt

The seed wrote the same job in Scala; its plan (printed by Spark 3.x) is the cars.plan.txt that ships
here. PySpark turns a Python list into a LogicalRDD rather than Scala's LocalRelation, and Spark 4
prints a few details differently; atlas-sync reads either form.
"""

from __future__ import annotations

import datetime
import pathlib

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

HERE = pathlib.Path(__file__).resolve().parent

spark = SparkSession.builder.appName("Logical Plan Example").master("local[1]").getOrCreate()

cars_csv = spark.read.option("header", "true").csv(str(HERE / "cars.csv"))
cars_seq = spark.createDataFrame(
    [("i8", "BMW"), ("A4", "Audi"), ("911", "Porsche"), ("Corolla", "Toyota")],
    ["model", "manufacturer"],
)

result = (
    cars_csv.union(cars_seq)
    .where(F.col("manufacturer") != "Audi")
    .select("model", "manufacturer")
    .withColumn("processedDDTM", F.lit(datetime.datetime.now()))
)

# The logical plan as Spark prints it (df.queryExecution.logical in Scala).
plan = result._jdf.queryExecution().logical().toString()
(HERE / "cars.plan.txt").write_text(plan + "\n", encoding="utf-8")
print(plan)
spark.stop()
