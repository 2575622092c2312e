"""The ``whaletunnel`` reader: syncJobDefinitionDtoList[].jobTasks / jobLines exports."""

import json
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry

MINIMAL = Path(__file__).parents[2] / "data" / "seatunnel" / "whaletunnel-minimal.json"


def read(path, **options):
    return registry.get("whaletunnel").read([str(path)], **options)


def edges(g):
    return {(str(e.source), str(e.target), e.kind) for e in g.edges}


def task(pid, type_, conn, option, fields=None, connector="Jdbc", **extra):
    t = {
        "pluginId": pid,
        "type": type_,
        "connectorType": connector,
        "dataSourceName": conn,
        "dataSourceOption": json.dumps(option),
        **extra,
    }
    if fields is not None:
        t["selectTableFields"] = json.dumps({"columns": fields})
    return t


def export(tmp_path, tasks, lines, name="job.json"):
    f = tmp_path / name
    f.write_text(json.dumps({"syncJobDefinitionDtoList": [{"jobTasks": tasks, "jobLines": lines}]}))
    return f


def test_seed_minimal_export():
    g = read(MINIMAL)
    src = g.dataset("source_connection.sales.customer")
    dst = g.dataset("target_connection.mart.customer")
    assert src.facets["connection"] == "source_connection" and src.facets["input_table"] is True
    assert dst.facets["schema"] == "mart" and dst.facets["table"] == "customer"
    assert dst.facets["output_table"] is True
    assert [(p.inputs, p.outputs) for p in g.processes] == [
        (["source_connection.sales.customer"], ["target_connection.mart.customer"])
    ]
    assert edges(g) == {
        (
            "source_connection.sales.customer.customer_id",
            "target_connection.mart.customer.customer_id",
            "IDENTITY",
        )
    }
    assert g.problems == []


def test_columns_follow_sink_order_and_transform_renames(tmp_path):
    f = export(
        tmp_path,
        [
            task("s", "SOURCE", "src", {"schema": "sales", "table": "orders"}, ["id", "amount", "secret"]),
            task(
                "t",
                "TRANSFORM",
                None,
                {},
                connector="FieldRename",
                transformOptions=json.dumps({"convert_case": "UPPER"}),
            ),
            task("k", "SINK", "dst", {"schema": "mart", "table": "orders"}, ["AMOUNT", "ID"]),
        ],
        [{"inputPluginId": "s", "targetPluginId": "t"}, {"inputPluginId": "t", "targetPluginId": "k"}],
    )
    g = read(f)
    assert g.dataset("dst.mart.orders").column_names() == ["AMOUNT", "ID"]
    assert edges(g) == {
        ("src.sales.orders.amount", "dst.mart.orders.AMOUNT", "IDENTITY"),
        ("src.sales.orders.id", "dst.mart.orders.ID", "IDENTITY"),
    }


def test_same_table_name_in_two_schemas_stays_two_datasets(tmp_path):
    f = export(
        tmp_path,
        [
            task("a", "SOURCE", "c1", {"schema": "eu", "table": "customer"}, ["id"]),
            task("b", "SOURCE", "c1", {"schema": "us", "table": "customer"}, ["id"]),
            task("k1", "SINK", "c2", {"schema": "mart", "table": "customer_eu"}, ["id"]),
            task("k2", "SINK", "c2", {"schema": "mart", "table": "customer_us"}, ["id"]),
        ],
        [{"inputPluginId": "a", "targetPluginId": "k1"}, {"inputPluginId": "b", "targetPluginId": "k2"}],
    )
    g = read(f)
    assert {(tuple(p.inputs), tuple(p.outputs)) for p in g.processes} == {
        (("c1.eu.customer",), ("c2.mart.customer_eu",)),
        (("c1.us.customer",), ("c2.mart.customer_us",)),
    }


def test_missing_schema_uses_default_and_reports_it(tmp_path):
    f = export(
        tmp_path,
        [
            task("s", "SOURCE", "src", {"table": "orders"}, ["id"]),
            task("k", "SINK", "dst", {"schema": "mart", "table": "orders"}, ["id"]),
        ],
        [{"inputPluginId": "s", "targetPluginId": "k"}],
    )
    g = read(f, default_schema="dbo")
    assert g.dataset("src.dbo.orders") is not None
    assert [p.code for p in g.problems] == ["seatunnel-default-schema"]


def test_unknown_fields_give_table_level_lineage_and_a_problem(tmp_path):
    f = export(
        tmp_path,
        [
            task("s", "SOURCE", "src", {"schema": "a", "table": "t"}),
            task("k", "SINK", "dst", {"schema": "b", "table": "t"}),
        ],
        [{"inputPluginId": "s", "targetPluginId": "k"}],
    )
    g = read(f)
    assert edges(g) == {("src.a.t.*", "dst.b.t.*", "IDENTITY")}
    assert any(p.code == "seatunnel-table-level" for p in g.problems)


def test_sql_transform_task(tmp_path):
    f = export(
        tmp_path,
        [
            task("s", "SOURCE", "src", {"schema": "a", "table": "t"}, ["x", "y"]),
            task(
                "q",
                "TRANSFORM",
                None,
                {},
                connector="Sql",
                transformOptions=json.dumps({"query": "select x + y as z from s"}),
            ),
            task("k", "SINK", "dst", {"schema": "b", "table": "t"}),
        ],
        [{"inputPluginId": "s", "targetPluginId": "q"}, {"inputPluginId": "q", "targetPluginId": "k"}],
    )
    g = read(f)
    assert edges(g) == {
        ("src.a.t.x", "dst.b.t.z", "TRANSFORMATION"),
        ("src.a.t.y", "dst.b.t.z", "TRANSFORMATION"),
    }


def test_unknown_job_line_id_is_an_input_error_with_path(tmp_path):
    f = export(
        tmp_path,
        [task("s", "SOURCE", "src", {"schema": "a", "table": "t"})],
        [{"inputPluginId": "s", "targetPluginId": "sink_9"}],
    )
    with pytest.raises(InputError) as exc:
        read(f)
    assert "sink_9" in str(exc.value)
    assert exc.value.path == "$.syncJobDefinitionDtoList[0].jobLines[0].targetPluginId"


def test_unsupported_task_type_names_the_plugin(tmp_path):
    f = export(
        tmp_path,
        [
            task("s", "SOURCE", "src", {"schema": "a", "table": "t"}),
            task("x", "SCRIPT", None, {}, connector="Shell"),
        ],
        [],
    )
    with pytest.raises(InputError) as exc:
        read(f)
    assert "'x'" in str(exc.value) and "Shell" in str(exc.value)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"jobs": []}, "not a WhaleTunnel export"),
        ({"syncJobDefinitionDtoList": []}, "no job definitions"),
        (
            {
                "syncJobDefinitionDtoList": [
                    {"jobTasks": [{"pluginId": "s", "type": "SOURCE", "dataSourceOption": "{bad"}]}
                ]
            },
            "invalid JSON inside the string",
        ),
    ],
)
def test_malformed_exports(tmp_path, doc, message):
    f = tmp_path / "x.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=message):
        read(f)


def test_sniff():
    r = registry.get("whaletunnel")
    assert r.sniff(str(MINIMAL), MINIMAL.read_bytes())
    assert not r.sniff("x.json", b'{"eventType": "COMPLETE"}')
