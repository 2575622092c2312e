"""A table a script only declares (``CREATE TABLE t (a int)``) is not a table it reads."""

from __future__ import annotations

import io
import json
from pathlib import Path

from click.testing import CliRunner

from atlas_sync.cli.main import cli
from atlas_sync.lineage.model import write_graph_document
from atlas_sync.lineage.readers.sql import READER


def test_a_script_of_only_a_create_table_reads_nothing(tmp_path: Path) -> None:
    f = tmp_path / "ddl.sql"
    f.write_text("CREATE TABLE t (a int);\n")
    graph = READER.read([str(f)])
    assert [d.id for d in graph.datasets] == ["t"]  # still a dataset, with its column
    assert graph.to_document()["tables"] == {"read": [], "write": []}
    out = io.StringIO()
    write_graph_document(graph, out)
    assert json.loads(out.getvalue())["tables"] == {"read": [], "write": []}
    res = CliRunner().invoke(cli, ["lineage", "sql", str(f)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["tables"] == {"read": [], "write": []}


def test_a_declared_table_beside_a_select_is_not_read_but_the_selected_ones_are(tmp_path: Path) -> None:
    f = tmp_path / "mixed.sql"
    f.write_text("CREATE TABLE t (a int);\nSELECT x FROM db.u JOIN v ON u.id = v.id;\n")
    assert READER.read([str(f)]).to_document()["tables"] == {"read": ["db.u", "v"], "write": []}
    res = CliRunner().invoke(cli, ["lineage", "sql", str(f)])
    assert json.loads(res.stdout)["tables"] == {"read": ["db.u", "v"], "write": []}
