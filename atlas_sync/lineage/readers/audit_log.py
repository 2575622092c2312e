"""Apache Doris's audit log (``__internal_schema.audit_log``) as a query log.

An export of the audit log (CSV with its column names: ``stmt``, ``user``, ``time``, ``catalog``,
``db``, ``query_time``, ``state``, ``is_query``, ``is_internal``, ``queried_tables_and_views``,
``chosen_m_views``, ...) is read by the ``query-log`` reader: its columns are mapped onto the
query-log ones, statements that write go through the SQL reader (dialect ``doris`` unless
``--dialect`` says otherwise), and the others become **read lineage**: one process per querying
user, ``<job>:reads:<user>``, whose inputs are every table and view the user's queries read
(``queried_tables_and_views``, catalog-qualified) and which has no outputs; ``chosen_m_views`` (the
materialized views the optimizer rewrote a query to use) are inputs of the process of the query
they served, and listed in its ``materializedViews`` attribute. Failed (``state = ERR``) and
internal (``is_internal = 1``) statements are left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from atlas_sync.lineage.model import Dataset, Process, dotted, split_dotted
from atlas_sync.lineage.sql.build import GraphIndex

#: audit_log column -> query-log column
COLUMNS = {
    "stmt": "query_text",
    "user": "user_name",
    "time": "start_time",
    "query_time": "duration",
    "catalog": "database_name",
    "db": "schema_name",
}
_MARKERS = {"queried_tables_and_views", "chosen_m_views", "is_query", "stmt_type", "stmt_id"}


def is_audit_header(names: Iterable[str]) -> bool:
    """Whether a CSV header is an audit-log export's (``stmt`` and one audit-only column)."""
    have = set(names)
    return "stmt" in have and "query_text" not in have and bool(have & _MARKERS)


def normalize(row: dict[str, str]) -> dict[str, str] | None:
    """The row with query-log column names; None for a statement that failed or is internal."""
    if (row.get("state") or "").strip().upper() == "ERR":
        return None
    if (row.get("is_internal") or "").strip().lower() in ("1", "true"):
        return None
    out = dict(row)
    for audit, name in COLUMNS.items():
        if audit in row and not out.get(name):
            out[name] = row[audit]
    if out.get("duration"):  # milliseconds in the audit log, seconds in a query log
        try:
            out["duration"] = str(float(out["duration"]) / 1000.0)
        except ValueError:
            out["duration"] = ""
    return out


def names(value: str | None) -> list[str]:
    """Dataset ids of an audit-log array (``["internal.tpch.orders", ...]``, or comma-separated)."""
    text = (value or "").strip()
    if not text or text in ("[]", "NULL", "\\N"):
        return []
    try:
        items = json.loads(text)
    except ValueError:
        items = [p.strip().strip("'\"") for p in text.strip("[]").split(",")]
    if not isinstance(items, list):
        return []
    out: list[str] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            parts = [p.lower() for p in split_dotted(item.strip().replace("`", ""))]
            ident = dotted(*parts)
            if ident not in out:
                out.append(ident)
    return out


@dataclass
class UserReads:
    tables: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)  # materialized views chosen by the optimizer
    queries: int = 0
    first: str | None = None
    last: str | None = None


@dataclass
class ReadLineage:
    """Read-only queries of an audit log, gathered per user."""

    users: dict[str, UserReads] = field(default_factory=dict)

    def add(self, row: dict[str, str]) -> bool:
        """Record a read-only row; False when it names no table."""
        tables = names(row.get("queried_tables_and_views"))
        mviews = names(row.get("chosen_m_views"))
        if not tables and not mviews:
            return False
        user = (row.get("user_name") or "").strip() or "unknown"
        reads = self.users.setdefault(user, UserReads())
        reads.queries += 1
        for t in tables:
            if t not in reads.tables:
                reads.tables.append(t)
        for v in mviews:
            if v not in reads.views:
                reads.views.append(v)
        started = (row.get("start_time") or "").strip() or None
        if started:
            reads.first = min(reads.first or started, started)
            reads.last = max(reads.last or started, started)
        return True

    def add_to(self, index: GraphIndex, job: str) -> int:
        """One process per user, reading what the user's queries read; returns the processes added."""
        for user, reads in self.users.items():
            for ident in reads.tables:
                index.add_dataset(_dataset(ident, "table"))
            for ident in reads.views:
                index.add_dataset(_dataset(ident, "view")).kind = "view"
            attrs: dict[str, object] = {"statementType": "READ", "user": user, "queries": reads.queries}
            if reads.first:
                attrs["firstStartTime"], attrs["lastStartTime"] = reads.first, reads.last
            if reads.views:
                attrs["materializedViews"] = list(reads.views)
            pid = f"{job}:reads:{user}"
            index.add_process(
                Process(
                    id=pid,
                    name=pid,
                    kind="statement",
                    inputs=list(dict.fromkeys([*reads.tables, *reads.views])),
                    outputs=[],
                    attributes=attrs,
                )
            )
        return len(self.users)


def _dataset(ident: str, kind: str) -> Dataset:
    parts = split_dotted(ident)
    return Dataset(id=ident, namespace=dotted(*parts[:-1]), name=parts[-1], kind=kind)


def add_views(index: GraphIndex, process: Process, views: list[str]) -> None:
    """The materialized views a write statement's query was rewritten to use: inputs of its process."""
    for ident in views:
        index.add_dataset(_dataset(ident, "view")).kind = "view"
        if ident not in process.inputs:
            process.inputs.append(ident)
    process.attributes["materializedViews"] = list(views)
