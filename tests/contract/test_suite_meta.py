"""The contract suite itself: enough tests, each citing a checklist row that exists.

``checklist_ids.txt`` is a copy of the row IDs of ``shared/docs/atlas-contract-checklist.md`` so that CI does
not depend on the shared folder; when that file is present the copy is checked against it.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).parent
GROUPS = ("TD", "EN", "RD", "DL", "SR", "LN", "AD", "RL")
TEST_NAME = re.compile(r"^test_([A-Z]{2})_(\d{3})_")


def _checklist_doc() -> Path | None:
    """The shared checklist (``../shared/docs`` seen from the repository), if this checkout has it."""
    for parent in HERE.parents:
        candidate = parent / "shared" / "docs" / "atlas-contract-checklist.md"
        if candidate.exists():
            return candidate
    return None


def _known_ids() -> set[str]:
    return {
        line.strip() for line in (HERE / "checklist_ids.txt").read_text(encoding="utf-8").splitlines() if line
    }


def _cited() -> list[tuple[str, str]]:
    """(test function name, cited ID) for every contract test function (parametrized cases count once)."""
    out = []
    for path in sorted(HERE.glob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                m = TEST_NAME.match(node.name)
                out.append((node.name, f"{m.group(1)}-{m.group(2)}" if m else ""))
    return out


def test_every_contract_test_cites_an_existing_checklist_id() -> None:
    known = _known_ids()
    bad = [name for name, cited in _cited() if cited not in known]
    assert bad == []


def test_suite_has_at_least_150_tests_covering_every_group() -> None:
    cited = _cited()
    assert len(cited) >= 150
    per_group = Counter(cid.split("-")[0] for _, cid in cited)
    assert all(per_group[g] > 0 for g in GROUPS), per_group


def test_checklist_id_copy_matches_the_checklist() -> None:
    doc = _checklist_doc()
    if doc is None:
        pytest.skip("shared/docs/atlas-contract-checklist.md not present (CI uses checklist_ids.txt)")
    doc_ids = re.findall(r"^\| ([A-Z]{2}-\d{3}) \|", doc.read_text(encoding="utf-8"), re.M)
    assert set(doc_ids) == _known_ids()
    assert len(doc_ids) == len(set(doc_ids))
