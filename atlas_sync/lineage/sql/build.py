"""Turn per-statement results into a :class:`LineageGraph`: datasets, one statement process per
lineage-bearing statement, column edges owned by that process, problems and per-statement documents."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from atlas_sync.lineage.model import (
    DIRECT_KINDS,
    INDIRECT_KINDS,
    Column,
    ColumnEdge,
    ColumnRef,
    Dataset,
    LineageGraph,
    Problem,
    Process,
    dotted,
    split_dotted,
)
from atlas_sync.lineage.sql.analyze import StatementLineage, TableRef


def _dataset(ref: TableRef, used: Iterable[str]) -> Dataset:
    cols = list(dict.fromkeys([*ref.columns, *used]))
    return Dataset(
        id=ref.id,
        namespace=ref.namespace,
        name=ref.name,
        kind=ref.kind,
        columns=[Column(name=c, type=ref.types.get(c), description=ref.descriptions.get(c)) for c in cols],
        description=ref.description,
    )


_KINDS = DIRECT_KINDS | INDIRECT_KINDS
# Frozen models built with these shared field sets (what validation would record: every field given).
_EDGE_FIELDS = {"source", "target", "kind", "expression", "process"}
_REF_FIELDS = {"dataset", "column"}


def _intern(name: str | None) -> str | None:
    return None if name is None else sys.intern(name)


class GraphIndex:
    """Lookups over a graph being built: ``LineageGraph.add_*`` search lists, which is quadratic over
    the thousands of statements of a query log."""

    def __init__(self, graph: LineageGraph) -> None:
        self.graph = graph
        self.datasets: dict[str, Dataset] = {d.id: d for d in graph.datasets}
        self.columns: dict[str, set[str]] = {d.id: set(d.column_names()) for d in graph.datasets}
        self.processes: set[str] = {p.id for p in graph.processes}
        self.edges: set[ColumnEdge] = set(graph.edges)
        self.refs: dict[tuple[str, str | None], ColumnRef] = {}

    def add_dataset(self, ds: Dataset) -> Dataset:
        existing = self.datasets.get(ds.id)
        if existing is None:
            self.graph.datasets.append(ds)
            self.datasets[ds.id] = ds
            self.columns[ds.id] = set(ds.column_names())
            return ds
        have = self.columns[ds.id]
        for col in ds.columns:
            if col.name not in have:
                have.add(col.name)
                existing.columns.append(col)
            elif col.description:
                # a later COMMENT ON COLUMN describes a column an earlier statement named: the last one wins
                for c in existing.columns:
                    if c.name == col.name:
                        c.description = col.description
        if ds.description:
            existing.description = ds.description  # as a database keeps the last COMMENT ON TABLE
        return existing

    def add_process(self, p: Process) -> Process:
        if p.id in self.processes:
            raise ValueError(f"duplicate process id {p.id!r}")
        self.processes.add(p.id)
        self.graph.processes.append(p)
        return p

    def ref(self, dataset: str, column: str | None) -> ColumnRef:
        """One shared (frozen) reference per column: a big input names the same columns in thousands
        of edges, each arriving as its own copy from a query-log worker."""
        key = (dataset, column)
        r = self.refs.get(key)
        if r is None:
            r = self.refs[key] = ColumnRef.model_construct(
                _REF_FIELDS, dataset=sys.intern(dataset), column=_intern(column)
            )
        return r

    def edge(
        self,
        source: str,
        source_column: str | None,
        target: str,
        target_column: str | None,
        kind: str,
        expression: str | None,
        process: str,
    ) -> ColumnEdge:
        """A column edge with shared references; validated only if ``kind`` is not a known kind."""
        src, tgt = self.ref(source, source_column), self.ref(target, target_column)
        if kind not in _KINDS:
            return ColumnEdge(source=src, target=tgt, kind=kind, expression=expression, process=process)  # type: ignore[arg-type]
        return ColumnEdge.model_construct(
            _EDGE_FIELDS, source=src, target=tgt, kind=kind, expression=expression, process=process
        )

    def add_edge(self, e: ColumnEdge) -> None:
        if e not in self.edges:
            self.edges.add(e)
            self.graph.edges.append(e)


def add_statement(
    graph: LineageGraph,
    st: StatementLineage,
    *,
    process_id: str,
    file: str | None = None,
    dialect: str = "",
    attributes: dict[str, Any] | None = None,
    statement_doc: bool = True,
    index: GraphIndex | None = None,
) -> Process | None:
    """Add one statement's lineage to ``graph``; returns its process (None if it moves no data).
    Pass the same ``index`` for every statement of a large input."""
    idx = index or GraphIndex(graph)
    used: dict[str, list[str]] = {}
    for e in st.edges:
        used.setdefault(e.source, []).append(e.source_column)
        if e.target_column is not None:
            used.setdefault(e.target, []).append(e.target_column)
    refs = [*st.reads, *st.writes, *st.defines]
    known = {r.id for r in refs}
    for e in st.edges:  # every edge end is a dataset of the graph, even if a read was missed
        if e.source not in known:
            known.add(e.source)
            parts = split_dotted(e.source)
            refs.append(TableRef(id=e.source, namespace=dotted(*parts[:-1]), name=parts[-1]))
    for ref in refs:
        stored = idx.add_dataset(_dataset(ref, used.get(ref.id, [])))
        if stored.kind == "table" and ref.kind in ("view", "intermediate"):
            stored.kind = ref.kind  # a later CREATE VIEW tells us what an earlier read was
    process: Process | None = None
    if st.lineage_bearing:
        attrs: dict[str, Any] = {"queryText": st.text, "statementType": st.type}
        if dialect:
            attrs["dialect"] = dialect
        if st.line is not None:
            attrs["line"] = st.line
        attrs.update(attributes or {})
        reads = list(dict.fromkeys(r.id for r in st.reads))
        writes = list(dict.fromkeys(w.id for w in st.writes))
        process = idx.add_process(
            Process(
                id=process_id,
                name=process_id,
                kind="statement",
                inputs=reads,
                outputs=writes,
                attributes=attrs,
            )
        )
        file_ids = {r.id for r in [*st.reads, *st.writes] if r.kind == "file"}
        for e in st.edges:
            if e.source in file_ids or e.target in file_ids:
                continue
            idx.add_edge(
                idx.edge(
                    e.source, e.source_column, e.target, e.target_column, e.kind, e.expression, process_id
                )
            )
    for p in st.problems:
        graph.problems.append(
            Problem(
                message=p["message"],
                severity=p.get("severity", "warning"),
                code=p.get("code"),
                file=file,
                line=p.get("line", st.line),
                column=p.get("column"),
                statement=st.index,
            )
        )
    if statement_doc:
        graph.statements.append(statement_document(st, process.id if process else None))
    return process


def statement_document(st: StatementLineage, process_id: str | None) -> dict[str, Any]:
    """The per-statement document: type, place, tables read/written, column edges, problems."""
    doc: dict[str, Any] = {
        "index": st.index,
        "line": st.line,
        "type": st.type,
        "tables": {
            "read": list(dict.fromkeys(r.id for r in st.reads)),
            "write": list(dict.fromkeys(w.id for w in st.writes)),
        },
        "columns": [
            {
                "source": str(ColumnRef(dataset=e.source, column=e.source_column)),
                "target": str(ColumnRef(dataset=e.target, column=e.target_column)),
                "kind": e.kind,
                **({"expression": e.expression} if e.expression is not None else {}),
            }
            for e in st.edges
        ],
        "sql": st.text,
    }
    if process_id is not None:
        doc["process"] = process_id
    if st.problems:
        doc["problems"] = [dict(p) for p in st.problems]
    return doc
