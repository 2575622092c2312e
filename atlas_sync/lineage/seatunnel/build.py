"""Steps -> LineageGraph: follow each sink's fields back to source tables through the transforms.

Every step yields a *relation*: its ordered fields, each with the source columns it comes from (and
the dependency kind), the source tables feeding it, and dataset-wide indirect dependencies (a Sql
WHERE/JOIN). When a step's fields cannot be known (a source without a field list, an unsupported
transform) the relation keeps only its tables, and the sinks it reaches get table-level lineage
plus a problem that says why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from atlas_sync.errors import InputError
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
from atlas_sync.lineage.seatunnel import sqlflow
from atlas_sync.lineage.seatunnel.connectors import (
    DEFAULT_TABLE,
    NONE,
    Naming,
    identifier,
    join_names,
    substitute,
)
from atlas_sync.lineage.seatunnel.steps import (
    OPAQUE,
    SINK,
    SOURCE,
    Step,
    TableRef,
    connection_from_options,
    dialect_of,
    insert_target,
    no_schemas,
    registry_tables,
)

# (dataset id, column, kind, expression)
Source = tuple[str, str, str, str | None]
_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}
SUPPORTED_TRANSFORMS = (
    "Sql",
    "Filter",
    "FieldRemover",
    "FieldRename",
    "FieldRenamer",
    "FieldMapper",
    "Copy",
    "TableRename",
    "TableRenamer",
    "Replace",
    "Split",
    "JsonPath",
    "FilterRowKind",
    "TableFilter",
)


def compose(outer: str, inner: str) -> str:
    """Kind of a path: indirect wins; otherwise the strongest direct kind."""
    if outer not in _RANK:
        return outer
    if inner not in _RANK:
        return inner
    return outer if _RANK[outer] >= _RANK[inner] else inner


@dataclass
class Field:
    name: str
    sources: list[Source] = field(default_factory=list)
    type: str | None = None


@dataclass
class Relation:
    fields: list[Field] | None  # None = unknown
    tables: list[str] = field(default_factory=list)  # dataset ids feeding this relation
    indirect: list[tuple[str, str, str]] = field(default_factory=list)  # dataset-wide (ds, col, kind)
    reasons: list[str] = field(default_factory=list)  # why fields are unknown
    # Upstream tables as SeaTunnel names them (for a sink's ${table_name}), each with the datasets
    # feeding it: a multi-table sink writes each to its own table.
    names: list[tuple[list[str], list[str]]] = field(default_factory=list)

    def get(self, name: str) -> Field | None:
        if self.fields is None:
            return None
        for f in self.fields:
            if f.name == name:
                return f
        low = name.lower()
        return next((f for f in self.fields if f.name.lower() == low), None)

    def lookup(self, name: str) -> list[Source] | None:
        """Sources of field ``name``; for an unknown relation over one table, that table's column."""
        f = self.get(name)
        if f is not None:
            return f.sources
        if self.fields is None and len(self.tables) == 1:
            return [(self.tables[0], name, "IDENTITY", None)]
        return None

    def copy(self, fields: list[Field] | None = None) -> Relation:
        return Relation(
            fields=fields if fields is not None else _copy_fields(self.fields),
            tables=list(self.tables),
            indirect=list(self.indirect),
            reasons=list(self.reasons),
            names=[(list(n), list(ds)) for n, ds in self.names],
        )


def _copy_fields(fields: list[Field] | None) -> list[Field] | None:
    if fields is None:
        return None
    return [Field(f.name, list(f.sources), f.type) for f in fields]


