"""Regenerate the ``python_udf`` case of this folder: a Python UDF in a projection and a filter.

Needs Java 17 and pyspark 4.x (4.0.1 used). ``python generate_udf.py OUT``.
"""

import contextlib
import io
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

OUT = sys.argv[1]
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")


def capture_df(case, df):
    qe = df._jdf.queryExecution()
    os.makedirs(f"{OUT}/{case}", exist_ok=True)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        df.explain(extended=True)
    for name, text in (
        ("analyzed.txt", qe.analyzed().toString()),
        ("analyzed.json", qe.analyzed().toJSON()),
        ("explain.txt", buf.getvalue()),
    ):
        with open(f"{OUT}/{case}/{name}", "w") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
    df.collect()


df = spark.createDataFrame([(1, "a"), (2, "b")], "id int, name string")
up = F.udf(lambda s: s.upper(), "string")
capture_df("python_udf", df.select("id", up("name").alias("uname")).where(up("name") != "A"))
print("done")
