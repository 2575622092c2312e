"""SQL comments arrive as descriptions: COMMENT ON TABLE / COLUMN and CREATE TABLE ... COMMENT."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_sync.lineage import registry


def _read(tmp_path: Path, sql: str, dialect: str):
    f = tmp_path / "job.sql"
    f.write_text(sql)
    return registry.get("sql").read([str(f)], dialect=dialect)


def test_create_table_comments_on_table_and_columns(tmp_path: Path) -> None:
    g = _read(
        tmp_path,
        "CREATE TABLE raw.customers (id INT COMMENT 'customer id', email STRING) COMMENT 'Every customer';\n"
        "INSERT INTO mart.contacts SELECT id, email FROM raw.customers;\n",
        "spark",
    )
    d = g.dataset("raw.customers")
    assert d.description == "Every customer"
    assert {c.name: c.description for c in d.columns} == {"id": "customer id", "email": None}
    assert g.dataset("mart.contacts").description is None  # nothing invented for the target


@pytest.mark.parametrize("dialect", ["postgres", "snowflake", "oracle", "trino"])
def test_comment_on_table_and_column(tmp_path: Path, dialect: str) -> None:
    g = _read(
        tmp_path,
        "INSERT INTO mart.contacts SELECT id, email FROM raw.customers;\n"
        "COMMENT ON TABLE mart.contacts IS 'One row per contact';\n"
        "COMMENT ON COLUMN mart.contacts.email IS 'Lower-cased e-mail';\n"
        "COMMENT ON COLUMN raw.customers.email IS '';\n",
        dialect,
    )
    out = g.dataset("mart.contacts")
    assert out.description == "One row per contact"
    assert {c.name: c.description for c in out.columns}["email"] == "Lower-cased e-mail"
    assert {c.name: c.description for c in g.dataset("raw.customers").columns}["email"] is None
    assert len(g.processes) == 1  # comments move no data


def test_a_later_comment_replaces_an_earlier_one(tmp_path: Path) -> None:
    g = _read(
        tmp_path,
        "COMMENT ON TABLE raw.t IS 'first';\nCOMMENT ON TABLE raw.t IS 'second';\n",
        "postgres",
    )
    assert g.dataset("raw.t").description == "second"


def test_create_table_as_select_with_a_comment(tmp_path: Path) -> None:
    g = _read(tmp_path, "CREATE TABLE mart.y COMMENT 'the y' AS SELECT id FROM raw.customers;\n", "spark")
    assert g.dataset("mart.y").description == "the y"
    assert g.dataset("raw.customers").description is None
    assert len(g.processes) == 1
