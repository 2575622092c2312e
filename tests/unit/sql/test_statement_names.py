"""A SQL statement's process is named by what it does (target + digest of its fingerprint), never by
its position in the script: edits elsewhere in a script rename nothing."""

from __future__ import annotations

from pathlib import Path

from atlas_sync.lineage.readers.sql import READER
from atlas_sync.lineage.sql.naming import digest, statement_process_id

ETL = """
INSERT INTO mart.daily SELECT d, SUM(x) AS x FROM raw.events WHERE kind = 'a' GROUP BY d;
INSERT INTO mart.users SELECT id, name FROM raw.users;
"""
NEW_FIRST = "INSERT INTO mart.audit SELECT id FROM raw.audit_log;\n"


def _ids(tmp_path: Path, text: str, name: str = "etl.sql") -> list[str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return [p.id for p in READER.read([str(path)], dialect="spark").processes]


def test_a_statement_is_named_by_job_target_and_digest(tmp_path: Path) -> None:
    ids = _ids(tmp_path, ETL)
    assert [i.rsplit(":", 1)[0] for i in ids] == ["etl:mart.daily", "etl:mart.users"]
    assert all(len(i.rsplit(":", 1)[1]) == 8 for i in ids)


def test_inserting_a_statement_at_the_top_keeps_every_other_name(tmp_path: Path) -> None:
    before = _ids(tmp_path, ETL)
    after = _ids(tmp_path, NEW_FIRST + ETL)
    assert after[1:] == before
    assert after[0].startswith("etl:mart.audit:")


def test_removing_or_moving_statements_keeps_the_others_names(tmp_path: Path) -> None:
    first, second = (s.strip() + "\n" for s in ETL.strip().split("\n"))
    assert _ids(tmp_path, second + first) == list(reversed(_ids(tmp_path, first + second)))
    assert _ids(tmp_path, second) == _ids(tmp_path, first + second)[1:]


def test_whitespace_case_comments_and_literals_do_not_rename_a_statement(tmp_path: Path) -> None:
    edited = ETL.replace("kind = 'a'", "kind = 'b' /* changed filter value */").replace(
        "SELECT d", "select   d"
    )
    assert _ids(tmp_path, edited) == _ids(tmp_path, ETL)


def test_changing_what_a_statement_reads_gives_it_a_new_name(tmp_path: Path) -> None:
    before = _ids(tmp_path, ETL)
    after = _ids(tmp_path, ETL.replace("FROM raw.users", "FROM raw.customers"))
    assert after[0] == before[0]
    assert after[1] != before[1] and after[1].startswith("etl:mart.users:")


def test_the_same_statement_twice_gets_a_counter() -> None:
    taken: set[str] = set()
    text = "INSERT INTO t SELECT a FROM s"
    first = statement_process_id("job", "t", text, taken)
    second = statement_process_id("job", "t", text, taken)
    assert first == f"job:t:{digest(text)}"
    assert second == first + ":2"


def test_digest_ignores_comments_and_literals_but_not_identifiers() -> None:
    base = "INSERT INTO t SELECT a FROM s WHERE d = '2024-01-01'"
    assert digest(base) == digest(
        "/* daily */ insert into t\n select a from s where d = '2025-12-31' -- note"
    )
    assert digest(base) != digest(base.replace("FROM s", "FROM s2"))
