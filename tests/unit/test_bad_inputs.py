"""Bad-input corpus (tests/data/bad/): every file gives a clean error and Atlas gets no write.

Each case runs ``atlas-sync sync`` (in-process, the embedded emulator in a temp data dir) and checks:
a non-zero exit, no traceback, the offending file named in the output, a place named where the file
has one, and an emulator database with no entity and no typedef beyond Atlas's built-ins.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from atlas_sync.cli.common import run_guarded
from atlas_sync.cli.main import cli

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
READERS = [
    "spark-plan",
    "spark-json",
    "sql",
    "query-log",
    "hive-lineage",
    "openlineage",
    "seatunnel",
    "whaletunnel",
    "graph",
]
GOOD_GRAPH = {
    "datasets": [
        {"id": "raw.a", "name": "a", "columns": ["x"]},
        {"id": "mart.b", "name": "b", "columns": ["y"]},
    ],
    "processes": [{"id": "p", "name": "p", "inputs": ["raw.a"], "outputs": ["mart.b"]}],
    "edges": [{"source": "raw.a.x", "target": "mart.b.y", "kind": "IDENTITY", "process": "p"}],
}
# Files whose error must name a line (or JSON path / statement): the defect sits at a known place.
PLACED = {
    "sql/unterminated-string.sql",
    "sql/unbalanced-paren.sql",
    "sql/garbage.sql",
    "sql/second-statement-bad.sql",
    "graph/truncated.lineage.json",
    "graph/unknown-kind.lineage.json",
    "spark-json/truncated.plan.json",
    "hive-lineage/bad-line.lineage.log",
    "openlineage/bad-line.ol.jsonl",
    "seatunnel/unbalanced-braces.conf",
}
PLACE_WORDS = ("line", "statement", "$", "column", "offset", "position")


# Known gaps, reported to the owners (the test turns green, and strict xfail red, once fixed).
XFAIL: dict[str, str] = {}


def _cases() -> list:
    out = []
    for reader in READERS:
        for f in sorted((BAD / reader).iterdir()):
            rel = f"{reader}/{f.name}"
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[rel])] if rel in XFAIL else []
            out.append(pytest.param(reader, rel, marks=marks, id=rel))
    return out


def _db_writes(data_dir: Path) -> tuple[int, int]:
    db = data_dir / "atlas.db"
    if not db.exists():
        return 0, 0
    with sqlite3.connect(db) as conn:
        entities = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
        typedefs = conn.execute("SELECT count(*) FROM typedefs WHERE builtin = 0").fetchone()[0]
    return int(entities), int(typedefs)


def _run(argv: list[str], tmp_path: Path, monkeypatch, capsys) -> tuple[int, str]:
    data = tmp_path / "atlas-data"
    monkeypatch.setenv("ATLAS_SYNC_DATA_DIR", str(data))
    for var in ("ATLAS_URL", "ATLAS_SYNC_CONFIG", "ATLAS_SYNC_PROFILE", "ATLAS_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    code = run_guarded(cli, argv)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _assert_clean(code: int, output: str, name: str, tmp_path: Path) -> None:
    assert code != 0, f"{name}: accepted\n{output[:3000]}"
    assert "Traceback" not in output, output[:3000]
    assert _db_writes(tmp_path / "atlas-data") == (0, 0), f"{name}: something was written to Atlas"


@pytest.mark.parametrize(("reader", "rel"), _cases())
def test_bad_input_is_a_clean_error_naming_the_file_with_no_write(reader, rel, tmp_path, monkeypatch, capsys):
    path = BAD / rel
    code, output = _run(
        ["sync", "--domain", "bad", "--from", reader, str(path)], tmp_path, monkeypatch, capsys
    )
    _assert_clean(code, output, rel, tmp_path)
    assert path.name in output, f"{rel}: the error does not name the file:\n{output}"
    if rel in PLACED:
        first = next(line for line in output.splitlines() if line.startswith("error"))
        assert any(w in first for w in PLACE_WORDS), f"{rel}: no place in {first!r}"


@pytest.mark.parametrize("name", sorted(p.name for p in (BAD / "profiles").iterdir()))
def test_bad_profile_folder_is_a_clean_error_with_no_write(name, tmp_path, monkeypatch, capsys):
    good = tmp_path / "good.lineage.json"
    good.write_text(json.dumps(GOOD_GRAPH), encoding="utf-8")
    folder = BAD / "profiles" / name
    argv = ["sync", "--domain", "bad", "--profile", str(folder), "--from", "graph", str(good)]
    code, output = _run(argv, tmp_path, monkeypatch, capsys)
    _assert_clean(code, output, name, tmp_path)
    assert name in output or any(f.name in output for f in folder.rglob("*")), output


@pytest.mark.parametrize("name", sorted(p.name for p in (BAD / "configs").iterdir()))
def test_bad_config_file_is_a_clean_error_naming_it_with_no_write(name, tmp_path, monkeypatch, capsys):
    good = tmp_path / "good.lineage.json"
    good.write_text(json.dumps(GOOD_GRAPH), encoding="utf-8")
    cfg = BAD / "configs" / name
    argv = ["sync", "--config", str(cfg), "--domain", "bad", "--from", "graph", str(good)]
    code, output = _run(argv, tmp_path, monkeypatch, capsys)
    _assert_clean(code, output, name, tmp_path)
    assert name in output, output
    assert "hunter2" not in output


# The line each bad glossary file's error must name, read off the files by hand.
GLOSSARY_LINES = {
    "bad-relation-format.csv": 2,
    "bad-syntax.toml": 3,
    "bad-syntax.yaml": 3,
    "category-cycle.toml": 4,
    "duplicate-term.csv": 4,
    "duplicate-term.toml": 7,
    "duplicate-term.yaml": 6,
    "name-with-dot.toml": 4,
    "unknown-category.yaml": 4,
    "unknown-key.toml": 4,
    "unknown-related-term.csv": 2,
    "unknown-related-term.toml": 4,
}


@pytest.mark.parametrize("name", sorted(p.name for p in (BAD / "glossaries").iterdir()))
def test_bad_glossary_file_is_a_clean_error_naming_file_and_line_with_no_write(
    name, tmp_path, monkeypatch, capsys
):
    path = BAD / "glossaries" / name
    code, output = _run(["glossary", "apply", str(path)], tmp_path, monkeypatch, capsys)
    _assert_clean(code, output, name, tmp_path)
    first = next(line for line in output.splitlines() if line.startswith("error"))
    assert name in first, output
    assert f"line {GLOSSARY_LINES[name]}:" in first, first


# Every bad rules file names the rule's line (or the file's, for a TOML syntax error).
@pytest.mark.parametrize("name", sorted(p.name for p in (BAD / "rules").iterdir()))
def test_bad_metadata_rules_are_a_clean_error_naming_file_and_line_with_no_write(
    name, tmp_path, monkeypatch, capsys
):
    good = tmp_path / "good.lineage.json"
    good.write_text(json.dumps(GOOD_GRAPH), encoding="utf-8")
    rules = BAD / "rules" / name
    argv = ["sync", "--domain", "bad", "--from", "graph", str(good), "--metadata-rules", str(rules)]
    code, output = _run(argv, tmp_path, monkeypatch, capsys)
    _assert_clean(code, output, name, tmp_path)
    first = next(line for line in output.splitlines() if line.startswith("error"))
    assert name in first and "line " in first, first


def test_the_corpus_has_at_least_60_inputs_across_every_reader():
    files = [p for p in BAD.rglob("*") if p.is_file() and p.suffix != ".py"]
    inputs = [p for p in files if p.parent.parent == BAD and p.parent.name in READERS]
    assert {p.parent.name for p in inputs} == set(READERS)
    assert (
        len(inputs) + len(list((BAD / "profiles").iterdir())) + len(list((BAD / "configs").iterdir())) >= 60
    )


@pytest.mark.parametrize(
    ("reader", "name", "make"),
    [
        # one 5 MB token (a long nested expression is quadratic in the SQL reader: see bench/README.md)
        ("sql", "huge-line.sql", lambda: "INSERT INTO t SELEKT " + "x" * 5_000_000),
        ("graph", "deep.lineage.json", lambda: "[" * 100_000 + "]" * 100_000),
        ("spark-json", "deep.plan.json", lambda: "[" * 100_000 + "]" * 100_000),
        ("openlineage", "deep.ol.json", lambda: '{"a":' * 50_000 + "1" + "}" * 50_000),
        ("hive-lineage", "deep.hive-lineage.json", lambda: "[" * 100_000 + "]" * 100_000),
        ("whaletunnel", "deep.whaletunnel.json", lambda: "[" * 100_000 + "]" * 100_000),
        ("spark-plan", "huge-line.plan.txt", lambda: "Project [" + "a#1, " * 200_000 + "\n"),
        ("seatunnel", "deep.conf", lambda: "env " + "{ a " * 20_000 + "}" * 20_000),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_huge_lines_and_deep_nesting_are_clean_errors(reader, name, make, tmp_path, monkeypatch, capsys):
    path = tmp_path / name
    path.write_text(make(), encoding="utf-8")
    code, output = _run(
        ["sync", "--domain", "bad", "--from", reader, str(path)], tmp_path, monkeypatch, capsys
    )
    _assert_clean(code, output, name, tmp_path)
    assert name in output, output
