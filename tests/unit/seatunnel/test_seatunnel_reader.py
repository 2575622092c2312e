"""The ``seatunnel`` reader: HOCON/JSON job configs -> tables, columns in sink order, field edges."""

from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.seatunnel.hocon import load_hocon, split_plugin_blocks

DATA = Path(__file__).parents[2] / "data" / "seatunnel"


def read(name_or_path: str, **options):
    p = name_or_path if "/" in name_or_path else str(DATA / name_or_path)
    return registry.get("seatunnel").read([p], **options)


def edges(g):
    return {(str(e.source), str(e.target), e.kind) for e in g.edges}


def conf(tmp_path, text: str, name: str = "job.conf") -> str:
    f = tmp_path / name
    f.write_text(text)
    return str(f)


def test_one_source_one_sink_with_removed_and_renamed_fields():
    g = read("mysql_to_pg.conf")
    assert [p.id for p in g.processes] == ["mysql_to_pg:dw.mart.orders"]  # named by what it writes
    p = g.processes[0]
    assert p.inputs == ["sales.orders"] and p.outputs == ["dw.mart.orders"]
    # status and note were removed by Filter; FieldRename upper-cased id and renamed amount specifically.
    assert g.dataset("dw.mart.orders").column_names() == ["ID", "AMOUNT_EUR"]
    assert edges(g) == {
        ("sales.orders.id", "dw.mart.orders.ID", "IDENTITY"),
        ("sales.orders.amount", "dw.mart.orders.AMOUNT_EUR", "IDENTITY"),
    }
    assert p.attributes["sql"] == "INSERT INTO dw.mart.orders (ID, AMOUNT_EUR) VALUES (?, ?)"
    src = g.dataset("sales.orders")
    assert src.facets["connection"] == "mysql://mysql1:3306"
    assert src.columns[1].type == "decimal(10, 2)"
    assert g.problems == []


def test_passwords_do_not_reach_the_graph():
    assert "not-a-real-password" not in read("mysql_to_pg.conf").model_dump_json()


def test_two_plugin_blocks_of_the_same_name_are_two_sources():
    g = read("two_jdbc_sources.conf")
    # same table name app.customers in two connections stays two datasets
    assert {d.id for d in g.datasets} == {
        "crm_mysql.app.customers",
        "erp_mysql.app.customers",
        "lake.crm_customers",
        "lake.erp_customers",
    }
    assert g.job == "customers_sync"
    by_out = {p.outputs[0]: p.inputs for p in g.processes}
    assert by_out == {
        "lake.crm_customers": ["crm_mysql.app.customers"],
        "lake.erp_customers": ["erp_mysql.app.customers"],
    }
    assert ("erp_mysql.app.customers.vat_no", "lake.erp_customers.vat_no", "IDENTITY") in edges(g)


def test_plain_pyhocon_would_merge_same_name_blocks_so_we_split_them():
    text = (DATA / "two_jdbc_sources.conf").read_text()
    from pyhocon import ConfigFactory

    assert len(ConfigFactory.parse_string(text)["source"]) == 1  # what a plain HOCON library does
    job = load_hocon(text, file=None, variables={})
    assert [(p.section, p.name) for p in job.plugins] == [
        ("source", "Jdbc"),
        ("source", "Jdbc"),
        ("sink", "Hive"),
        ("sink", "Hive"),
    ]


def test_splitter_ignores_braces_in_strings_and_comments():
    text = 'source {\n  # Jdbc { fake }\n  Jdbc { query = "select \'{\' from t" }\n  Jdbc { a = """x { y"""}\n}\n'
    out = split_plugin_blocks(text)
    assert '"Jdbc#0"' in out and '"Jdbc#1"' in out and "# Jdbc { fake }" in out


def test_sql_transform_is_delegated_with_kinds():
    g = read("sql_transform.conf")
    assert g.dataset("ods.adults").column_names() == ["id", "name_up", "age_next"]
    e = edges(g)
    assert ("hr.people.id", "ods.adults.id", "IDENTITY") in e
    assert ("hr.people.name", "ods.adults.name_up", "TRANSFORMATION") in e
    assert ("hr.people.age", "ods.adults.age_next", "TRANSFORMATION") in e
    assert ("hr.people.age", "ods.adults.*", "FILTER") in e
    assert not any("ssn" in s for s, _, _ in e)


