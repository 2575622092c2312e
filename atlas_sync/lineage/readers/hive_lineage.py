"""The ``hive-lineage`` reader: Hive's LineageLogger JSON (also what Spark SQL field-lineage
extensions print): ``{"version", "queryText", "edges": [{"sources", "targets", "expression",
"edgeType"}], "vertices": [{"id", "vertexType", "vertexId"}]}``.

One document per file, a JSON array of documents, or one document per line (the hook's log
format). Each document becomes one ``Process(kind="statement")``. ``PROJECTION`` edges are direct
(``IDENTITY`` when the expression is absent or just the column, ``AGGREGATION`` when it is an
aggregate call, else ``TRANSFORMATION``); ``PREDICATE`` edges are indirect (``JOIN`` when the
expression is a join type or compares columns of two tables, else ``FILTER``), aimed at the whole
target table when they name all its columns.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.inputs import file_job, read_text
from atlas_sync.lineage.model import (
    Column,
    ColumnEdge,
    ColumnRef,
    Dataset,
    LineageGraph,
    Process,
    dotted,
    split_dotted,
)
from atlas_sync.lineage.sql.naming import digest

_AGGREGATES = {
    "sum",
    "count",
    "avg",
    "min",
    "max",
    "collect_list",
    "collect_set",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "percentile",
    "percentile_approx",
    "first",
    "last",
    "approx_count_distinct",
    "corr",
    "covar_pop",
    "covar_samp",
    "histogram_numeric",
}
_JOIN_TYPES = re.compile(
    r"^\s*(INNER|CROSS|LEFT|RIGHT|FULL|LEFT OUTER|RIGHT OUTER|FULL OUTER|LEFT SEMI|LEFT ANTI|SEMI|ANTI)"
    r"(\s+JOIN)?\s*$",
    re.IGNORECASE,
)
_CALL = re.compile(r"^\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\s*\(")
_EQ_COLS = re.compile(r"([A-Za-z_`][\w`]*(?:\.[\w`]+)+)\s*(?:=|<=>)\s*([A-Za-z_`][\w`]*(?:\.[\w`]+)+)")


def parse_documents(text: str, *, file: str | None = None) -> list[tuple[dict[str, Any], int | None]]:
    """Documents with the line they start on (None for a whole-file document)."""
    stripped = text.strip()
    if not stripped:
        raise InputError("empty file", file=file)
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError:
        whole = None
    except RecursionError:
        raise InputError("JSON nested too deeply", file=file) from None
    if isinstance(whole, dict):
        return [(whole, None)]
    if isinstance(whole, list):
        out: list[tuple[dict[str, Any], int | None]] = []
        for i, d in enumerate(whole):
            if not isinstance(d, dict):
                raise InputError("a lineage document must be a JSON object", file=file, path=f"$[{i}]")
            out.append((d, None))
        return out
    docs: list[tuple[dict[str, Any], int | None]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        # Hive's hook may prefix log lines; the JSON starts at the first brace.
        start = line.find("{")
        if start < 0:
            raise InputError("expected a JSON lineage document on this line", file=file, line=lineno)
        try:
            doc = json.loads(line[start:])
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON: {exc.msg}", file=file, line=lineno, column=exc.colno + start
            ) from None
        if not isinstance(doc, dict):
            raise InputError("a lineage document must be a JSON object", file=file, line=lineno)
        docs.append((doc, lineno))
    return docs


def _is_identity(expression: str | None, source_column: str) -> bool:
    if expression is None or not expression.strip():
        return True
    expr = expression.strip().strip("`").lower()
    last = split_dotted(expr.replace("`", ""))[-1]
    return last == source_column.lower()


def _direct_kind(expression: str | None, source_column: str) -> str:
    if _is_identity(expression, source_column):
        return "IDENTITY"
    m = _CALL.match(expression or "")
    if m and m.group(1).lower() in _AGGREGATES:
        return "AGGREGATION"
    return "TRANSFORMATION"


def _predicate_kind(expression: str | None) -> str:
    if not expression:
        return "FILTER"
    if _JOIN_TYPES.match(expression):
        return "JOIN"
    for left, right in _EQ_COLS.findall(expression):
        lt = split_dotted(left.replace("`", ""))[:-1]
        rt = split_dotted(right.replace("`", ""))[:-1]
        if lt and rt and lt != rt:
            return "JOIN"
    return "FILTER"


class HiveLineageReader:
    name = "hive-lineage"
    extensions = (".lineage.log", ".hive-lineage.json", ".edges.json")
    description = "Hive LineageLogger JSON (edges/vertices; PROJECTION and PREDICATE edges)"

    def sniff(self, path: str, head: bytes) -> bool:
        text = head.decode("utf-8", "replace")
        return '"edgeType"' in text or ('"vertices"' in text and '"edges"' in text)

    def read(self, paths: Sequence[str], *, job: str | None = None, **_options: Any) -> LineageGraph:
        """Read Hive lineage documents from ``paths`` (``-`` = stdin) into one graph."""
        if not paths:
            raise InputError("no Hive lineage file given")
        graph = LineageGraph(
            job=job or file_job(paths),
            job_from_name=not job,
            source="hive-lineage",
        )
        for path in paths:
            file = None if path == "-" else path
            docs = parse_documents(read_text(path), file=file)
            for i, (doc, line) in enumerate(docs, start=1):
                self._add(graph, doc, index=i, file=file, line=line)
        return graph

    def _add(
        self,
        graph: LineageGraph,
        doc: dict[str, Any],
        *,
        index: int,
        file: str | None,
        line: int | None,
    ) -> None:
        where = f"$[{index - 1}]" if line is None else "$"

        def fail(message: str, at: str) -> InputError:
            return InputError(message, file=file, line=line, path=where + at)

        vertices = doc.get("vertices")
        edges = doc.get("edges")
        if not isinstance(vertices, list) or not isinstance(edges, list):
            raise fail("a Hive lineage document needs 'edges' and 'vertices' lists", "")
        # vertex id -> (table parts, column or None)
        by_id: dict[Any, tuple[tuple[str, ...], str | None]] = {}
        table_columns: dict[tuple[str, ...], list[str]] = {}
        for i, v in enumerate(vertices):
            if not isinstance(v, dict) or "id" not in v or not isinstance(v.get("vertexId"), str):
                raise fail("a vertex needs 'id' and a string 'vertexId'", f".vertices[{i}]")
            parts = tuple(p for p in split_dotted(v["vertexId"]) if p)
            vtype = str(v.get("vertexType", "COLUMN")).upper()
            if vtype == "TABLE":
                by_id[v["id"]] = (parts, None)
                table_columns.setdefault(parts, [])
            else:
                if len(parts) < 2:
                    raise fail(f"column vertex {v['vertexId']!r} has no table part", f".vertices[{i}]")
                by_id[v["id"]] = (parts[:-1], parts[-1])
                cols = table_columns.setdefault(parts[:-1], [])
                if parts[-1] not in cols:
                    cols.append(parts[-1])
        for parts, cols in table_columns.items():
            graph.add_dataset(
                Dataset(
                    id=dotted(*parts),
                    namespace=dotted(*parts[:-1]),
                    name=parts[-1],
                    kind="table",
                    columns=[Column(name=c) for c in cols],
                )
            )
        # Named by the query (Hive's hash of it, else a digest of its text, else of its lineage), never
        # by the file or the document's place: a renamed file or another order renames nothing.
        text = doc.get("queryText")
        if doc.get("hash"):
            key = str(doc["hash"])
        elif isinstance(text, str) and text.strip():
            key = digest(text)
        else:
            key = hashlib.sha1(
                json.dumps([vertices, edges], sort_keys=True, default=str).encode("utf-8")
            ).hexdigest()[:8]
        base = pid = f"{graph.job or 'hive'}:{key}"
        n = 1
        while graph.process(pid) is not None:
            n += 1
            pid = f"{base}:{n}"
        inputs: list[str] = []
        outputs: list[str] = []
        new_edges: list[ColumnEdge] = []
        for i, e in enumerate(edges):
            at = f".edges[{i}]"
            if not isinstance(e, dict):
                raise fail("an edge must be an object", at)
            srcs, tgts = e.get("sources"), e.get("targets")
            if not isinstance(srcs, list) or not isinstance(tgts, list):
                raise fail("an edge needs 'sources' and 'targets' lists", at)
            for ref in (*srcs, *tgts):
                if ref not in by_id:
                    raise fail(f"edge refers to unknown vertex {ref!r}", at)
            etype = str(e.get("edgeType", "PROJECTION")).upper()
            expression = e.get("expression")
            expression = expression if isinstance(expression, str) else None
            for s in srcs:
                sp, _ = by_id[s]
                inputs.append(dotted(*sp))
            tgt_refs = [by_id[t] for t in tgts]
            for tp, _ in tgt_refs:
                if etype == "PROJECTION":
                    outputs.append(dotted(*tp))
            if etype == "PREDICATE":
                kind = _predicate_kind(expression)
                targets = self._predicate_targets(tgt_refs, table_columns)
                for s in srcs:
                    sp, sc = by_id[s]
                    for tp, tc in targets:
                        new_edges.append(
                            ColumnEdge(
                                source=ColumnRef(dataset=dotted(*sp), column=sc),
                                target=ColumnRef(dataset=dotted(*tp), column=tc),
                                kind=kind,  # type: ignore[arg-type]
                                expression=expression,
                                process=pid,
                            )
                        )
            else:
                for s in srcs:
                    sp, sc = by_id[s]
                    for tp, tc in tgt_refs:
                        new_edges.append(
                            ColumnEdge(
                                source=ColumnRef(dataset=dotted(*sp), column=sc),
                                target=ColumnRef(dataset=dotted(*tp), column=tc),
                                kind=_direct_kind(expression, sc or "") if sc else "IDENTITY",  # type: ignore[arg-type]
                                expression=expression,
                                process=pid,
                            )
                        )
        # Targets of predicates only (no projection) are still written by the query.
        for e in edges:
            if str(e.get("edgeType", "")).upper() == "PREDICATE":
                for t in e["targets"]:
                    outputs.append(dotted(*by_id[t][0]))
        outputs = list(dict.fromkeys(outputs))
        # A written table the query reads (INSERT OVERWRITE t ... FROM t) is an input too: every
        # column edge's source is an input of its process (the model's invariant).
        inputs = list(dict.fromkeys(inputs))
        attrs: dict[str, Any] = {}
        query = doc.get("queryText")
        if isinstance(query, str):
            attrs["queryText"] = query
        for k in ("version", "user", "timestamp", "duration", "engine", "database", "hash", "jobIds"):
            if doc.get(k) is not None:
                attrs[k] = doc[k]
        if "hash" not in attrs and isinstance(query, str):
            attrs["hash"] = hashlib.sha1(query.encode()).hexdigest()[:16]
        graph.add_process(
            Process(id=pid, name=pid, kind="statement", inputs=inputs, outputs=outputs, attributes=attrs)
        )
        for edge in new_edges:
            graph.add_edge(edge)
        graph.statements.append(
            {
                "index": index,
                **({"line": line} if line is not None else {}),
                "type": "HIVE LINEAGE",
                "process": pid,
                "tables": {"read": inputs, "write": outputs},
                **({"sql": query} if isinstance(query, str) else {}),
            }
        )

    @staticmethod
    def _predicate_targets(
        refs: list[tuple[tuple[str, ...], str | None]], table_columns: dict[tuple[str, ...], list[str]]
    ) -> list[tuple[tuple[str, ...], str | None]]:
        """A predicate naming every column of a target table is aimed at the whole table (``t.*``)."""
        by_table: dict[tuple[str, ...], set[str | None]] = {}
        for tp, tc in refs:
            by_table.setdefault(tp, set()).add(tc)
        out: list[tuple[tuple[str, ...], str | None]] = []
        for tp, cols in by_table.items():
            known = set(table_columns.get(tp, []))
            if None in cols or (known and known <= cols):
                out.append((tp, None))
            else:
                out.extend((tp, c) for c in cols)
        return out


READER = HiveLineageReader()


def to_hive_lineage(graph: LineageGraph) -> list[dict[str, Any]]:
    """The graph as Hive LineageLogger documents, one per process: direct kinds (IDENTITY,
    TRANSFORMATION, AGGREGATION) become PROJECTION edges, indirect kinds PREDICATE edges (the seed's
    view of column lineage). Edges to a whole dataset target every known column of it."""
    docs: list[dict[str, Any]] = []
    for proc in graph.processes:
        vertices: dict[tuple[str, str | None], int] = {}

        def vid(ref: ColumnRef, vertices: dict[tuple[str, str | None], int] = vertices) -> int:
            key = (ref.dataset, ref.column)
            if key not in vertices:
                vertices[key] = len(vertices)
            return vertices[key]

        grouped: dict[tuple[str, str | None], list[ColumnEdge]] = {}
        for e in graph.edges:
            if e.process == proc.id:
                grouped.setdefault((e.kind, e.expression), []).append(e)
        edges: list[dict[str, Any]] = []
        for (kind, expression), items in grouped.items():
            by_target: dict[ColumnRef, list[ColumnRef]] = {}
            for e in items:
                by_target.setdefault(e.target, []).append(e.source)
            for target, sources in by_target.items():
                targets = [target]
                if target.column is None:
                    ds = graph.dataset(target.dataset)
                    cols = ds.column_names() if ds is not None else []
                    targets = [ColumnRef(dataset=target.dataset, column=c) for c in cols] or [target]
                edge: dict[str, Any] = {
                    "sources": [vid(s) for s in dict.fromkeys(sources)],
                    "targets": [vid(t) for t in targets],
                    "edgeType": "PROJECTION"
                    if kind in ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
                    else "PREDICATE",
                }
                if expression is not None:
                    edge["expression"] = expression
                edges.append(edge)
        doc: dict[str, Any] = {"version": "1.0", "edges": edges}
        if "queryText" in proc.attributes:
            doc["queryText"] = proc.attributes["queryText"]
        doc["vertices"] = [
            {
                "id": i,
                "vertexType": "COLUMN" if col is not None else "TABLE",
                "vertexId": ds if col is None else f"{ds}.{col}",
            }
            for (ds, col), i in vertices.items()
        ]
        docs.append(doc)
    return docs
