"""`--out` naming a file that cannot be written (its folder is missing) is a one-line error, no traceback.

`show --out`, `lineage --format html --out` and `plan --out` ended in a FileNotFoundError traceback.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from atlas_sync.cli.common import run_guarded
from atlas_sync.cli.main import cli


@pytest.mark.parametrize(
    "args",
    [
        ["lineage", "sql", "{sql}", "--format", "html", "--out", "{out}"],
        ["lineage", "sql", "{sql}", "--format", "text", "--out", "{out}"],
        ["show", "-d", "d", "--format", "svg", "--out", "{out}"],
        ["plan", "-d", "d", "{sql}", "--out", "{out}"],
    ],
    ids=["lineage html", "lineage text", "show", "plan"],
)
def test_an_out_file_in_a_missing_folder_is_a_one_line_error_naming_it(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("ATLAS_"):
            monkeypatch.delenv(name)
    sql = tmp_path / "job.sql"
    sql.write_text("INSERT INTO m.t SELECT id FROM s.a;\n", encoding="utf-8")
    out = tmp_path / "no-such-folder" / "x.out"
    argv = [a.format(sql=sql, out=out) for a in args]

    code = run_guarded(cli, argv)

    err = capsys.readouterr().err
    assert code == 1
    assert f"error: {out}: cannot write: No such file or directory" in err
    assert "Traceback" not in err
