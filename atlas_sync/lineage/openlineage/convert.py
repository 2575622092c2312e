"""OpenLineage events -> :class:`LineageGraph`.

One ``Process(kind="job")`` per OpenLineage job (``<namespace>/<name>``), never one per run: every run
of a job updates the same process. The latest event of a job (by ``eventTime``, then input order)
supplies the process attributes (``eventType``, ``runId``, ``eventTime``, ``sql``); the inputs,
outputs, columns and column edges of all the job's selected events are merged.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from atlas_sync.lineage.model import Column, ColumnEdge, ColumnRef, Dataset, LineageGraph, Process
from atlas_sync.lineage.openlineage.naming import Identity, NamespaceMap, load_namespace_map
from atlas_sync.lineage.openlineage.parse import RawEvent
from atlas_sync.lineage.openlineage.schema import drop_bad_facets, validate_event

EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER")
_DIRECT = {"IDENTITY", "TRANSFORMATION", "AGGREGATION"}
_INDIRECT = {"JOIN", "FILTER", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL"}

# Anything that can be turned into a namespace map.
NamespaceMapLike = NamespaceMap | Mapping[str, Any] | str | Path | None


@dataclass(frozen=True)
class EventSource:
    """Where an event came from, for problems (file and line, or an endpoint request)."""

    file: str | None = None
    line: int | None = None


def job_key(namespace: str, name: str) -> str:
    """The job scope of an OpenLineage job: ``<namespace>/<name>``.

    ``@`` separates the domain in qualified names, so it becomes ``_`` here.
    """
    return f"{namespace}/{name}".replace("@", "_")


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return None
    # naive times cannot be compared with aware ones; the spec means UTC
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def dependency_kind(transformation: Mapping[str, Any] | None, field_type: str | None) -> tuple[str, bool]:
    """Map an OpenLineage transformation to a dependency kind; the flag says the mapping was a guess."""
    if transformation is None:
        # Column lineage facet 1-0/1-1: only transformationType IDENTITY|MASKED on the field.
        if (field_type or "").upper() == "IDENTITY":
            return "IDENTITY", False
        return "TRANSFORMATION", field_type is not None and field_type.upper() != "MASKED"
    ttype = str(transformation.get("type") or "").upper()
    sub = str(transformation.get("subtype") or "").upper()
    if ttype == "INDIRECT":
        if sub in _INDIRECT:
            return sub, False
        return "FILTER", True
    if sub in _DIRECT:
        return sub, False
    return ("TRANSFORMATION", bool(sub) or ttype != "DIRECT")


class _Builder:
    def __init__(self, nsmap: NamespaceMap, prefer_symlinks: bool) -> None:
        self.graph = LineageGraph(source="openlineage")
        self.nsmap = nsmap
        self.prefer_symlinks = prefer_symlinks
        self.alias: dict[tuple[str, str], Identity] = {}
        self.latest: dict[str, tuple[datetime | None, int]] = {}

    # ------------------------------------------------------------------ datasets
    def register_symlinks(self, ds: Mapping[str, Any]) -> None:
        """Let a dataset's physical name resolve to its TABLE symlink everywhere in the input."""
        if not self.prefer_symlinks:
            return
        facets = ds.get("facets") or {}
        idents = ((facets.get("symlinks") or {}).get("identifiers")) or []
        tables = [i for i in idents if str(i.get("type", "TABLE")).upper() == "TABLE"]
        if tables:
            t = tables[0]
            self.alias[(ds["namespace"], ds["name"])] = self.nsmap.identity(t["namespace"], t["name"])

    def identity(self, namespace: str, name: str) -> Identity:
        return self.alias.get((namespace, name)) or self.nsmap.identity(namespace, name)

    def dataset(self, ds: Mapping[str, Any]) -> Dataset:
        ident = self.identity(ds["namespace"], ds["name"])
        facets: dict[str, Any] = {"openlineage": {"namespace": ds["namespace"], "name": ds["name"]}}
        physical = self.nsmap.identity(ds["namespace"], ds["name"])
        if physical.id != ident.id:
            facets["location"] = physical.id
        schema = (ds.get("facets") or {}).get("schema") or {}
        columns = [
            {"name": n, **({"type": t} if t else {}), **({"description": d} if d else {})}
            for n, t, d in _flatten(schema.get("fields") or [])
        ]
        given = ds.get("facets") or {}
        field_tags: dict[str, list[str]] = {}
        tags: list[str] = []
        for t in (given.get("tags") or {}).get("tags") or []:
            name = tag_name(t)
            if name is None:
                continue
            where = field_tags.setdefault(t["field"], []) if t.get("field") else tags
            if name not in where:
                where.append(name)
        for c in columns:
            if c["name"] in field_tags:
                c["tags"] = field_tags.pop(c["name"])
        columns.extend({"name": n, "tags": t} for n, t in field_tags.items())  # tagged, not in the schema
        return self.graph.add_dataset(
            Dataset.model_validate(
                {
                    "id": ident.id,
                    "namespace": ident.namespace,
                    "name": ident.name,
                    "kind": ident.kind,
                    "columns": columns,
                    "facets": facets,
                    "description": _documentation(given),
                    "owners": _owners(given),
                    "tags": tags,
                }
            )
        )

    def ensure_column(self, dataset_id: str, column: str) -> None:
        d = self.graph.dataset(dataset_id)
        if d is not None and column and not d.has_column(column):
            d.columns.append(Column(name=column))

    # ------------------------------------------------------------------ events
    def add(self, raw: RawEvent, order: int) -> None:
        ev = raw.event
        if "job" not in ev:  # DatasetEvent: a dataset (and its schema), no process
            self.register_symlinks(ev["dataset"])
            self.dataset(ev["dataset"])
            return
        job = ev["job"]
        key = job_key(job["namespace"], job["name"])
        for ds in (*(ev.get("inputs") or []), *(ev.get("outputs") or [])):
            self.register_symlinks(ds)
        proc = self.graph.process(key)
        if proc is None:
            proc = self.graph.add_process(
                Process(id=key, name=job["name"], kind="job", attributes={"namespace": job["namespace"]})
            )
        stamp = (_time(ev.get("eventTime")), order)
        prev = self.latest.get(key)
        if prev is None or _later(stamp, prev):
            self.latest[key] = stamp
            self._attributes(proc, ev)
        for ds in ev.get("inputs") or []:
            d = self.dataset(ds)
            if d.id not in proc.inputs:
                proc.inputs.append(d.id)
        for ds in ev.get("outputs") or []:
            d = self.dataset(ds)
            if d.id not in proc.outputs:
                proc.outputs.append(d.id)
        for ds in (*(ev.get("inputs") or []), *(ev.get("outputs") or [])):
            lineage = (ds.get("facets") or {}).get("columnLineage")
            if lineage:
                self._column_lineage(proc, self.identity(ds["namespace"], ds["name"]).id, lineage, raw)

    def _attributes(self, proc: Process, ev: Mapping[str, Any]) -> None:
        attrs = proc.attributes
        attrs["eventType"] = ev.get("eventType")
        if "run" in ev:
            attrs["runId"] = ev["run"]["runId"]
        else:
            attrs.pop("runId", None)
        if ev.get("eventTime") is not None:
            attrs["eventTime"] = ev["eventTime"]
        if ev.get("producer"):
            attrs["producer"] = ev["producer"]
        jf = ev["job"].get("facets") or {}
        sql = (jf.get("sql") or {}).get("query")
        if sql:
            attrs["sql"] = sql
        doc = _documentation(jf)
        if doc:
            attrs["description"] = doc
            proc.description = doc
        owners = _owners(jf)
        if owners:
            proc.owners = owners
        tags = [n for n in map(tag_name, (jf.get("tags") or {}).get("tags") or []) if n]
        if tags:
            proc.tags = list(dict.fromkeys(tags))
        jt = jf.get("jobType") or {}
        for k in ("processingType", "integration", "jobType"):
            if isinstance(jt.get(k), str):
                attrs[k] = jt[k]

    def _column_lineage(self, proc: Process, target: str, facet: Mapping[str, Any], raw: RawEvent) -> None:
        guessed: set[str] = set()

        def sources(input_fields: Iterable[Mapping[str, Any]]) -> Iterable[tuple[str, str, str, str | None]]:
            for f in input_fields:
                sid = self.identity(f["namespace"], f["name"]).id
                if self.graph.dataset(sid) is None:
                    self.dataset({"namespace": f["namespace"], "name": f["name"]})
                if sid not in proc.inputs and sid != target:
                    proc.inputs.append(sid)
                self.ensure_column(sid, f["field"])
                for t in f.get("transformations") or [None]:
                    kind, guess = dependency_kind(t, None if t else field_type)
                    if guess:
                        guessed.add(str((t or {}).get("subtype") or (t or {}).get("type") or field_type))
                    desc = (t or {}).get("description") or field_desc
                    yield sid, f["field"], kind, desc

        for out_col, spec in (facet.get("fields") or {}).items():
            field_type = spec.get("transformationType")
            field_desc = spec.get("transformationDescription")
            self.ensure_column(target, out_col)
            for sid, col, kind, desc in sources(spec.get("inputFields") or []):
                self.graph.add_edge(
                    ColumnEdge(
                        source=ColumnRef(dataset=sid, column=col),
                        target=ColumnRef(dataset=target, column=out_col),
                        kind=kind,  # type: ignore[arg-type]
                        expression=desc or None,
                        process=proc.id,
                    )
                )
        field_type, field_desc = None, None
        for sid, col, kind, desc in sources(facet.get("dataset") or []):
            self.graph.add_edge(
                ColumnEdge(
                    source=ColumnRef(dataset=sid, column=col),
                    target=ColumnRef(dataset=target, column=None),
                    kind=kind,  # type: ignore[arg-type]
                    expression=desc or None,
                    process=proc.id,
                )
            )
        for g in sorted(guessed):
            self.graph.problem(
                f"column lineage of {target}: transformation {g!r} is not in the OpenLineage spec; "
                "recorded as TRANSFORMATION (direct) or FILTER (indirect)",
                code="openlineage-unknown-transformation",
                file=raw.file,
                line=raw.line,
            )


