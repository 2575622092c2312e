"""Connector knowledge: which options of each SeaTunnel connector name the datasets it reads and writes.

Job configs are written in the shape of SeaTunnel's own (option names from its connector docs), with
our own content. One test per rule.
"""

from pathlib import Path

import pytest

from atlas_sync.lineage import registry
from atlas_sync.lineage.seatunnel.connectors import (
    CONNECTORS,
    NONE,
    connector,
    identifier,
    substitute,
)

DATA = Path(__file__).parents[2] / "data" / "seatunnel"


def read(path: str):
    return registry.get("seatunnel").read([path])


def job(tmp_path, text: str, name: str = "job.conf"):
    f = tmp_path / name
    f.write_text(text)
    return read(str(f))


def ins(g):
    return sorted(d.id for d in g.datasets if d.facets.get("input_table"))


def outs(g):
    return sorted(d.id for d in g.datasets if d.facets.get("output_table"))


def table_edges(g):
    return {(e.source.dataset, e.target.dataset) for e in g.edges if e.source.column is None}


def codes(g):
    return [p.code for p in g.problems]


FAKE = """
  FakeSource {
    plugin_output = "fake"
    schema = { table = "%s", fields { id = bigint, name = string } }
  }
"""


# ------------------------------------------------------------------------------------------- registry
def test_connector_names_match_regardless_of_case_dashes_and_underscores():
    assert connector("jdbc") is connector("Jdbc")
    assert connector("mysql-cdc") is connector("MySQL-CDC")
    assert connector("kudu").name == "Kudu"
    assert connector("NoSuchThing") is None


def test_every_registered_connector_names_a_kind_or_says_what_it_gives_instead():
    for c in CONNECTORS:
        for naming in (c.source, c.sink):
            if naming is None:
                continue
            if naming.kind == NONE:
                assert naming.note, c.name
            else:
                assert naming.forms or naming.names or naming.query, c.name


def test_placeholders_follow_seatunnels_table_identifier():
    ident = identifier(["shop", "public", "orders"])
    assert substitute("${database_name}.${schema_name}.${table_name}", ident) == "shop.public.orders"
    assert substitute("${schema_full_name}|${table_full_name}", ident) == "shop.public|shop.public.orders"
    # db.table: no schema; ${schema_name:default} takes its default
    assert substitute("${schema_name:dbo}.${table_name}", identifier(["shop", "orders"])) == "dbo.orders"


# ----------------------------------------------------------------------------------------------- JDBC
def test_jdbc_source_table_path_in_a_mysql_url_database_is_not_doubled(tmp_path):
    g = job(
        tmp_path,
        """
        source { Jdbc { url = "jdbc:mysql://db1:3306/shop", driver = "com.mysql.cj.jdbc.Driver",
                        table_path = "shop.orders" } }
        sink { Jdbc { url = "jdbc:postgresql://pg:5432/dw", table = "mart.orders" } }
        """,
    )
    assert ins(g) == ["shop.orders"]
    assert outs(g) == ["dw.mart.orders"]  # PostgreSQL: schema.table inside the URL's database


def test_jdbc_source_table_list_gives_one_dataset_per_entry_including_queries(tmp_path):
    g = job(
        tmp_path,
        """
        source {
          Jdbc {
            url = "jdbc:oracle:thin:@ora-host:1521/XE"
            table_list = [
              { table_path = "SALES.ORDERS" },
              { table_path = "SALES.CUSTOMERS" }
            ]
          }
        }
        sink { Jdbc { url = "jdbc:mysql://m:3306", database = "${schema_name}_copy", table = "${table_name}" } }
        """,
    )
    assert ins(g) == ["XE.SALES.CUSTOMERS", "XE.SALES.ORDERS"]  # Oracle's service name is the database
    assert outs(g) == ["SALES_copy.CUSTOMERS", "SALES_copy.ORDERS"]
    assert table_edges(g) == {
        ("XE.SALES.ORDERS", "SALES_copy.ORDERS"),
        ("XE.SALES.CUSTOMERS", "SALES_copy.CUSTOMERS"),
    }