class Builder:
    """Build the graph of one job from its steps."""

    def __init__(
        self,
        graph: LineageGraph,
        steps: list[Step],
        *,
        job: str,
        file: str | None,
        connection_map: Mapping[str, str],
        default_schema: str | None,
        dialect: str | None,
    ) -> None:
        self.graph = graph
        self.steps = {s.id: s for s in steps}
        self.order = steps
        self.job = job
        self.file = file
        self.connection_map = connection_map
        self.default_schema = default_schema
        self.dialect = dialect
        self.memo: dict[str, Relation] = {}
        self.stack: list[str] = []

    # ------------------------------------------------------------------------ datasets
    def dataset_for(self, ref: TableRef, step: Step, role: str, fields: list[Field] | None) -> str:
        if ref.kind == "table" and len(ref.parts) == 1:
            schema = self.default_schema or "default"
            ref.parts = [schema, ref.parts[0]]
            ref.default_schema = schema
            self.graph.problem(
                f"{step.id}: table {ref.parts[-1]!r} has no schema; using the default schema {schema!r}",
                code="seatunnel-default-schema",
                file=self.file,
            )
        ds_id = ref.dataset_id(self.connection_map)
        parts = split_dotted(ds_id)
        facets: dict[str, Any] = {
            "connection": ref.connection,
            "table": ref.parts[-1],
            "plugin": step.plugin,
            f"{role}_table": True,
        }
        if ref.kind == "table" and len(ref.parts) > 1:
            facets["schema"] = ref.parts[-2]
        if ref.default_schema:
            facets["default_schema"] = True
        if ref.kind == "file":
            parent, _, leaf = ds_id.rstrip("/").rpartition("/")
            namespace, name = parent, leaf or ds_id
        elif ref.kind in OPAQUE:
            namespace = ref.connection_prefix(self.connection_map) or ref.connection or ""
            name = ".".join(ref.parts)
        else:
            namespace, name = dotted(*parts[:-1]), parts[-1]
        cols = [{"name": f.name, **({"type": f.type} if f.type else {})} for f in fields or []]
        existing = self.graph.dataset(ds_id)
        d = self.graph.add_dataset(
            Dataset.model_validate(
                {
                    "id": ds_id,
                    "namespace": namespace,
                    "name": name,
                    "kind": ref.kind,
                    "columns": cols,
                    "facets": {k: v for k, v in facets.items() if v is not None},
                }
            )
        )
        if existing is not None:
            d.facets[f"{role}_table"] = True
        return ds_id

    # ------------------------------------------------------------------------ relations
    def relation(self, step_id: str) -> Relation:
        if step_id in self.memo:
            return self.memo[step_id]
        if step_id in self.stack:
            raise InputError(
                f"the job's steps form a cycle: {' -> '.join([*self.stack, step_id])}", file=self.file
            )
        self.stack.append(step_id)
        step = self.steps[step_id]
        rel = self.source(step) if step.kind == SOURCE else self.transform(step)
        self.stack.pop()
        self.memo[step_id] = rel
        return rel

    def upstream(self, step: Step) -> Relation:
        rels = [self.relation(i) for i in step.inputs]
        if not rels:
            return Relation(fields=None, reasons=[f"{step.id} has no input"])
        if len(rels) == 1:
            return rels[0].copy()
        # Several inputs to one plugin (a multi-table sink): tables add up, fields do not line up.
        out = Relation(fields=None)
        for r in rels:
            out.tables += [t for t in r.tables if t not in out.tables]
            out.indirect += r.indirect
            out.names += r.names
        out.reasons.append(f"{step.id} reads {len(rels)} inputs; fields cannot be lined up")
        return out

    def source(self, step: Step) -> Relation:
        for code, message in step.problems:
            self.graph.problem(message, code=code, file=self.file)
        fields = [Field(n, [], step.field_types.get(n)) for n in step.fields] if step.fields else None
        if step.naming is not None and step.naming.kind == NONE:
            # A test data generator: its declared fields flow on, but they come from no dataset.
            self.graph.problem(
                f"{step.id} ({step.plugin}): {step.naming.note}",
                code="seatunnel-test-connector",
                file=self.file,
            )
            return Relation(
                fields=fields,
                names=[(n, []) for n in step.identities],
                reasons=[] if fields is not None else [f"{step.id} ({step.plugin}) declares no fields"],
            )
        if step.query:
            return self.source_query(step)
        if not step.tables:
            rel = Relation(fields=None, reasons=[f"{step.id} ({step.plugin}) names no table"])
            if not step.problems:
                self.graph.problem(
                    f"{step.id} ({step.plugin}): no table, path or topic found in its options",
                    code="seatunnel-no-table",
                    file=self.file,
                )
            return rel
        ids = [self.dataset_for(t, step, "input", fields) for t in step.tables]
        names = self._source_names(step, ids)
        if fields is not None and len(ids) == 1:
            for f in fields:
                f.sources = [(ids[0], f.name, "IDENTITY", None)]
            return Relation(fields=fields, tables=ids, names=names)
        reason = (
            f"{step.id} ({step.plugin}) reads {len(ids)} tables"
            if len(ids) > 1
            else f"{step.id} ({step.plugin}) declares no field list"
        )
        return Relation(fields=None, tables=ids, reasons=[reason], names=names)

    def _source_names(self, step: Step, ids: list[str]) -> list[tuple[list[str], list[str]]]:
        """How SeaTunnel names each table a source reads: ``schema.table`` when declared, the
        table's own name for tables, else its default table path."""
        if step.identities and len(ids) == 1:
            return [(step.identities[0], ids)]
        out: list[tuple[list[str], list[str]]] = []
        for ref, ds in zip(step.tables, ids, strict=True):
            parts = [p for p in ref.parts if p] if ref.kind not in ("file", *OPAQUE) else []
            parts = ref.declared or parts or list(DEFAULT_TABLE)
            if ref.default_schema and not ref.declared:
                parts = parts[1:]  # the agreed default schema is ours, not SeaTunnel's
            out.append((parts, [ds]))
        return out

    def source_query(self, step: Step) -> Relation:
        assert step.query is not None
        dialect = self.dialect or dialect_of(step.plugin, step.options)
        sql = sqlflow.analyze(step.query, dialect=dialect)
        for p in sql.problems:
            self.graph.problem(f"{step.id}: {p}", code="seatunnel-sql", file=self.file)
        base = step.tables[0] if step.tables else TableRef(parts=[*step.query_scope, "?"])
        conn, named, _db = connection_from_options(step.plugin, step.options)
        if not step.tables:
            base.connection, base.named_connection = conn, named
        ids: dict[str, str] = {}
        names: list[tuple[list[str], list[str]]] = []
        for name in sql.tables:
            parts = split_dotted(name)
            if len(parts) == 1 and len(base.parts) > 1:
                parts = [*base.parts[:-1], *parts]
            elif len(parts) == 2 and step.query_schemas and not step.tables and len(base.parts) == 2:
                parts = join_names(base.parts[:-1], parts)  # schema.table in the URL's database
            ref = TableRef(parts=parts, connection=base.connection, named_connection=base.named_connection)
            ids[name.lower()] = self.dataset_for(ref, step, "input", None)
            names.append((ref.parts, [ids[name.lower()]]))
        tables = list(dict.fromkeys(ids.values()))
        if names:
            names = [(step.identities[0] if step.identities else names[0][0], tables)]

        def resolve(table: str) -> str | None:
            if table.lower() in ids:
                return ids[table.lower()]
            return tables[0] if len(tables) == 1 else None

        if sql.fields is None or sql.star:
            return Relation(
                fields=None,
                tables=tables,
                reasons=[f"{step.id}: the fields of its query cannot be resolved"],
                names=names,
            )
        fields: list[Field] = []
        for f in sql.fields:
            srcs: list[Source] = []
            for table, col, kind, expr in f.sources:
                ds = resolve(table)
                if ds is not None:
                    srcs.append((ds, col, kind, expr))
                    self._ensure_column(ds, col)
            fields.append(Field(f.name, srcs))
        indirect = [(ds, c, k) for t, c, k in sql.indirect if (ds := resolve(t)) is not None]
        for ds, c, _ in indirect:
            self._ensure_column(ds, c)
        return Relation(fields=fields, tables=tables, indirect=indirect, names=names)

    def _ensure_column(self, ds_id: str, col: str) -> None:
        d = self.graph.dataset(ds_id)
        if d is not None and not d.has_column(col):
            d.columns.append(Column(name=col))

    def transform(self, step: Step) -> Relation:
        rel = self.upstream(step)
        name = step.plugin
        o = step.options
        if name == "Sql":
            return self.sql(step)
        if name in ("TableRename", "TableRenamer"):
            rel.names = [([*n[:-1], _rename(n[-1], o)] if n else n, ds) for n, ds in rel.names]
            return rel
        if name in ("FilterRowKind", "TableFilter"):
            return rel
        if rel.fields is None and name in SUPPORTED_TRANSFORMS:
            return rel
        if name == "Filter" or name == "FieldRemover":
            include = o.get("include_fields")
            exclude = o.get("exclude_fields")
            if include is None and exclude is None:
                # Filter's old `fields` keeps; FieldRemover's `fields`/`remove_fields` remove.
                if name == "Filter":
                    include = o.get("fields")
                else:
                    exclude = o.get("remove_fields", o.get("fields"))
            assert rel.fields is not None
            if include is not None:
                rel.fields = [f for n in _strs(include) if (f := rel.get(n)) is not None]
                self._missing(step, include, rel)
            else:
                drop = {n.lower() for n in _strs(exclude)}
                rel.fields = [f for f in rel.fields if f.name.lower() not in drop]
            return rel
        if name in ("FieldRename", "FieldRenamer"):
            assert rel.fields is not None
            for f in rel.fields:
                f.name = _rename(f.name, o, specific=True)
            return rel
        if name == "FieldMapper":
            mapping = o.get("field_mapper") or {}
            out: list[Field] = []
            for src, dst in mapping.items():
                f = rel.get(str(src))
                if f is not None:
                    out.append(Field(str(dst), list(f.sources), f.type))
            self._missing(step, list(mapping), rel)
            rel.fields = out
            return rel
        if name == "Copy":
            assert rel.fields is not None
            pairs: list[tuple[str, str]] = []
            if isinstance(o.get("fields"), Mapping):
                pairs = [(str(v), str(k)) for k, v in o["fields"].items()]
            elif o.get("src_field") and o.get("dest_field"):
                pairs = [(str(o["src_field"]), str(o["dest_field"]))]
            for src, dst in pairs:
                f = rel.get(src)
                if f is not None:
                    rel.fields.append(Field(dst, list(f.sources), f.type))
            self._missing(step, [p[0] for p in pairs], rel)
            return rel
        if name == "Replace":
            assert rel.fields is not None
            f = rel.get(str(o.get("replace_field", "")))
            if f is not None:
                f.sources = [(d, c, compose("TRANSFORMATION", k), e) for d, c, k, e in f.sources]
            return rel
        if name == "Split":
            assert rel.fields is not None
            f = rel.get(str(o.get("split_field", "")))
            srcs = [(d, c, compose("TRANSFORMATION", k), e) for d, c, k, e in (f.sources if f else [])]
            for n in _strs(o.get("output_fields")):
                rel.fields.append(Field(n, list(srcs)))
            return rel
        if name == "JsonPath":
            assert rel.fields is not None
            for c in o.get("columns") or []:
                if isinstance(c, Mapping) and c.get("src_field") and c.get("dest_field"):
                    f = rel.get(str(c["src_field"]))
                    srcs = [
                        (d, x, compose("TRANSFORMATION", k), e) for d, x, k, e in (f.sources if f else [])
                    ]
                    existing = rel.get(str(c["dest_field"]))
                    if existing is not None:
                        existing.sources = srcs
                    else:
                        rel.fields.append(Field(str(c["dest_field"]), srcs))
            return rel
        # Unsupported transform: keep table lineage, lose field lineage, and say so.
        self.graph.problem(
            f"{step.id}: transform {name!r} is not supported; lineage after it is table-level only "
            f"(supported: {', '.join(SUPPORTED_TRANSFORMS)})",
            code="seatunnel-unsupported-transform",
            file=self.file,
        )
        rel.fields = None
        rel.reasons.append(f"{step.id}: transform {name!r} is not supported")
        return rel

    def _missing(self, step: Step, names: Any, rel: Relation) -> None:
        for n in _strs(names):
            if rel.fields is not None and rel.get(n) is None and not any(f.name == n for f in rel.fields):
                self.graph.problem(
                    f"{step.id} ({step.plugin}): field {n!r} is not among its input fields",
                    code="seatunnel-unknown-field",
                    file=self.file,
                )

    def sql(self, step: Step) -> Relation:
        inputs = {i: self.relation(i) for i in step.inputs}
        query = step.query or ""
        schema: dict[str, list[str]] = {}
        for sid, r in inputs.items():
            name = self.steps[sid].output_name or sid
            if r.fields is not None:
                schema[name] = [f.name for f in r.fields]
        sql = sqlflow.analyze(query, dialect=self.dialect, schema=schema or None)
        for p in sql.problems:
            self.graph.problem(f"{step.id}: {p}", code="seatunnel-sql", file=self.file)
        out = Relation(fields=None)
        for r in inputs.values():
            out.tables += [t for t in r.tables if t not in out.tables]
            out.indirect += r.indirect
            out.names += r.names
        # The query names its input by the upstream plugin_output (SeaTunnel), or anything when
        # there is only one input.
        by_name: dict[str, Relation] = {}
        for sid, r in inputs.items():
            s = self.steps[sid]
            for key in (s.output_name, sid):
                if key:
                    by_name[key.lower()] = r

        def rel_of(table: str) -> Relation | None:
            t = split_dotted(table)[-1].lower() if table else ""
            if t in by_name:
                return by_name[t]
            return next(iter(inputs.values())) if len(inputs) == 1 else None

        if sql.fields is None:
            out.reasons.append(f"{step.id}: its query could not be analysed")
            return out
        fields: list[Field] = []
        if sql.star:
            star = rel_of(sql.tables[0] if sql.tables else "")
            if star is None or star.fields is None:
                out.reasons.append(f"{step.id}: SELECT * over an input whose fields are unknown")
                return out
            fields.extend(_copy_fields(star.fields) or [])
        for f in sql.fields:
            srcs: list[Source] = []
            for table, col, kind, expr in f.sources:
                src_rel = rel_of(table)
                up = src_rel.lookup(col) if src_rel is not None else None
                if up is None:
                    self.graph.problem(
                        f"{step.id}: {dotted(table, col) if table else col} is not an input field",
                        code="seatunnel-unknown-field",
                        file=self.file,
                    )
                    continue
                srcs += [(d, c, compose(kind, k), expr or e) for d, c, k, e in up]
            fields = [x for x in fields if x.name != f.name] + [Field(f.name, srcs)]
        for table, col, kind in sql.indirect:
            src_rel = rel_of(table)
            up = src_rel.lookup(col) if src_rel is not None else None
            for d, c, _k, _e in up or []:
                out.indirect.append((d, c, kind))
        out.fields = fields
        return out

    # ------------------------------------------------------------------------ sinks
    def build(self) -> None:
        sinks = [s for s in self.order if s.kind == SINK]
        if not sinks:
            raise InputError("the job has no sink", file=self.file, hint="a job needs at least one sink")
        for step in self.order:
            if step.kind == SOURCE:
                self.relation(step.id)
        planned = [(sink, self.upstream(sink)) for sink in sinks]
        targets = [(sink, rel, self.sink_targets(sink, rel)) for sink, rel in planned]
        writing = sum(1 for _s, _r, t in targets if t)
        for sink, rel, t in targets:
            if t:
                self.sink(sink, rel, t, single=writing == 1)

    def sink_targets(self, step: Step, rel: Relation) -> list[tuple[TableRef, list[str]]]:
        """The tables a sink writes, each with the datasets feeding it. Options holding table
        placeholders are resolved per upstream table (a multi-table sink writes one table each)."""
        for code, message in step.problems:
            self.graph.problem(message, code=code, file=self.file)
        naming = step.naming
        if naming is not None and naming.kind == NONE:
            self.graph.problem(
                f"{step.id} ({step.plugin}): {naming.note}", code="seatunnel-test-connector", file=self.file
            )
            return []
        upstream = rel.names or [([], list(rel.tables))]
        out: dict[str, tuple[TableRef, list[str]]] = {}
        problems: list[str] = []
        for name, feeding in upstream:
            ident = identifier(name) if name else {}
            if naming is None:
                refs = [_placeholders(r, name) if name else r for r in step.tables]
            else:
                refs, found = self._registry_sink(step, naming, ident)
                problems += [p for p in found if p not in problems]
            for ref in refs:
                key = f"{ref.kind}:{'.'.join(ref.parts)}"
                ref_, srcs = out.setdefault(key, (ref, []))
                srcs += [d for d in feeding if d not in srcs]
        for p in problems:
            self.graph.problem(f"{step.id} ({step.plugin}): {p}", code="seatunnel-no-table", file=self.file)
        if not out and not problems:
            self.graph.problem(
                f"{step.id} ({step.plugin}): no table, path or topic found in its options",
                code="seatunnel-no-table",
                file=self.file,
            )
        return list(out.values())

    def _registry_sink(
        self, step: Step, naming: Naming, ident: Mapping[str, str | None]
    ) -> tuple[list[TableRef], list[str]]:
        opts = substitute(step.options, ident) if ident else step.options
        if ident:
            naming = replace(naming, defaults=substitute(dict(naming.defaults), ident))
        refs, problems = registry_tables(step.plugin, naming, opts)
        if not refs and naming.query and isinstance(opts.get(naming.query), str):
            parts, _cols = insert_target(opts[naming.query])
            if parts:
                conn, named, url_db = connection_from_options(step.plugin, opts)
                if url_db and (len(parts) == 1 or (len(parts) == 2 and not no_schemas(opts))):
                    parts = join_names([url_db], parts)
                refs = [TableRef(parts=parts, connection=conn, named_connection=named)]
        return refs, problems

    def sink(
        self, step: Step, rel: Relation, targets: list[tuple[TableRef, list[str]]], *, single: bool
    ) -> None:
        refs = [r for r, _ in targets]
        fields = rel.fields
        if fields is not None and step.fields:
            # The sink lists its columns: map by name (the sink's order wins).
            fields = [Field(n, list((rel.get(n) or Field(n)).sources)) for n in step.fields]
        ids = [self.dataset_for(r, step, "output", fields) for r in refs]
        # Named by what the sink writes, never by how many sinks the job has: a job that gains a
        # second sink keeps its first process's name.
        pid = base = f"{self.job}:{refs[0].label}"
        n = 1
        while self.graph.process(pid) is not None:
            n += 1
            pid = f"{base}:{n}"
        attrs: dict[str, Any] = {"plugin": step.plugin, "engine": self.graph.source or "seatunnel"}
        if fields is not None and refs[0].kind == "table" and len(refs) == 1:
            cols = ", ".join(dotted(f.name) for f in fields)
            marks = ", ".join("?" for _ in fields)
            attrs["sql"] = step.query or f"INSERT INTO {dotted(*refs[0].parts)} ({cols}) VALUES ({marks})"
        inputs = list(dict.fromkeys([*rel.tables, *(d for _r, srcs in targets for d in srcs)]))
        proc = self.graph.add_process(
            Process(
                id=pid,
                # the display name only (an update, not a rename, when the job gains a sink)
                name=self.job if single else f"{self.job} -> {refs[0].label}",
                kind="job",
                inputs=inputs
                if len(targets) == 1
                else [d for d in inputs if any(d in s for _r, s in targets)],
                outputs=ids,
                attributes=attrs,
            )
        )
        if fields is None or len(ids) > 1:
            why = "; ".join(rel.reasons) or "the fields are unknown"
            if len(ids) > 1:
                why = f"{step.id} writes {len(ids)} tables"
            for t, (_ref, srcs) in zip(ids, targets, strict=True):
                for src in srcs if len(ids) > 1 else rel.tables:
                    self.graph.add_edge(
                        ColumnEdge(
                            source=ColumnRef(dataset=src),
                            target=ColumnRef(dataset=t),
                            kind="IDENTITY",
                            process=proc.id,
                        )
                    )
            self.graph.problem(
                f"{step.id} ({step.plugin}): table-level lineage only: {why}",
                code="seatunnel-table-level",
                file=self.file,
            )
            return
        target = ids[0]
        for f in fields:
            for d, c, k, e in f.sources:
                self._ensure_column(d, c)
                self.graph.add_edge(
                    ColumnEdge(
                        source=ColumnRef(dataset=d, column=c),
                        target=ColumnRef(dataset=target, column=f.name),
                        kind=k,  # type: ignore[arg-type]
                        expression=e,
                        process=proc.id,
                    )
                )
        for d, c, k in rel.indirect:
            self._ensure_column(d, c)
            self.graph.add_edge(
                ColumnEdge(
                    source=ColumnRef(dataset=d, column=c),
                    target=ColumnRef(dataset=target),
                    kind=k,  # type: ignore[arg-type]
                    process=proc.id,
                )
            )