def test_sql_transform_falls_back_to_projection_analysis_without_the_sql_reader(monkeypatch):
    real_get = registry.get

    def no_sql(name):
        if name == "sql":
            raise InputError("unknown reader 'sql'")
        return real_get(name)

    monkeypatch.setattr(registry, "get", no_sql)
    g = read("sql_transform.conf")
    assert edges(g) == {
        ("hr.people.id", "ods.adults.id", "IDENTITY"),
        ("hr.people.name", "ods.adults.name_up", "TRANSFORMATION"),
        ("hr.people.age", "ods.adults.age_next", "TRANSFORMATION"),
        ("hr.people.age", "ods.adults.*", "FILTER"),
    }
    assert any("not installed" in p.message for p in g.problems)


def test_select_star_in_sql_transform_passes_upstream_fields(tmp_path):
    p = conf(
        tmp_path,
        """
        source { Jdbc { plugin_output = "src", url = "jdbc:mysql://m:3306/shop"
                        query = "select id, name from shop.users" } }
        transform { Sql { plugin_input = "src", plugin_output = "f2",
                          query = "select *, length(name) as name_len from src" } }
        sink { Jdbc { plugin_input = "f2", url = "jdbc:mysql://m:3306/shop", table = "users_out" } }
        """,
    )
    g = read(p)
    assert g.dataset("shop.users_out").column_names() == ["id", "name", "name_len"]
    assert ("shop.users.name", "shop.users_out.name_len", "TRANSFORMATION") in edges(g)


def test_source_query_with_cte_alias_and_join(tmp_path):
    p = conf(
        tmp_path,
        """
        source { Jdbc {
          url = "jdbc:mysql://m:3306/sales"
          query = "WITH recent AS (SELECT customer_id, amount FROM sales.orders WHERE ts > '2024-01-01') SELECT c.id, c.name AS customer_name, SUM(r.amount) AS total FROM sales.customers c JOIN recent r ON r.customer_id = c.id GROUP BY c.id, c.name"
          plugin_output = "q"
        } }
        sink { Jdbc { plugin_input = "q", url = "jdbc:postgresql://pg:5432/dw", database = "dw", table = "mart.customer_totals" } }
        """,
    )
    g = read(p)
    assert sorted(g.processes[0].inputs) == ["sales.customers", "sales.orders"]
    assert g.dataset("dw.mart.customer_totals").column_names() == ["id", "customer_name", "total"]
    e = edges(g)
    assert ("sales.customers.id", "dw.mart.customer_totals.id", "IDENTITY") in e
    assert ("sales.customers.name", "dw.mart.customer_totals.customer_name", "IDENTITY") in e
    assert ("sales.orders.amount", "dw.mart.customer_totals.total", "AGGREGATION") in e
    assert any(s == "sales.orders.customer_id" and k == "JOIN" for s, _, k in e)


def test_variables_substitute_unquoted_and_quoted_references():
    g = read("variables.conf", variables=["src_db=inv", "src_table=stock"])
    assert g.processes[0].inputs == ["inv.stock"]
    assert g.processes[0].outputs == ["dw.stage.stock_copy"]
    assert read("variables.conf", variables={"src_db": "a", "src_table": "b"}).processes[0].inputs == ["a.b"]


def test_missing_variable_is_an_input_error_with_a_hint():
    with pytest.raises(InputError) as exc:
        read("variables.conf")
    assert "src_db" in str(exc.value)
    assert exc.value.line is not None
    assert "-i key=value" in (exc.value.hint or "")


def test_multi_table_sink_placeholders_follow_table_rename():
    g = read("multi_table_placeholders.conf")
    assert g.processes[0].inputs == ["shop.user_order"]
    assert g.processes[0].outputs == ["dw.shop.ods_user_order"]


def test_json_form_with_copy_and_field_mapper():
    g = read("json_form.json")
    assert g.dataset("dwd.items").column_names() == ["item_sku", "quantity", "sku_again"]
    assert edges(g) == {
        ("inv.items.sku", "dwd.items.item_sku", "IDENTITY"),
        ("inv.items.qty", "dwd.items.quantity", "IDENTITY"),
        ("inv.items.sku", "dwd.items.sku_again", "IDENTITY"),
    }


def test_unsupported_transform_gives_table_level_lineage_and_names_the_plugin():
    g = read("unsupported_transform.conf")
    assert edges(g) == {("file:///data/in/events.csv.*", "default.events_raw.*", "IDENTITY")}
    msgs = " | ".join(p.message for p in g.problems)
    assert "DynamicCompile" in msgs and "table-level" in msgs


