"""Regenerate the plans in this folder.

Written for atlas-sync's Spark reader tests: node kinds the shared fixtures do not cover (Window,
Generate, Expand, CTAS, CASE/if, views, Intersect/Except, scalar subqueries, struct fields, pivots,
CTEs used twice, unionByName, partitioned writes, ...). Needs Java 17 and pyspark (4.0.1 was used:
``pip install pyspark==4.0.1``); each case writes analyzed.txt, analyzed.json, optimized.txt,
logical.txt and explain.txt into OUT/<case> (only analyzed.txt, analyzed.json and explain.txt are kept
here). Run: ``python generate.py [OUT]`` (about 40 s; one JVM for all cases, so ids depend on run order).
"""

import contextlib
import io
import os
import shutil
import sys
import time

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

DATA = "/tmp/sparkdata2"
WAREHOUSE = DATA + "/warehouse"
OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/heldout"
shutil.rmtree(DATA, ignore_errors=True)  # managed-table folders left by an earlier run block CTAS
os.makedirs(DATA, exist_ok=True)
spark = (
    SparkSession.builder.master("local[1]")
    .appName("heldout")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.sql.warehouse.dir", WAREHOUSE)
    .config("spark.sql.catalogImplementation", "in-memory")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
_jvm = spark._jvm


def write(case, name, text):
    os.makedirs(f"{OUT}/{case}", exist_ok=True)
    with open(f"{OUT}/{case}/{name}", "w") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")


def write_qe(case, qe, explain):
    write(case, "analyzed.txt", qe.analyzed().toString())
    write(case, "analyzed.json", qe.analyzed().toJSON())
    write(case, "optimized.txt", qe.optimizedPlan().toString())
    write(case, "logical.txt", qe.logical().toString())
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
    skip = _jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
    qe = session.sessionState().executePlan(parsed, skip)
    write_qe(case, qe, _jvm.org.apache.spark.sql.api.python.PythonSQLUtils.explainString(qe, "extended"))
    spark.sql(sql).collect()


def capture_write(case, action):
    from pyspark.java_gateway import ensure_callback_server_started

    ensure_callback_server_started(spark.sparkContext._gateway)
    seen = []

    class Listener:
        def onSuccess(self, func, qe, duration):
            seen.append(qe)

        def onFailure(self, func, qe, exception):
            seen.append(qe)

        class Java:
            implements = ["org.apache.spark.sql.util.QueryExecutionListener"]

    listener = Listener()
    spark._jsparkSession.listenerManager().register(listener)
    action()
    for _ in range(100):
        if seen:
            break
        time.sleep(0.1)
    time.sleep(1)
    spark._jsparkSession.listenerManager().unregister(listener)
    qe = seen[0]
    write_qe(case, qe, _jvm.org.apache.spark.sql.api.python.PythonSQLUtils.explainString(qe, "extended"))


def table(name, ddl, values):
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    shutil.rmtree(f"{WAREHOUSE}/{name}", ignore_errors=True)
    spark.sql(f"CREATE TABLE {name} ({ddl}) USING parquet")
    if values:
        spark.sql(f"INSERT INTO {name} VALUES {values}")


table(
    "emp",
    "id INT, name STRING, dept STRING, salary INT, mgr INT",
    "(1,'a','x',10,null),(2,'b','x',20,1),(3,'c','y',30,1)",
)
table("orders", "oid INT, cid INT, amount DOUBLE, region STRING", "(1,1,100.0,'EU'),(2,2,2000.0,'US')")
table("cust", "cid INT, cname STRING, country STRING", "(1,'ann','NL'),(2,'bob','US')")
emp = spark.table("emp")
win = Window.partitionBy("dept").orderBy(F.desc("salary"))
capture_df(
    "window_rank",
    emp.withColumn("rn", F.row_number().over(win))
    .withColumn("dept_total", F.sum("salary").over(Window.partitionBy("dept")))
    .where("rn <= 2")
    .select("name", "dept", "salary", "rn", "dept_total"),
)
arr = spark.createDataFrame([(1, ["a", "b"]), (2, ["c"])], "id int, items array<string>")
arr.write.mode("overwrite").parquet(DATA + "/arr.parquet")
capture_df(
    "explode_generate",
    spark.read.parquet(DATA + "/arr.parquet").select("id", F.explode("items").alias("item")),
)
capture_df(
    "rollup_expand", spark.sql("SELECT dept, name, sum(salary) AS total FROM emp GROUP BY ROLLUP(dept, name)")
)
spark.sql("DROP TABLE IF EXISTS dept_summary")
shutil.rmtree(f"{WAREHOUSE}/dept_summary", ignore_errors=True)
capture_sql(
    "ctas_agg",
    "CREATE TABLE dept_summary USING parquet AS "
    "SELECT dept, count(*) AS headcount, sum(salary) AS total_salary FROM emp GROUP BY dept",
)
capture_df(
    "case_when",
    spark.sql(
        "SELECT oid, CASE WHEN amount >= 1000 THEN 'gold' WHEN region = 'EU' THEN 'silver' ELSE 'bronze' END AS tier, "
        "if(amount > 500, amount, 0) AS big FROM orders"
    ),
)
spark.table("cust").createOrReplaceTempView("cust_v")
capture_df(
    "left_join_view",
    spark.sql(
        "SELECT o.oid, coalesce(c.cname, 'unknown') AS cname FROM orders o LEFT JOIN cust_v c ON o.cid = c.cid"
    ),
)
capture_df(
    "intersect_except",
    spark.sql("SELECT cid FROM orders INTERSECT SELECT cid FROM cust EXCEPT SELECT mgr FROM emp"),
)
capture_df(
    "scalar_subquery",
    spark.sql(
        "SELECT c.cid, (SELECT max(o.amount) FROM orders o WHERE o.cid = c.cid) AS max_amount FROM cust c"
    ),
)
capture_write(
    "save_as_table",
    lambda: (
        spark.table("orders")
        .where("amount > 10")
        .select("oid", "amount")
        .write.mode("overwrite")
        .saveAsTable("big_orders")
    ),
)
spark.sql("DROP TABLE IF EXISTS part_t")
shutil.rmtree(f"{WAREHOUSE}/part_t", ignore_errors=True)
spark.sql("CREATE TABLE part_t (id INT, v STRING, dt STRING) USING parquet PARTITIONED BY (dt)")
capture_sql(
    "insert_overwrite_partition",
    "INSERT OVERWRITE TABLE part_t PARTITION (dt='2026') SELECT oid, region FROM orders",
)
left = spark.table("orders").select("oid", "region")
right = spark.table("cust").select(F.col("cid").alias("oid"))
capture_df("union_by_name", left.unionByName(right, allowMissingColumns=True))
capture_df("sql_union_distinct", spark.sql("SELECT cid FROM orders UNION SELECT cid FROM cust"))
capture_df("pivot", spark.table("orders").groupBy("cid").pivot("region", ["EU", "US"]).sum("amount"))
capture_df(
    "repartition_sample", spark.table("orders").repartition(4, "cid").sample(0.5, seed=1).select("oid")
)
capture_df("cross_join", spark.sql("SELECT o.oid, c.cname FROM orders o CROSS JOIN cust c"))
capture_df(
    "lag_window",
    spark.sql("SELECT oid, lag(amount, 1) OVER (PARTITION BY cid ORDER BY oid) AS prev_amount FROM orders"),
)
capture_df(
    "cte_twice",
    spark.sql(
        "WITH big AS (SELECT * FROM orders WHERE amount > 50) "
        "SELECT a.oid, b.amount FROM big a JOIN big b ON a.oid = b.oid"
    ),
)
capture_df("drop_duplicates_subset", spark.table("orders").dropDuplicates(["cid"]))
spark.createDataFrame([(1, ("x", 2))], "id int, s struct<a:string,b:int>").write.mode("overwrite").json(
    DATA + "/st.json"
)
capture_df(
    "struct_field",
    spark.read.schema("id int, s struct<a:string,b:int>")
    .json(DATA + "/st.json")
    .select("id", F.col("s.a").alias("sa"), (F.col("s.b") + 1).alias("sb")),
)
capture_df(
    "lateral_view",
    spark.sql(
        "SELECT id, item FROM parquet.`" + DATA + "/arr.parquet` LATERAL VIEW explode(items) t AS item"
    ),
)
capture_write(
    "write_csv_partitioned",
    lambda: spark.table("orders").write.mode("overwrite").partitionBy("region").csv(DATA + "/out_csv"),
)
capture_df(
    "in_list_strings",
    spark.sql("SELECT oid FROM orders WHERE region IN ('EU', 'a,b', 'x+- y') AND amount > 1"),
)
print("done")