def _strs(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def _rename(name: str, o: Mapping[str, Any], *, specific: bool = False) -> str:
    """SeaTunnel FieldRename/TableRename: specific rules first, else case, prefix/suffix, regexes."""
    if specific:
        for rule in o.get("specific") or []:
            if isinstance(rule, Mapping) and rule.get("field_name") == name:
                return str(rule.get("target_name", name))
    out = name
    case = str(o.get("convert_case") or "").upper()
    if case == "UPPER":
        out = out.upper()
    elif case == "LOWER":
        out = out.lower()
    out = f"{o.get('prefix') or ''}{out}{o.get('suffix') or ''}"
    for rule in o.get("replacements_with_regex") or []:
        if not isinstance(rule, Mapping) or "replace_from" not in rule:
            continue
        frm, to = str(rule["replace_from"]), str(rule.get("replace_to", ""))
        if rule.get("is_regex", True) in (False, "false"):
            out = to if out == frm else out
        else:
            try:
                out = re.sub(frm, to, out)
            except re.error as exc:
                raise InputError(f"invalid replace_from regex {frm!r}: {exc}") from None
    return out


_PLACEHOLDER = re.compile(r"\$\{(database_name|schema_name|table_name|schema_full_name|table_full_name)\}")


def _placeholders(ref: TableRef, upstream: list[str]) -> TableRef:
    """Resolve a multi-table sink's ``${table_name}``-style placeholders from the upstream table."""
    values = {
        "table_name": upstream[-1],
        "schema_name": upstream[-2] if len(upstream) >= 2 else "",
        "database_name": upstream[0] if len(upstream) >= 2 else "",
        "table_full_name": ".".join(upstream),
        "schema_full_name": ".".join(upstream[:-1]),
    }
    parts: list[str] = []
    for p in ref.parts:
        if _PLACEHOLDER.search(p):
            parts.extend(x for x in _PLACEHOLDER.sub(lambda m: values[m.group(1)], p).split(".") if x)
        else:
            parts.append(p)
    return TableRef(
        parts=parts,
        kind=ref.kind,
        connection=ref.connection,
        named_connection=ref.named_connection,
        default_schema=ref.default_schema,
    )