def test_jdbc_sink_table_defaults_to_the_upstream_table_with_prefix_and_suffix(tmp_path):
    g = job(
        tmp_path,
        """
        source { Postgres-CDC {
          base-url = "jdbc:postgresql://pg:5432/inv"
          database-names = ["inv"], schema-names = ["public"]
          table-names = ["inv.public.items", "inv.public.stock"]
        } }
        sink { jdbc { url = "jdbc:postgresql://pg2:5432/copy", generate_sink_sql = true,
                      tablePrefix = "ods_", tableSuffix = "_v1" } }
        """,
    )
    assert ins(g) == ["inv.public.items", "inv.public.stock"]
    assert outs(g) == ["copy.ods_items_v1", "copy.ods_stock_v1"]
    assert ("inv.public.items", "copy.ods_items_v1") in table_edges(g)
    assert ("inv.public.items", "copy.ods_stock_v1") not in table_edges(g)


def test_jdbc_source_query_is_read_in_the_dialect_of_its_url(tmp_path):
    g = job(
        tmp_path,
        """
        source { Jdbc { url = "jdbc:mysql://m:9030", query = "select a, b from `shop`.`orders`" } }
        sink { Jdbc { url = "jdbc:mysql://m:9030", query = "insert into `shop`.`orders_copy` (a, b) values (?, ?)" } }
        """,
    )
    assert ins(g) == ["shop.orders"] and outs(g) == ["shop.orders_copy"]


def test_schema_qualified_query_tables_sit_in_the_url_database_of_a_schema_database(tmp_path):
    g = job(
        tmp_path,
        """
        source { Jdbc { url = "jdbc:sqlserver://mssql:1433;databaseName=crm", query = "select id from dbo.accounts" } }
        sink { Jdbc { url = "jdbc:sqlserver://mssql:1433;databaseName=crm", database = "crm", table = "dbo.accounts_copy" } }
        """,
    )
    assert ins(g) == ["crm.dbo.accounts"] and outs(g) == ["crm.dbo.accounts_copy"]


def test_phoenix_upsert_into_names_the_sink_table(tmp_path):
    g = job(
        tmp_path,
        """
        source { Jdbc { url = "jdbc:phoenix:zk1:2181", query = "select id from app.events" } }
        sink { Jdbc { url = "jdbc:phoenix:zk1:2181", query = "upsert into app.events_copy (id) values (?)" } }
        """,
    )
    assert outs(g) == ["app.events_copy"]


# ------------------------------------------------------------------------------------------------ CDC
def test_cdc_table_names_are_full_names_one_dataset_each(tmp_path):
    g = job(
        tmp_path,
        """
        source { MySQL-CDC {
          base-url = "jdbc:mysql://m:3306/shop"
          username = "cdc", password = "secret"
          table-names = ["shop.orders", "shop.order_items,billing.invoices"]
        } }
        sink { Doris { fenodes = "fe:8030", database = "ods_${database_name}", table = "${table_name}" } }
        """,
    )
    assert ins(g) == ["billing.invoices", "shop.order_items", "shop.orders"]
    assert outs(g) == ["ods_billing.invoices", "ods_shop.order_items", "ods_shop.orders"]
    assert "secret" not in g.model_dump_json()


def test_cdc_source_naming_only_databases_names_no_dataset_and_says_why(tmp_path):
    g = job(
        tmp_path,
        """
        source { MySQL-CDC { base-url = "jdbc:mysql://m:3306", database-names = ["shop"] } }
        sink { Console {} }
        """,
    )
    assert ins(g) == [] and outs(g) == []
    msg = next(p.message for p in g.problems if p.code == "seatunnel-no-table")
    assert "every table of database-names shop" in msg


def test_tidb_cdc_database_and_table_name(tmp_path):
    g = job(
        tmp_path,
        """
        source { TiDB-CDC { pd-addresses = "pd0:2379", base-url = "jdbc:mysql://tidb0:4000/app",
                            database-name = "app", table-name = "users" } }
        sink { Jdbc { url = "jdbc:mysql://tidb0:4000/app", database = "app", table = "users_copy" } }
        """,
    )
    assert ins(g) == ["app.users"] and outs(g) == ["app.users_copy"]


def test_mongodb_cdc_collections_and_patterns(tmp_path):
    g = job(
        tmp_path,
        """
        source { MongoDB-CDC { hosts = "mongo0:27017", database = ["crm"],
                               collection = ["crm.leads", "crm.(t[0-9]+|tmp)"] } }
        sink { Console {} }
        """,
    )
    assert ins(g) == ["crm.leads"]
    assert any("is a pattern" in p.message for p in g.problems)