def tag_name(tag: Mapping[str, Any]) -> str | None:
    """An OpenLineage tag (``key``, ``value``) as one tag name: the key alone when the value only says
    it holds (``pii: true``), else ``key:value`` (``environment:production``)."""
    key, value = tag.get("key"), tag.get("value")
    if not isinstance(key, str) or not key:
        return None
    if not isinstance(value, str) or value.strip().lower() in ("", "true", "yes"):
        return key
    return f"{key}:{value}"


def _documentation(facets: Mapping[str, Any]) -> str | None:
    doc = (facets.get("documentation") or {}).get("description")
    return doc if isinstance(doc, str) and doc.strip() else None


def _owners(facets: Mapping[str, Any]) -> list[str]:
    owners = (facets.get("ownership") or {}).get("owners") or []
    return list(dict.fromkeys(o["name"] for o in owners if isinstance(o.get("name"), str) and o["name"]))


def _later(a: tuple[datetime | None, int], b: tuple[datetime | None, int]) -> bool:
    if a[0] is not None and b[0] is not None and a[0] != b[0]:
        return a[0] > b[0]
    return a[1] > b[1]


def _flatten(fields: Iterable[Mapping[str, Any]], prefix: str = "") -> Iterable[tuple[str, Any, Any]]:
    for f in fields:
        name = prefix + str(f["name"])
        yield name, f.get("type"), f.get("description")
        if f.get("fields"):
            yield from _flatten(f["fields"], name + ".")


