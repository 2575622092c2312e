"""The stored-procedure corpus (tests/data/sql/procedures/corpus/, issue 43): 62 procedures in
T-SQL, Snowflake Scripting, PL/pgSQL and MySQL with lineage worked out by hand from the SQL
(format and conventions in the corpus README). Each one, read by the SQL reader the ``lineage sql``
command and the live-database reader use, must not be rejected, must not come back empty without a
problem, and must give exactly the tables and column edges written down."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.lineage.model import DIRECT_KINDS
from atlas_sync.lineage.sql.analyze import StatementLineage
from atlas_sync.lineage.sql.script import analyze_sql

CORPUS = Path(__file__).resolve().parents[2] / "data" / "sql" / "procedures" / "corpus"
DIALECTS = ("tsql", "snowflake", "postgres", "mysql")

# Known failures, each a gap named here; strict, so a fix shows up as XPASS and the entry must go.
XFAIL: dict[str, str] = {}


@dataclass
class Case:
    dialect: str
    file: str
    reads: set[str]
    writes: set[str]
    columns: dict[str, set[str]]
    dynamic: bool = False
    intermediates: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.file.removesuffix(".sql")


def load_cases() -> list[Case]:
    cases = []
    for dialect in DIALECTS:
        spec: dict[str, Any] = tomllib.loads((CORPUS / dialect / "expected.toml").read_text(encoding="utf-8"))
        assert spec["dialect"] == dialect
        for p in spec["procedure"]:
            cases.append(
                Case(
                    dialect=dialect,
                    file=p["file"],
                    reads=set(p["reads"]),
                    writes=set(p["writes"]),
                    columns={k: set(v) for k, v in p.get("columns", {}).items()},
                    dynamic=p.get("dynamic", False),
                    intermediates=p.get("intermediates", []),
                )
            )
    return cases


CASES = load_cases()


def _norm(name: str) -> str:
    return name.replace('"', "").lower()


@dataclass
class Found:
    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    columns: dict[str, set[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)


def read(case: Case) -> Found:
    """The file's lineage as the reader gives it, in the corpus' terms (see its README)."""
    sql = (CORPUS / case.dialect / case.file).read_text(encoding="utf-8")
    found = Found()
    results: list[StatementLineage] = analyze_sql(sql, dialect=case.dialect)
    for st in results:
        found.reads |= {_norm(r.id) for r in st.reads}
        found.writes |= {_norm(w.id) for w in st.writes}
        for e in st.edges:
            if e.target_column is not None and e.kind in DIRECT_KINDS:
                target = _norm(f"{e.target}.{e.target_column}")
                found.columns.setdefault(target, set()).add(_norm(f"{e.source}.{e.source_column}"))
        found.codes += [p["code"] for p in st.problems]
        found.errors += [
            f"line {p.get('line')}: {p['message']}" for p in st.problems if p["severity"] == "error"
        ]
        if st.error and not st.problems:
            found.errors.append(f"statement {st.index} rejected")
    found.reads -= found.writes
    return found


def test_the_corpus_has_sixty_procedures_in_four_dialects_each_file_listed_once() -> None:
    counts = {d: sum(c.dialect == d for c in CASES) for d in DIALECTS}
    assert sum(counts.values()) >= 60 and min(counts.values()) >= 11, counts
    for dialect in DIALECTS:
        on_disk = {p.name for p in (CORPUS / dialect).glob("*.sql")}
        listed = [c.file for c in CASES if c.dialect == dialect]
        assert sorted(listed) == sorted(on_disk)
    assert set(XFAIL) <= {c.name for c in CASES}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c.name, marks=[pytest.mark.xfail(strict=True, reason=XFAIL[c.name])])
        if c.name in XFAIL
        else pytest.param(c, id=c.name)
        for c in CASES
    ],
)
def test_procedure_lineage_is_exactly_the_hand_written_one(case: Case) -> None:
    found = read(case)
    assert not found.errors, "rejected: " + "; ".join(found.errors)
    assert found.reads or found.writes or found.codes, "empty lineage and no problem"
    if case.dynamic:
        assert "dynamic-sql" in found.codes
    for name in case.intermediates:
        assert name not in found.reads | found.writes, f"intermediate {name} leaked"
    assert (found.reads, found.writes) == (case.reads, case.writes)
    assert found.columns == case.columns