# ------------------------------------------------------------------------------- catalog-style sinks
def test_iceberg_namespace_and_table_with_placeholders(tmp_path):
    g = job(
        tmp_path,
        """
        source { MySQL-CDC { base-url = "jdbc:mysql://m:3306/shop", table-names = ["shop.orders"] } }
        sink { Iceberg {
          catalog_name = "lake"
          iceberg.catalog.config = { type = "hadoop", warehouse = "s3a://lake/warehouse" }
          namespace = "${database_name}_ods"
          table = "${table_name}_cdc"
        } }
        """,
    )
    assert outs(g) == ["shop_ods.orders_cdc"]
    assert table_edges(g) == {("shop.orders", "shop_ods.orders_cdc")}


def test_iceberg_namespace_defaults_to_default(tmp_path):
    g = job(tmp_path, "source {" + FAKE % "t" + "}\nsink { Iceberg { catalog_name = c, table = events } }")
    assert outs(g) == ["default.events"]


def test_paimon_sink_table_defaults_to_the_upstream_table(tmp_path):
    g = job(
        tmp_path,
        "source {"
        + FAKE % "app.clicks"
        + '}\nsink { Paimon { warehouse = "hdfs:///paimon", database = "ods" } }',
    )
    assert outs(g) == ["ods.clicks"]


def test_hudi_sink_table_list_entries(tmp_path):
    g = job(
        tmp_path,
        "source {"
        + FAKE % "t"
        + """}
        sink { Hudi {
          table_dfs_path = "s3a://lake/hudi"
          table_list = [
            { database = "st1", table_name = "events", record_key_fields = "id" },
            { table_name = "users" }
          ]
        } }
        """,
    )
    assert outs(g) == ["default.users", "st1.events"]  # `database` defaults to `default`


def test_doris_table_identifier_is_read_from_hocons_nested_form(tmp_path):
    g = job(
        tmp_path,
        """
        source { Doris { fenodes = "fe:8030", database = "src", table = "orders" } }
        sink { Doris { fenodes = "fe:8030", table.identifier = "dst.orders", sink.label-prefix = "x" } }
        """,
    )
    assert ins(g) == ["src.orders"] and outs(g) == ["dst.orders"]


def test_starrocks_sink_table_defaults_to_the_upstream_table(tmp_path):
    g = job(
        tmp_path,
        """
        source { Jdbc { url = "jdbc:mysql://m:3306/shop", table_path = "shop.orders" } }
        sink { StarRocks { nodeUrls = ["sr:8030"], base-url = "jdbc:mysql://sr:9030/", database = "ads" } }
        """,
    )
    assert outs(g) == ["ads.orders"]


def test_a_source_without_a_table_name_fills_placeholders_with_seatunnels_default(tmp_path):
    g = job(
        tmp_path,
        """
        source { Http { url = "http://api.example/items", schema = { fields { id = int } } } }
        sink { Paimon { warehouse = "/lake", database = "${database_name}", table = "items" } }
        """,
    )
    # An HTTP source's upstream table is SeaTunnel's default `default.default.default`.
    assert outs(g) == ["default.items"]


def test_a_placeholder_no_upstream_table_resolves_is_reported(tmp_path):
    g = job(
        tmp_path,
        """
        source { MySQL-CDC { base-url = "jdbc:mysql://m:3306", database-names = ["shop"] } }
        sink { Jdbc { url = "jdbc:mysql://m2:3306/copy", table = "${table_name}" } }
        """,
    )
    assert outs(g) == []
    assert any("holds a placeholder no upstream table resolves" in p.message for p in g.problems)


# ------------------------------------------------------------------------- stores named by options
def test_kudu_sink_without_table_name_writes_the_upstream_full_name(tmp_path):
    g = job(
        tmp_path,
        """
        source { FakeSource { tables_configs = [
          { schema = { table = "kudu_a", fields { id = int } } },
          { schema = { table = "kudu_b", fields { id = int } } }
        ] } }
        sink { kudu { kudu_masters = "kudu-master:7051" } }
        """,
    )
    assert outs(g) == ["default.kudu_a", "default.kudu_b"]  # one part: the agreed default schema


