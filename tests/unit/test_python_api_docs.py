"""docs/python-api.md: every ``python`` block runs, in order, in one namespace, in a fresh folder.

A block preceded by an HTML comment starting with ``<!-- not run`` is only compiled (it needs a real
Atlas). Printed output is not compared (the page shows it in comments for the reader); the blocks
carry their own ``assert`` statements.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import atlas_sync

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"
BLOCK = re.compile(r"(<!-- not run[^>]*-->\n)?```python\n(.*?)```", re.S)


def blocks() -> list[tuple[bool, str, int]]:
    text = PAGE.read_text(encoding="utf-8")
    return [(m.group(1) is None, m.group(2), text[: m.start()].count("\n") + 1) for m in BLOCK.finditer(text)]


def test_the_page_has_runnable_examples() -> None:
    found = blocks()
    assert sum(run for run, _, _ in found) >= 8
    assert any(not run for run, _, _ in found)


def test_every_python_block_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for var in ("ATLAS_URL", "ATLAS_PASSWORD", "ATLAS_SYNC_DOMAIN", "ATLAS_SYNC_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    namespace: dict[str, object] = {"__name__": "python_api_docs"}
    for run, code, line in blocks():
        compiled = compile(code, f"{PAGE}:{line}", "exec")
        if run:
            exec(compiled, namespace)  # noqa: S102 - the documentation's own examples
    out = capsys.readouterr().out
    # The quick start's SQL, by hand: 2 tables + 5 columns + 1 statement + 3 column lineages
    # (id IDENTITY, name TRANSFORMATION, the FILTER on active) = 11; the hand-built graph: 2 datasets
    # + 4 columns + 1 process + 2 column lineages = 9.
    lines = out.splitlines()
    assert lines[0] == "Plan: 11 to create, 0 to update, 0 to delete, 0 unchanged."
    assert lines[1] == "Plan: 0 to create, 0 to update, 0 to delete, 11 unchanged."
    assert "Plan: 9 to create, 0 to update, 0 to delete, 0 unchanged." in lines
    assert (tmp_path / "etl.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "input error:" in out


def test_every_name_the_page_imports_from_atlas_sync_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for names in re.findall(r"^from atlas_sync import (.+)$", text, flags=re.M):
        for name in names.split(","):
            assert hasattr(atlas_sync, name.strip()), name
