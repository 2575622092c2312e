"""Default OpenLineage namespace + name -> dataset identity rules, and the namespace map."""

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.openlineage.naming import NamespaceMap, load_namespace_map


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("postgres://host:5432", "db.schema.t", ("db.schema.t", "db.schema", "t", "table")),
        ("hive://host:9083", "db.t", ("db.t", "db", "t", "table")),
        (
            "s3://bucket",
            "dir/key.parquet",
            ("s3://bucket/dir/key.parquet", "s3://bucket/dir", "key.parquet", "file"),
        ),
        ("file", "/tmp/x.csv", ("file:///tmp/x.csv", "file:///tmp", "x.csv", "file")),
        ("kafka://broker:9092", "orders", ("orders", "", "orders", "topic")),
        ("bigquery", "proj.ds.t", ("proj.ds.t", "proj.ds", "t", "table")),
    ],
)
def test_default_identity(namespace, name, expected):
    i = NamespaceMap().identity(namespace, name)
    assert (i.id, i.namespace, i.name, i.kind) == expected


def test_non_identifier_name_parts_are_quoted():
    assert NamespaceMap().identity("mysql://h:3306", 'shop."order items"').id == 'shop."order items"'


def test_exact_key_beats_pattern_and_longer_pattern_beats_shorter():
    m = NamespaceMap({"postgres://*": "pg", "postgres://db1*": "db1", "postgres://db1:5432": "exact"})
    assert m.identity("postgres://db1:5432", "a.b").id == "exact.a.b"
    assert m.identity("postgres://db1:6432", "a.b").id == "db1.a.b"
    assert m.identity("postgres://db2:5432", "a.b").id == "pg.a.b"


def test_empty_mapping_value_keeps_plain_name():
    assert NamespaceMap({"postgres://*": ""}).identity("postgres://x", "a.b").id == "a.b"


def test_namespace_map_from_json_file(tmp_path):
    f = tmp_path / "m.json"
    f.write_text('{"hive://m:9083": "warehouse"}')
    assert load_namespace_map(str(f)).identity("hive://m:9083", "db.t").id == "warehouse.db.t"


def test_namespace_map_rejects_non_string_values_and_missing_files(tmp_path):
    with pytest.raises(InputError, match="must be a string"):
        load_namespace_map({"a": 1})
    with pytest.raises(InputError, match="cannot read"):
        load_namespace_map(str(tmp_path / "missing.toml"))