def test_hbase_table_and_redis_keys(tmp_path):
    g = job(
        tmp_path,
        """
        source { Redis { host = "redis", port = 6379, keys = "session:*", data_type = key,
                         schema = { fields { v = string } } } }
        sink { Hbase { zookeeper_quorum = "zk:2181", table = "ns1:sessions", rowkey_column = ["v"] } }
        """,
    )
    assert ins(g) == ["0.session:*"]  # db_num (default 0) + the keys pattern
    assert outs(g) == ['default."ns1:sessions"']  # quoted: not a plain identifier


def test_document_stores_collections_and_indexes(tmp_path):
    g = job(
        tmp_path,
        """
        source {
          MongoDB { uri = "mongodb://app:pw@mongo:27017/crm", database = "crm", collection = "leads",
                    plugin_output = "m", schema = { fields { id = string } } }
          Elasticsearch { hosts = ["https://es:9200"], plugin_output = "e",
                          index_list = [ { index = "logs-a" }, { index = "logs-b" } ] }
        }
        sink {
          Typesense { plugin_input = "m", hosts = ["ts:8108"], collection = "leads_search", api_key = "k" }
          Elasticsearch { plugin_input = "e", hosts = ["https://es:9200"], index = "logs_all" }
        }
        """,
    )
    assert ins(g) == ["crm.leads", "logs-a", "logs-b"]
    assert outs(g) == ["leads_search", "logs_all"]
    kinds = {d.id: d.kind for d in g.datasets}
    assert kinds["crm.leads"] == "collection" and kinds["logs-a"] == "index"
    assert "pw" not in g.dataset("crm.leads").facets.get("connection", "")


def test_milvus_sink_writes_the_upstream_collection_by_default(tmp_path):
    g = job(
        tmp_path,
        """
        source { Milvus { url = "http://milvus:19530", database = "default", collection = "docs" } }
        sink { Milvus { url = "http://milvus2:19530", database = "copy" } }
        """,
    )
    assert ins(g) == ["default.docs"] and outs(g) == ["copy.docs"]


# ----------------------------------------------------------------------------------- queues and logs
def test_kafka_topics_are_kept_as_written(tmp_path):
    g = job(
        tmp_path,
        """
        source { Kafka { bootstrap.servers = "k:9092", topic = "orders.v1,order-items", format = json,
                         schema = { fields { id = int } } } }
        sink { Kafka { bootstrap.servers = "k:9092", topic = "orders-clean" } }
        """,
    )
    assert ins(g) == ["order-items", "orders.v1"] and outs(g) == ["orders-clean"]
    assert g.dataset("orders.v1").kind == "topic" and g.dataset("orders.v1").name == "orders.v1"


@pytest.mark.parametrize(
    "source",
    [
        'Kafka { bootstrap.servers = "k:9092", topic = "^ogg-.*", pattern = "true" }',
        'Kafka { bootstrap.servers = "k:9092", table_list = [ { topic = "^a.*", pattern = true } ] }',
        'Pulsar { client.service-url = "pulsar://p:6650", topic-pattern = "persistent://t/ns/.*" }',
    ],
)
def test_a_topic_pattern_names_no_dataset(tmp_path, source):
    g = job(tmp_path, f"source {{ {source} }}\nsink {{ Console {{}} }}")
    assert ins(g) == []
    assert any("pattern" in p.message for p in g.problems if p.code == "seatunnel-no-table")


def test_a_kafka_topic_taken_from_a_row_field_is_reported(tmp_path):
    g = job(
        tmp_path,
        "source {" + FAKE % "t" + '}\nsink { Kafka { bootstrap.servers = "k:9092", topic = "${name}" } }',
    )
    assert outs(g) == []
    assert any("field 'name'" in p.message for p in g.problems)


def test_queues(tmp_path):
    g = job(
        tmp_path,
        """
        source { RabbitMQ { host = "mq", port = 5672, virtual_host = "/", queue_name = "in.q",
                            schema = { fields { id = int } } } }
        sink { AmazonSqs { url = "https://sqs.eu-west-1.amazonaws.com/123/out-q", region = "eu-west-1" } }
        """,
    )
    assert ins(g) == ["in.q"] and outs(g) == ["https://sqs.eu-west-1.amazonaws.com/123/out-q"]