def events_to_graph(
    events: Iterable[RawEvent | Mapping[str, Any]],
    *,
    namespace_map: NamespaceMapLike = None,
    event_types: Collection[str] | None = None,
    prefer_symlinks: bool = True,
    validate: bool = True,
    strict: bool = False,
    lenient_events: bool = False,
) -> LineageGraph:
    """Build the lineage graph the given events state.

    ``event_types`` keeps only events of those types (``None`` = all; sync passes ``{"COMPLETE"}``);
    JobEvents and DatasetEvents carry no type and are always kept. ``validate`` checks each event's
    core against the spec subset in :mod:`.schema` and raises :class:`InputError` on the first bad
    one. A facet that breaks its schema is dropped with a warning (``openlineage-bad-facet``) naming
    its JSON path and the rule, also when ``validate`` is off (the endpoint validated the core before
    queueing); ``strict`` instead rejects the whole event for it, as an :class:`InputError`.
    ``lenient_events`` accepts events without ``eventTime`` and ``runId``s that are not UUIDs.
    """
    nsmap = (
        load_namespace_map(namespace_map) if not isinstance(namespace_map, NamespaceMap) else namespace_map
    )
    wanted = {t.upper() for t in event_types} if event_types is not None else None
    b = _Builder(nsmap, prefer_symlinks)
    skipped: dict[str, int] = {}
    for order, item in enumerate(events):
        raw = item if isinstance(item, RawEvent) else RawEvent(item, None, None, "$")
        if validate or strict:
            validate_event(
                raw.event,
                file=raw.file,
                line=raw.line,
                path=raw.path,
                strict=strict,
                lenient_events=lenient_events,
            )
        et = raw.event.get("eventType")
        if wanted is not None and "run" in raw.event and str(et).upper() not in wanted:
            skipped[str(et)] = skipped.get(str(et), 0) + 1
            continue
        # strict validation already rejected any bad facet
        event, issues = (raw.event, []) if strict and validate else drop_bad_facets(raw.event, raw.path)
        for issue in issues:
            b.graph.problem(
                f"{issue}; the event's datasets and other facets are kept",
                code="openlineage-bad-facet",
                file=raw.file,
                line=raw.line,
            )
        if event is not raw.event:
            raw = RawEvent(event, raw.file, raw.line, raw.path)
        b.add(raw, order)
    g = b.graph
    # Each job is a process named by its namespace and name, whatever else the input holds; a sync
    # without a job publishes each under its own job scope (model.split_process_jobs).
    g.process_jobs = True
    g.add_edge_inputs()  # a column's source dataset the event does not list is an input all the same
    if len(g.processes) == 1:
        g.job = g.processes[0].id
    if skipped:
        g.problem(
            "skipped events by type: " + ", ".join(f"{k} x{v}" for k, v in sorted(skipped.items())),
            code="openlineage-skipped-events",
        )
    return g