def test_default_schema_is_used_and_reported():
    g = read("unsupported_transform.conf", default_schema="ods")
    assert g.processes[0].outputs == ["ods.events_raw"]
    assert any(p.code == "seatunnel-default-schema" and "'ods'" in p.message for p in g.problems)
    assert g.dataset("ods.events_raw").facets["default_schema"] is True


def test_source_without_field_list_gives_table_level_lineage_with_reason(tmp_path):
    p = conf(
        tmp_path,
        'source { Jdbc { url = "jdbc:mysql://m:3306/a", table_path = "a.t" } }\n'
        'sink { Jdbc { url = "jdbc:mysql://m:3306/b", table_path = "b.t" } }\n',
    )
    g = read(p)
    assert edges(g) == {("a.t.*", "b.t.*", "IDENTITY")}
    assert any("declares no field list" in p.message for p in g.problems)


def test_legacy_source_and_result_table_names_link_plugins():
    g = read("sql_transform.conf")  # uses source_table_name / result_table_name
    assert g.processes[0].inputs == ["hr.people"]


def test_connection_map_puts_connections_into_names(tmp_path):
    g = read("mysql_to_pg.conf", connection_map={"mysql://mysql1:3306": "mysql_prod"})
    assert g.processes[0].inputs == ["mysql_prod.sales.orders"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("source { Jdbc { url = \n", "invalid SeaTunnel config"),
        ('env { job.mode = "BATCH" }\n', "no 'source' or 'sink'"),
        (
            'source { Jdbc { table_path = "a.t", plugin_output = x } }\nsink { Hive { plugin_input = y } }',
            "'y'",
        ),
        ('source { Jdbc { table_path = "a.t" } }\n', "no sink"),
    ],
)
def test_malformed_configs_are_input_errors(tmp_path, text, message):
    with pytest.raises(InputError) as exc:
        read(conf(tmp_path, text))
    assert message in str(exc.value)


def test_malformed_json_names_line(tmp_path):
    with pytest.raises(InputError) as exc:
        read(conf(tmp_path, '{"source": [\n{"plugin_name": }]}', "bad.json"))
    assert exc.value.line == 2


def test_sniff_picks_seatunnel_configs():
    r = registry.get("seatunnel")
    assert r.sniff("x.conf", (DATA / "mysql_to_pg.conf").read_bytes())
    assert r.sniff("x.json", (DATA / "json_form.json").read_bytes())
    assert not r.sniff("x.json", (DATA / "whaletunnel-minimal.json").read_bytes())


@pytest.mark.parametrize(
    ("url", "connection", "dataset"),
    [
        ("jdbc:mysql://etl:hunter2@db1:3306/app?password=hunter2", "mysql://db1:3306", "app.t"),
        # Oracle's service name is the database (as in SeaTunnel's own Jdbc multi-table example).
        ("jdbc:oracle:thin:scott/hunter2@ora:1521/ORCL", "oracle://ora:1521", "ORCL.app.t"),
        ("jdbc:oracle:thin:@ora:1521/ORCL", "oracle://ora:1521", "ORCL.app.t"),
    ],
)
def test_credentials_in_urls_never_reach_connection_identity(tmp_path, url, connection, dataset):
    p = conf(
        tmp_path,
        f'source {{ Jdbc {{ url = "{url}", table_path = "app.t", schema = {{ fields {{ a = int }} }} }} }}\n'
        "sink { Console {} }\n",
    )
    g = read(p)
    assert g.dataset(dataset).facets["connection"] == connection
    assert "hunter2" not in g.model_dump_json()


def test_a_job_gaining_a_second_sink_keeps_its_first_process_name(tmp_path):
    one = (DATA / "mysql_to_pg.conf").read_text()
    before = [p.id for p in read(conf(tmp_path, one, "etl.conf")).processes]
    # the same job with one more sink writing a second table from the same source
    grown = one.rstrip()
    assert grown.endswith("}")
    grown = (
        grown[:-1]
        + """
  Console {
  }
  Jdbc {
    url = "jdbc:postgresql://pg:5432/dw"
    driver = "org.postgresql.Driver"
    user = "u"
    password = "p"
    query = "INSERT INTO mart.orders_copy (id) VALUES (?)"
  }
}
"""
    )
    after = [p.id for p in read(conf(tmp_path, grown, "etl.conf")).processes]
    assert len(after) == len(before) + 1
    assert after[0] == before[0] and after[0].startswith("etl:")
