"""Regenerate the Hive and DataSource V2 command cases of this folder (hive_*, v2_*, one_row_and_values).

Needs Java 17 and pyspark 4.x (4.0.1 used); Hive support (bundled jars, a Derby metastore under
/tmp/sparkdata4) and Spark's JDBC V2 catalog over in-memory Derby. ``python generate_hive_v2.py OUT``.
"""

import contextlib
import io
import os
import shutil
import sys

from pyspark.sql import SparkSession

DATA = "/tmp/sparkdata4"
WAREHOUSE = DATA + "/warehouse"
OUT = sys.argv[1]
shutil.rmtree(DATA, ignore_errors=True)
os.makedirs(DATA, exist_ok=True)
spark = (
    SparkSession.builder.master("local[1]")
    .appName("extra")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.sql.warehouse.dir", WAREHOUSE)
    .config("spark.sql.catalogImplementation", "hive")
    .config("javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={DATA}/metastore_db;create=true")
    .config("spark.sql.session.timeZone", "UTC")
    .enableHiveSupport()
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
_jvm = spark._jvm
_jvm.java.lang.System.setProperty("derby.stream.error.file", DATA + "/derby.log")


def write(case, name, text):
    os.makedirs(f"{OUT}/{case}", exist_ok=True)
    with open(f"{OUT}/{case}/{name}", "w") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")


def write_qe(case, qe, explain):
    write(case, "analyzed.txt", qe.analyzed().toString())
    write(case, "analyzed.json", qe.analyzed().toJSON())
    write(case, "optimized.txt", qe.optimizedPlan().toString())
    write(case, "explain.txt", explain)


def capture_df(case, df):
    qe = df._jdf.queryExecution()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        df.explain(extended=True)
    write_qe(case, qe, buf.getvalue())
    df.collect()


def capture_sql(case, sql):
    session = spark._jsparkSession
    parsed = session.sessionState().sqlParser().parsePlan(sql)
    qe = session.sessionState().executePlan(
        parsed, _jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
    )
    write_qe(case, qe, _jvm.org.apache.spark.sql.api.python.PythonSQLUtils.explainString(qe, "extended"))
    spark.sql(sql).collect()


spark.sql("CREATE TABLE hsrc (id INT, name STRING) STORED AS TEXTFILE")
spark.sql("INSERT INTO hsrc VALUES (1, 'a'), (2, 'b')")
spark.sql("CREATE TABLE htgt (id INT, name STRING) STORED AS TEXTFILE")
capture_df("hive_select", spark.sql("SELECT id, upper(name) AS uname FROM hsrc WHERE id > 1"))
capture_sql("hive_insert", "INSERT INTO htgt SELECT id, name FROM hsrc")
capture_sql(
    "hive_ctas", "CREATE TABLE hctas STORED AS TEXTFILE AS SELECT id, concat(name, '!') AS n FROM hsrc"
)
spark.conf.set("spark.sql.catalog.jdb", "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog")
spark.conf.set("spark.sql.catalog.jdb.url", "jdbc:derby:memory:extra;create=true")
spark.conf.set("spark.sql.catalog.jdb.driver", "org.apache.derby.jdbc.EmbeddedDriver")
spark.sql("CREATE TABLE jdb.app.src (id INT, name VARCHAR(20), country VARCHAR(2))")
spark.sql("INSERT INTO jdb.app.src VALUES (1,'ann','NL'),(2,'bob','US')")
capture_sql(
    "v2_ctas",
    "CREATE TABLE jdb.app.dst AS SELECT id, lower(name) AS name FROM jdb.app.src WHERE country = 'NL'",
)
capture_sql("v2_overwrite", "INSERT OVERWRITE jdb.app.dst SELECT id, name FROM jdb.app.src")
spark.createDataFrame([(1, "x")], "id int, v string").createOrReplaceTempView("tv")
capture_df("one_row_and_values", spark.sql("SELECT 1 AS one, current_date() AS d"))
print("done")
