"""Regenerate the plans in this folder (and, with OUT changed, ../fixtures35-style sets).

Written for atlas-sync's Spark reader tests: node kinds the shared fixtures do not cover (Window,
Generate, Expand, CTAS, CASE/if, views, Intersect/Except, scalar subqueries, struct fields, pivots,
CTEs used twice, unionByName, partitioned writes, ...). Needs Java 17 and pyspark (4.0.1 was used:
``pip install pyspark==4.0.1``); each case writes analyzed.txt, analyzed.json, optimized.txt,
logical.txt and explain.txt into OUT/<case> (only analyzed.txt, analyzed.json and explain.txt are kept
here). Run: ``python generate.py`` (about 40 s, one JVM for all cases, so ids differ from run order).
"""
import contextlib, io, os, shutil, sys, time
from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F
DATA="/tmp/sparkdata2"; WAREHOUSE=DATA+"/warehouse"; OUT="/tmp/heldout"
os.makedirs(DATA, exist_ok=True)
spark=(SparkSession.builder.master("local[1]").appName("heldout").config("spark.ui.enabled","false")
 .config("spark.ui.showConsoleProgress","false").config("spark.sql.warehouse.dir",WAREHOUSE)
 .config("spark.sql.catalogImplementation","in-memory").config("spark.sql.session.timeZone","UTC").getOrCreate())
spark.sparkContext.setLogLevel("ERROR"); _jvm=spark._jvm
def w(case,name,text):
    os.makedirs(f"{OUT}/{case}",exist_ok=True)
    open(f"{OUT}/{case}/{name}","w").write(text if text.endswith("\n") else text+"\n")
def wq(case,qe,ex):
    w(case,"analyzed.txt",qe.analyzed().toString()); w(case,"analyzed.json",qe.analyzed().toJSON())
    w(case,"optimized.txt",qe.optimizedPlan().toString()); w(case,"logical.txt",qe.logical().toString()); w(case,"explain.txt",ex)
def cdf(case,df):
    qe=df._jdf.queryExecution(); buf=io.StringIO()
    with contextlib.redirect_stdout(buf): df.explain(extended=True)
    wq(case,qe,buf.getvalue()); df.collect()
def csql(case,sql):
    s=spark._jsparkSession; parsed=s.sessionState().sqlParser().parsePlan(sql)
    qe=s.sessionState().executePlan(parsed,_jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP())
    ex=_jvm.org.apache.spark.sql.api.python.PythonSQLUtils.explainString(qe,"extended"); wq(case,qe,ex); spark.sql(sql).collect()
def cwrite(case, action):
    from pyspark.java_gateway import ensure_callback_server_started
    ensure_callback_server_started(spark.sparkContext._gateway)
    seen=[]
    class L:
        def onSuccess(self,f,qe,d): seen.append((f,qe))
        def onFailure(self,f,qe,e): seen.append((f,qe))
        class Java: implements=["org.apache.spark.sql.util.QueryExecutionListener"]
    l=L(); spark._jsparkSession.listenerManager().register(l)
    action()
    for _ in range(100):
        if seen: break
        time.sleep(0.1)
    time.sleep(1)
    spark._jsparkSession.listenerManager().unregister(l)
    f,qe=seen[0]
    ex=_jvm.org.apache.spark.sql.api.python.PythonSQLUtils.explainString(qe,"extended")
    wq(case,qe,ex)
def table(name, ddl, vals):
    spark.sql(f"DROP TABLE IF EXISTS {name}"); shutil.rmtree(f"{WAREHOUSE}/{name}",ignore_errors=True)
    spark.sql(f"CREATE TABLE {name} ({ddl}) USING parquet")
    if vals: spark.sql(f"INSERT INTO {name} VALUES {vals}")
