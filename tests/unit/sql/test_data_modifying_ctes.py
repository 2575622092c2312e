"""Postgres data-modifying CTEs (``WITH m AS (DELETE|UPDATE|INSERT ... RETURNING ...) ...``, the
PostgreSQL manual's "Data-Modifying Statements in WITH"): the CTE's rows are the changed table's,
and the change itself is lineage. Found by the procedure corpus (issue 43, p08): ``m`` was read as
a table. Expectations worked out by hand."""

from __future__ import annotations

from .conftest import DIRECT, one, triples


def test_delete_returning_feeds_an_insert_from_the_deleted_table() -> None:
    st = one(
        "WITH moved AS (DELETE FROM ops.jobs j WHERE j.finished_at < now() RETURNING j.job_id, j.kind) "
        "INSERT INTO ops.jobs_history (job_id, kind) SELECT m.job_id, m.kind FROM moved m",
        "postgres",
    )
    assert [r.id for r in st.reads] == ["ops.jobs"]
    assert [w.id for w in st.writes] == ["ops.jobs_history"]
    assert triples(st) == {
        ("ops.jobs.job_id", "ops.jobs_history.job_id", "IDENTITY"),
        ("ops.jobs.kind", "ops.jobs_history.kind", "IDENTITY"),
        ("ops.jobs.finished_at", "ops.jobs_history.*", "FILTER"),  # the rows deleted are the rows moved
    }


def test_update_returning_is_a_write_and_feeds_the_statement() -> None:
    st = one(
        "WITH upd AS (UPDATE ops.jobs SET kind = s.kind FROM ops.src s WHERE s.id = jobs.id "
        "RETURNING jobs.job_id) INSERT INTO ops.log (job_id) SELECT job_id FROM upd",
        "postgres",
    )
    assert [r.id for r in st.reads] == ["ops.src"]
    assert sorted(w.id for w in st.writes) == ["ops.jobs", "ops.log"]
    assert triples(st, DIRECT) == {
        ("ops.src.kind", "ops.jobs.kind", "IDENTITY"),
        ("ops.jobs.job_id", "ops.log.job_id", "IDENTITY"),
    }


def test_insert_returning_chains_two_writes() -> None:
    st = one(
        "WITH ins AS (INSERT INTO a.t (x) SELECT x FROM a.s RETURNING x) "
        "INSERT INTO a.audit (x) SELECT x FROM ins",
        "postgres",
    )
    assert [r.id for r in st.reads] == ["a.s"]
    assert sorted(w.id for w in st.writes) == ["a.audit", "a.t"]
    assert triples(st, DIRECT) == {("a.s.x", "a.t.x", "IDENTITY"), ("a.t.x", "a.audit.x", "IDENTITY")}