# ---------------------------------------------------------------------------------------------- files
def test_file_connectors_name_uris_from_bucket_host_and_path(tmp_path):
    g = job(
        tmp_path,
        """
        source {
          S3File { bucket = "s3a://raw", path = "/in/events", file_format_type = "json", plugin_output = "s3" }
          FtpFile { host = "ftp1", port = 21, path = "/drop/csv", file_format_type = "csv", plugin_output = "ftp" }
        }
        sink {
          HdfsFile { plugin_input = "s3", fs.defaultFS = "hdfs://nn:8020", path = "/ods/events" }
          LocalFile { plugin_input = "ftp", path = "/tmp/out" }
        }
        """,
    )
    assert ins(g) == ["ftp://ftp1:21/drop/csv", "s3a://raw/in/events"]
    assert outs(g) == ["file:///tmp/out", "hdfs://nn:8020/ods/events"]


def test_file_sink_path_placeholders_follow_each_source_entry(tmp_path):
    g = job(
        tmp_path,
        """
        source { LocalFile { tables_configs = [
          { path = "/in/a", file_format_type = json, schema = { table = "alpha", fields { id = int } } },
          { path = "/in/b", file_format_type = json, schema = { table = "beta", fields { id = int } } }
        ] } }
        sink { OssFile { bucket = "oss://bkt", path = "/out/${table_name}" } }
        """,
    )
    assert ins(g) == ["file:///in/a", "file:///in/b"]
    assert table_edges(g) == {("file:///in/a", "oss://bkt/out/alpha"), ("file:///in/b", "oss://bkt/out/beta")}


# ------------------------------------------------------------------------------------ test connectors
def test_fake_source_publishes_no_dataset_but_its_fields_reach_a_real_sink(tmp_path):
    g = job(
        tmp_path,
        "source {"
        + FAKE % "demo.people"
        + """}
        transform { Sql { plugin_input = "fake", plugin_output = "t", query = "select id, upper(name) as name from fake" } }
        sink { Jdbc { plugin_input = "t", url = "jdbc:mysql://m:3306/app", table = "people" } }
        """,
    )
    assert ins(g) == []
    assert outs(g) == ["app.people"]
    assert g.dataset("app.people").column_names() == ["id", "name"]
    assert g.processes[0].inputs == [] and g.edges == []
    assert "seatunnel-test-connector" in codes(g)


def test_a_job_writing_only_to_test_sinks_publishes_nothing(tmp_path):
    g = job(
        tmp_path, "source {" + FAKE % "t" + "}\nsink { Console {}\n Assert { rules { row_rules = [] } } }"
    )
    assert g.datasets == [] and g.processes == []
    assert codes(g).count("seatunnel-test-connector") == 3


def test_notification_sinks_publish_no_dataset(tmp_path):
    g = job(
        tmp_path,
        """
        source { Jdbc { url = "jdbc:mysql://m:3306/app", table_path = "app.alerts" } }
        sink { EmailSink { email_from_address = "a@b", email_to_address = "c@d", email_host = "smtp" } }
        """,
    )
    assert ins(g) == ["app.alerts"] and outs(g) == [] and g.processes == []


def test_http_sources_are_endpoints(tmp_path):
    g = job(
        tmp_path,
        """
        source { Github { url = "https://api.github.com/orgs/apache/repos", access_token = "t0ken",
                          schema = { fields { id = int } } } }
        sink { Jdbc { url = "jdbc:postgresql://pg/dw", table = "public.repos" } }
        """,
    )
    assert ins(g) == ["https://api.github.com/orgs/apache/repos"]
    assert g.dataset(ins(g)[0]).kind == "endpoint"
    assert "t0ken" not in g.model_dump_json()


# --------------------------------------------------------------------------------- unknown connectors
def test_unknown_connector_keeps_the_table_level_fallback_and_says_why(tmp_path):
    g = job(
        tmp_path,
        """
        source { Jdbc { url = "jdbc:mysql://m:3306/app", table_path = "app.orders" } }
        sink { AcmeWarehouse { database = "wh", table = "orders" } }
        """,
    )
    assert outs(g) == ["wh.orders"]
    assert table_edges(g) == {("app.orders", "wh.orders")}
    msg = next(p.message for p in g.problems if p.code == "seatunnel-unknown-connector")
    assert "AcmeWarehouse" in msg and "not in atlas-sync's connector table" in msg


def test_druid_datasource_is_the_table_not_a_named_connection(tmp_path):
    g = job(
        tmp_path,
        "source {"
        + FAKE % "t"
        + '}\nsink { Druid { coordinatorUrl = "druid:8888", datasource = "events" } }',
    )
    assert outs(g) == ["default.events"]