table("emp","id INT, name STRING, dept STRING, salary INT, mgr INT","(1,'a','x',10,null),(2,'b','x',20,1),(3,'c','y',30,1)")
table("orders","oid INT, cid INT, amount DOUBLE, region STRING","(1,1,100.0,'EU'),(2,2,2000.0,'US')")
table("cust","cid INT, cname STRING, country STRING","(1,'ann','NL'),(2,'bob','US')")
emp=spark.table("emp")
win=Window.partitionBy("dept").orderBy(F.desc("salary"))
cdf("window_rank", emp.withColumn("rn",F.row_number().over(win)).withColumn("dept_total",F.sum("salary").over(Window.partitionBy("dept"))).where("rn <= 2").select("name","dept","salary","rn","dept_total"))
arr=spark.createDataFrame([(1,["a","b"]),(2,["c"])],"id int, items array<string>")
arr.write.mode("overwrite").parquet(DATA+"/arr.parquet")
arrdf=spark.read.parquet(DATA+"/arr.parquet")
cdf("explode_generate", arrdf.select("id",F.explode("items").alias("item")))
cdf("rollup_expand", spark.sql("SELECT dept, name, sum(salary) AS total FROM emp GROUP BY ROLLUP(dept, name)"))
csql("ctas_agg","CREATE TABLE dept_summary USING parquet AS SELECT dept, count(*) AS headcount, sum(salary) AS total_salary FROM emp GROUP BY dept")
cdf("case_when", spark.sql("SELECT oid, CASE WHEN amount >= 1000 THEN 'gold' WHEN region = 'EU' THEN 'silver' ELSE 'bronze' END AS tier, if(amount > 500, amount, 0) AS big FROM orders"))
spark.table("cust").createOrReplaceTempView("cust_v")
cdf("left_join_view", spark.sql("SELECT o.oid, coalesce(c.cname, 'unknown') AS cname FROM orders o LEFT JOIN cust_v c ON o.cid = c.cid"))
cdf("intersect_except", spark.sql("SELECT cid FROM orders INTERSECT SELECT cid FROM cust EXCEPT SELECT mgr FROM emp"))
cdf("scalar_subquery", spark.sql("SELECT c.cid, (SELECT max(o.amount) FROM orders o WHERE o.cid = c.cid) AS max_amount FROM cust c"))
cwrite("save_as_table", lambda: spark.table("orders").where("amount > 10").select("oid","amount").write.mode("overwrite").saveAsTable("big_orders"))
table("part_t","id INT, v STRING, dt STRING","")
spark.sql("DROP TABLE IF EXISTS part_t"); shutil.rmtree(f"{WAREHOUSE}/part_t",ignore_errors=True)
spark.sql("CREATE TABLE part_t (id INT, v STRING, dt STRING) USING parquet PARTITIONED BY (dt)")
csql("insert_overwrite_partition","INSERT OVERWRITE TABLE part_t PARTITION (dt='2026') SELECT oid, region FROM orders")
a=spark.table("orders").select("oid","region"); b=spark.table("cust").select(F.col("cid").alias("oid"))
cdf("union_by_name", a.unionByName(b, allowMissingColumns=True))
cdf("sql_union_distinct", spark.sql("SELECT cid FROM orders UNION SELECT cid FROM cust"))
cdf("pivot", spark.table("orders").groupBy("cid").pivot("region",["EU","US"]).sum("amount"))
cdf("repartition_sample", spark.table("orders").repartition(4,"cid").sample(0.5, seed=1).select("oid"))
cdf("cross_join", spark.sql("SELECT o.oid, c.cname FROM orders o CROSS JOIN cust c"))
cdf("lag_window", spark.sql("SELECT oid, lag(amount, 1) OVER (PARTITION BY cid ORDER BY oid) AS prev_amount FROM orders"))
cdf("cte_twice", spark.sql("WITH big AS (SELECT * FROM orders WHERE amount > 50) SELECT a.oid, b.amount FROM big a JOIN big b ON a.oid = b.oid"))
cdf("drop_duplicates_subset", spark.table("orders").dropDuplicates(["cid"]))
st=spark.createDataFrame([(1,("x",2))],"id int, s struct<a:string,b:int>")
st.write.mode("overwrite").json(DATA+"/st.json")
cdf("struct_field", spark.read.schema("id int, s struct<a:string,b:int>").json(DATA+"/st.json").select("id",F.col("s.a").alias("sa"), (F.col("s.b")+1).alias("sb")))
cdf("lateral_view", spark.sql("SELECT id, item FROM parquet.`"+DATA+"/arr.parquet` LATERAL VIEW explode(items) t AS item"))
cwrite("write_csv_partitioned", lambda: spark.table("orders").write.mode("overwrite").partitionBy("region").csv(DATA+"/out_csv"))
cdf("in_list_strings", spark.sql("SELECT oid FROM orders WHERE region IN ('EU', 'a,b', 'x+- y') AND amount > 1"))
print("done")
