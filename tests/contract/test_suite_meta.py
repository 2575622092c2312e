"""The contract suite itself: enough tests, each citing a checklist row that exists.

``checklist_ids.txt`` holds the row IDs of the Atlas contract checklist (docs/contract-suite.md): the
project's own copy, so the suite does not depend on a folder outside the project.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
GROUPS = ("TD", "EN", "RD", "DL", "SR", "LN", "AD", "RL")
TEST_NAME = re.compile(r"^test_([A-Z]{2})_(\d{3})_")


def _ids_in(file: str) -> set[str]:
    return {line.strip() for line in (HERE / file).read_text(encoding="utf-8").splitlines() if line}


def _known_ids() -> set[str]:
    return _ids_in("checklist_ids.txt")


def _extension_ids() -> set[str]:
    """Rows beyond the 2.4.0 checklist (Atlas's native models, labels, classifications; contract-suite.md)."""
    return _ids_in("extension_ids.txt")


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
    known = _known_ids() | _extension_ids()
    bad = [name for name, cited in _cited() if cited not in known]
    assert bad == []


def test_suite_has_at_least_150_tests_covering_every_group() -> None:
    cited = _cited()
    assert len(cited) >= 150
    per_group = Counter(cid.split("-")[0] for _, cid in cited)
    assert not _extension_ids() & _known_ids()
    assert all(per_group[g] > 0 for g in GROUPS), per_group


def test_checklist_ids_are_unique_well_formed_and_in_known_groups() -> None:
    ids = [
        line.strip() for line in (HERE / "checklist_ids.txt").read_text(encoding="utf-8").splitlines() if line
    ]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[A-Z]{2}-\d{3}", i) for i in ids)
    assert {i.split("-")[0] for i in ids} == set(GROUPS)


def test_every_checklist_row_is_cited_by_a_contract_test() -> None:
    cited = {cid for _, cid in _cited()}
    assert sorted(_known_ids() - cited) == []
