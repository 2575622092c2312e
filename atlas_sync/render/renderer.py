"""Render a LineageGraph into the desired Atlas entities of a profile.

Templates render data, not text: the renderer builds plain dicts, templates pick fields and pass
every value through ``tojson`` in a sandboxed environment, and the JSON they produce is parsed and
validated against the profile's typedefs before anything is sent.
"""

from __future__ import annotations

import json
from collections import ChainMap, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from atlas_sync.errors import AtlasSyncError
from atlas_sync.lineage.bi import BI_KINDS
from atlas_sync.lineage.model import (
    DIRECT_KINDS,
    ColumnEdge,
    LineageGraph,
    dataset_id_under,
    dataset_named_under,
    process_id_under,
    process_local_name,
)
from atlas_sync.render.metadata import entity_metadata
from atlas_sync.render.names import process_display_name
from atlas_sync.render.native import DOMAIN_HINT, Namespaces, NativeRender, valid_domain
from atlas_sync.render.profile import Profile
from atlas_sync.render.schema import check_value
from atlas_sync.render.slots import Filler, compile_slots

Key = tuple[str, str]  # (concrete typeName, qualifiedName)

_DIRECT_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}


class RenderError(AtlasSyncError):
    """A template failed or produced an entity the profile's typedefs reject."""


@dataclass
class DesiredEntity:
    """One entity as it should exist in Atlas.

    ``attributes`` are plain values; ``refs`` are reference attributes (a key or a list of keys),
    written under ``relationshipAttributes`` when named in ``rel_attrs``.
    """

    type_name: str
    qualified_name: str
    attributes: dict[str, Any]
    refs: dict[str, Key | list[Key] | None] = field(default_factory=dict)
    rel_attrs: set[str] = field(default_factory=set)
    create_only: dict[str, Any] = field(default_factory=dict)
    tier: int = 0
    origin: str = ""
    # native profiles: labels written when the entity is created (ownership), and whether it is a dataset
    # (or a dataset's container or column) that is referenced, not written, when it exists and is not ours
    labels: list[str] = field(default_factory=list)
    shared: bool = False
    # classifications, labels, terms and business attributes to attach (render.metadata), or None
    metadata: dict[str, Any] | None = None
    # what to attach instead when the entity is another tool's (a shared one found outside the domain):
    # what metadata rules with ``foreign = true`` add (lineage.rules)
    foreign_metadata: dict[str, Any] | None = None

    @property
    def key(self) -> Key:
        return (self.type_name, self.qualified_name)


@dataclass
class DesiredState:
    domain: str
    job: str
    entities: dict[Key, DesiredEntity] = field(default_factory=dict)
    # which dataset / (dataset, column) of the graph rendered to which key (for chunked rendering)
    dataset_keys: dict[str, Key] = field(default_factory=dict)
    column_keys: dict[tuple[str, str], Key] = field(default_factory=dict)
    # native profiles: ownership is the job's label (``atlas-sync-j_<job>``), the scope the domain's label
    owner_label: str | None = None

    @property
    def owner(self) -> str:
        """What marks this job's entities in Atlas: the job's label (native profiles), else the job name
        (``atlasSyncJob``)."""
        return self.owner_label or self.job

    def ordered(self) -> list[DesiredEntity]:
        """Entities in dependency order: everything an entity references comes before it."""
        return sorted(self.entities.values(), key=lambda e: (e.tier, e.type_name, e.qualified_name))

    def __len__(self) -> int:
        return len(self.entities)


# What ``getattr`` finds on a plain dict: its type's attributes (a dict has no instance attributes).
_DICT_ATTRIBUTES = frozenset(dir({}))


class _Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, with ``x.name`` on a plain dict (every context value the renderer
    builds) looked up as Jinja does, without raising and catching an AttributeError first: a name
    that is not a dict attribute is the item or undefined."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except (TypeError, LookupError):
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


def _env(profile: Profile) -> jinja2.Environment:
    env = _Sandbox(
        loader=jinja2.FileSystemLoader(str(profile.template_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        auto_reload=False,  # compiled once per profile: no stat of the file per entity
    )
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
    # The output is JSON parsed right away, never HTML: Jinja's tojson escapes <, >, & and ' for
    # HTML (\u003c ...), which parses back to the same values, at twice the cost. A JSON literal
    # cannot end the string or object it sits in, so plain json.dumps is as safe here.
    env.filters["tojson"] = _tojson
    schema = profile.schema

    def declared(type_name: str) -> list[str]:
        """Attribute names the type declares (own and inherited) and its relationship attributes."""
        return sorted(set(schema.attributes(type_name)) | schema.relationship_names(type_name))

    def with_declared(base: dict[str, Any], extra: dict[str, Any], type_name: str) -> dict[str, Any]:
        """``base`` plus the entries of ``extra`` that ``type_name`` declares (``base`` wins)."""
        names = set(declared(type_name))
        return {**{k: v for k, v in extra.items() if k in names}, **base}

    env.globals["declared"] = declared
    env.filters["with_declared"] = with_declared
    return env


_ENCODE = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode


def _tojson(value: Any) -> str:
    return _ENCODE(value)


@dataclass
class RenderedKeys:
    """Keys and tiers of datasets and columns rendered earlier (by another ``render`` call), which
    a chunk's processes and column lineage may reference without rendering them again."""

    datasets: dict[str, Key] = field(default_factory=dict)
    columns: dict[tuple[str, str], Key] = field(default_factory=dict)
    tiers: dict[Key, int] = field(default_factory=dict)


def _ref(key: Key) -> dict[str, Any]:
    return {"typeName": key[0], "uniqueAttributes": {"qualifiedName": key[1]}}


def _is_ref(v: Any) -> bool:
    return isinstance(v, dict) and "typeName" in v and isinstance(v.get("uniqueAttributes"), dict)


class _Renderer:
    def __init__(self, profile: Profile, domain: str, job: str) -> None:
        self.profile = profile
        self.domain = domain
        self.job = job
        self.env = profile.environment(_env)
        self.state = DesiredState(domain=domain, job=job)
        self.owner: dict[Key, str] = {}
        self.extra_context: dict[str, Any] = {}
        self.templates: dict[str, jinja2.Template] = {}
        self.fillers: dict[str, Filler | None] = {}
        # (typeName, attribute names and None-ness, relationship names and None-ness) -> checked
        self.shapes: set[tuple[Any, ...]] = set()
        # typeName -> its declared attributes and relationship attribute names (profile.schema)
        self.types: dict[str, tuple[dict[str, Any], set[str]]] = {}
        # what every qualifiedName ends with (None: a native profile's mapping names them)
        self.domain_suffix = "@" + domain if profile.mapping_file is None else None

    def render_one(self, kind: str, origin: str, context: dict[str, Any]) -> list[DesiredEntity]:
        name = self.profile.templates[kind]
        ctx = {**self.extra_context, **context} if self.extra_context else context
        ctx["domain"] = self.domain
        ctx["job"] = self.job
        doc: Any = None
        text: str | None = None
        try:
            if kind not in self.templates:
                self._compile(kind, name)
            filler = self.fillers[kind]
            if filler is not None:
                doc = filler(ctx)
            else:
                text = self.templates[kind].render(ctx)
        except jinja2.TemplateSyntaxError as exc:
            raise RenderError(
                f"template {exc.filename or name} line {exc.lineno}: {exc.message}",
                hint="fix the template syntax",
            ) from None
        except jinja2.exceptions.SecurityError as exc:
            raise RenderError(
                f"template {name} ({origin}): not allowed in a sandboxed template: {exc}"
            ) from None
        except (jinja2.UndefinedError, TypeError, ValueError) as exc:
            raise RenderError(f"template {name} ({origin}): {exc}") from None
        except jinja2.TemplateNotFound as exc:  # {% include %} / {% import %} outside the profile folder
            raise RenderError(
                f"template {name} ({origin}): no template {exc.name!r} in the profile folder"
            ) from None
        except (jinja2.TemplateError, OverflowError, RecursionError) as exc:
            raise RenderError(f"template {name} ({origin}): {type(exc).__name__}: {exc}") from None
        try:
            if text is not None:
                doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RenderError(
                f"template {name} ({origin}) produced invalid JSON at line {exc.lineno}: {exc.msg}",
                hint="pass every value through `| tojson`",
            ) from None
        if isinstance(doc, list) and doc:
            # a native profile's entity plus the containers it needs (hive_db of a hive_table, ...)
            return [self._to_entity(d, name, origin) for d in doc]
        if doc is None and kind in ("column", "column_lineage"):
            return []  # the type has no columns / no column lineage in the profile's model
        return [self._to_entity(doc, name, origin)]

    def render_main(self, kind: str, origin: str, context: dict[str, Any]) -> DesiredEntity | None:
        """Render and add one entity (and a native profile's containers, shared by every entity needing
        them); the entity itself, or ``None`` when the template renders nothing."""
        ents = self.render_one(kind, origin, context)
        if not ents:
            return None
        for extra in ents[1:]:
            self.add(extra, f"container {extra.type_name} {extra.qualified_name!r}", shared_ok=True)
        return self.add(ents[0], origin)

    def _compile(self, kind: str, name: str) -> None:
        """The template of ``kind``, and its value-slot form when it has one (see render.slots)."""
        template = self.env.get_template(name)
        cache: dict[str, Filler | None] = self.env.__dict__.setdefault("atlas_sync_fillers", {})
        if name not in cache:
            source = self.env.loader.get_source(self.env, name)[0] if self.env.loader else None
            cache[name] = compile_slots(self.env, source, _tojson) if source is not None else None
        self.fillers[kind] = cache[name]
        self.templates[kind] = template

    def _to_entity(self, doc: Any, template: str, origin: str) -> DesiredEntity:
        where = f"template {template} ({origin})"
        if not isinstance(doc, dict) or not isinstance(doc.get("typeName"), str):
            raise RenderError(f"{where}: must produce an object with a typeName")
        type_name: str = doc["typeName"]
        attrs_in = doc.get("attributes") or {}
        rels_in = doc.get("relationshipAttributes") or {}
        if not isinstance(attrs_in, dict) or not isinstance(rels_in, dict):
            raise RenderError(f"{where}: attributes and relationshipAttributes must be objects")
        # Names and presence are checked once per shape; values (types, references) per entity.
        shape = (
            type_name,
            tuple([(k, v is None) for k, v in attrs_in.items()]),
            tuple([(k, v is None) for k, v in rels_in.items()]),
        )
        if shape not in self.shapes:
            self._check_shape(type_name, attrs_in, rels_in, where)
            self.shapes.add(shape)
        known = self.types.get(type_name)
        if known is None:
            schema = self.profile.schema
            known = self.types[type_name] = (
                schema.attributes(type_name),
                schema.relationship_names(type_name),
            )
        declared, rel_names = known
        attributes: dict[str, Any] = {}
        refs: dict[str, Key | list[Key] | None] = {}
        rel_attrs: set[str] = set()
        for section, values in (("attributes", attrs_in), ("relationshipAttributes", rels_in)):
            for k, v in values.items():
                if v is None:
                    continue
                t = type(v)
                if t is str or t is int or t is bool or t is float:  # (most values: never a reference)
                    spec = declared.get(k)
                    if spec is not None and not (t is str and spec.type_name == "string"):
                        why = check_value(spec.type_name, v)
                        if why:
                            raise RenderError(f"{where}: attribute {k!r}: {why}")
                    attributes[k] = v
                    continue
                if _is_ref(v) or (isinstance(v, list) and v and all(_is_ref(x) for x in v)):
                    refs[k] = (
                        [(x["typeName"], x["uniqueAttributes"]["qualifiedName"]) for x in v]
                        if isinstance(v, list)
                        else (v["typeName"], v["uniqueAttributes"]["qualifiedName"])
                    )
                    if section == "relationshipAttributes":
                        rel_attrs.add(k)
                    continue
                if (
                    isinstance(v, list)
                    and not v
                    and _is_reference_attribute(k, declared, rel_names, self.profile.schema)
                ):
                    refs[k] = []
                    if section == "relationshipAttributes":
                        rel_attrs.add(k)
                    continue
                spec = declared.get(k)
                if spec is not None:
                    why = check_value(spec.type_name, v)
                    if why:
                        raise RenderError(f"{where}: attribute {k!r}: {why}")
                attributes[k] = v
        qn = attributes.get("qualifiedName")
        if not isinstance(qn, str) or not qn:
            raise RenderError(f"{where}: qualifiedName must be a non-empty string")
        if self.domain_suffix is not None and not qn.endswith(self.domain_suffix):
            raise RenderError(f"{where}: qualifiedName {qn!r} must end with @{self.domain} (the domain)")
        create_only = {k: attributes.pop(k) for k in self.profile.create_only_attributes if k in attributes}
        labels = doc.get("labels") or []
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise RenderError(f"{where}: labels must be a list of strings")
        return DesiredEntity(
            type_name,
            qn,
            attributes,
            refs,
            rel_attrs,
            create_only,
            0,
            origin,
            list(labels),
            doc.get("shared") is True,
        )

    def _check_shape(
        self, type_name: str, attrs_in: dict[str, Any], rels_in: dict[str, Any], where: str
    ) -> None:
        """The type is known, every name is declared, every mandatory attribute has a value."""
        schema = self.profile.schema
        if not schema.knows(type_name):
            raise RenderError(f"{where}: type {type_name!r} is not in the profile's typedefs")
        declared = schema.attributes(type_name)
        rel_names = schema.relationship_names(type_name)
        for values in (attrs_in, rels_in):
            for k in values:
                if k not in declared and k not in rel_names:
                    raise RenderError(f"{where}: {type_name} has no attribute {k!r}")
        for k, spec in declared.items():
            if not spec.optional and attrs_in.get(k) is None and rels_in.get(k) is None:
                raise RenderError(
                    f"{where}: mandatory attribute {k!r} of {spec.declared_in} is missing",
                    hint=f"set {k} in the template",
                )
        for k, rel in schema.mandatory_relationship_names(type_name).items():
            if attrs_in.get(k) is None and rels_in.get(k) is None:
                raise RenderError(
                    f"{where}: {type_name} needs {k!r} (the child end of the COMPOSITION relationship "
                    f"{rel}: an Atlas refuses the entity without it)",
                    hint=f"set {k} in the template (a container in mapping.toml), or use another type",
                )

    def add(self, entity: DesiredEntity, owner: str, *, shared_ok: bool = False) -> DesiredEntity:
        existing = self.state.entities.get(entity.key)
        if existing is not None:
            if shared_ok and self.owner[entity.key].startswith("container "):
                return existing  # one container (a hive_db) serves every table in it
            if self.owner[entity.key] != owner:
                raise RenderError(
                    f"name collision: {self.owner[entity.key]} and {owner} both render to "
                    f"{entity.type_name} {entity.qualified_name!r}",
                    hint="two different nodes must get different qualified names; check the profile's naming",
                )
            return existing
        self.state.entities[entity.key] = entity
        self.owner[entity.key] = owner
        return entity


def _is_reference_attribute(name: str, declared: dict[str, Any], rel_names: set[str], schema: Any) -> bool:
    """Relationship attributes and ``array<EntityType>`` attributes hold references (``[]`` clears them)."""
    if name in rel_names:
        return True
    spec = declared.get(name)
    if spec is None or not spec.type_name.startswith("array<"):
        return False
    return bool(schema.knows(spec.type_name[6:-1]))


def render(
    graph: LineageGraph,
    profile: Profile,
    *,
    domain: str,
    job: str,
    single_process: bool | None = None,
    extra_columns: Mapping[str, Sequence[str]] | None = None,
    rendered: RenderedKeys | None = None,
    namespaces: Namespaces | None = None,
) -> DesiredState:
    """Render ``graph`` into the desired entities of ``profile`` for ``domain`` / ``job``.

    When ``graph`` is one chunk of a bigger input (streaming sync), ``single_process`` and
    ``extra_columns`` (columns that edges elsewhere in the input use, per dataset) carry what the
    whole input says, so each entity renders exactly as it would from the whole graph.
    ``rendered``: datasets and columns rendered by an earlier call; processes and edges here refer
    to them by key (they are not in ``graph.datasets`` and not in the returned state).
    ``namespaces``: the metadata namespaces of a native profile (``--metadata-namespace``, per source).
    """
    if not valid_domain(domain):
        raise RenderError(f"invalid domain {domain!r}", hint=DOMAIN_HINT)
    r = _Renderer(profile, domain, job)
    # metadata needs somewhere to record what atlas-sync added (reconcile.metadata)
    with_metadata = profile.bookkeeping.metadata is not None or profile.metadata_record is not None
    tags = profile.bookkeeping.metadata is not None  # (a native profile publishes what rules add, no tags)
    mapping = profile.mapping(r.env)
    if mapping is not None:
        ns = namespaces or profile.namespaces or Namespaces()
        native = NativeRender(mapping, ns, domain=domain, job=job)
        r.extra_context["native"] = native
        r.state.owner_label = native.labels[2]
    ds_keys = r.state.dataset_keys
    col_keys = r.state.column_keys
    # lookups see this graph's datasets first, then the ones rendered earlier
    ds_refs: Mapping[str, Key] = ChainMap(ds_keys, rendered.datasets) if rendered else ds_keys
    col_refs: Mapping[tuple[str, str], Key] = ChainMap(col_keys, rendered.columns) if rendered else col_keys
    # Columns that edges use but the reader did not list are added, so edges always have both ends.
    # (dicts as ordered sets: a dataset with many columns used by many edges stays linear)
    column_sets: dict[str, dict[str, None]] = {d.id: dict.fromkeys(d.column_names()) for d in graph.datasets}
    for ds_id, extra in (extra_columns or {}).items():
        if ds_id in column_sets:
            column_sets[ds_id].update(dict.fromkeys(extra))
    for e in graph.edges:
        for ref in (e.source, e.target):
            if ref.column is not None and ref.dataset in column_sets:
                column_sets[ref.dataset].setdefault(ref.column)
    columns: dict[str, list[str]] = {k: list(v) for k, v in column_sets.items()}

    # BI objects with the bi template; dashboards after everything else, as they refer to their charts
    with_bi = "bi" in profile.templates
    datasets = graph.datasets
    if with_bi and any(d.kind == "dashboard" for d in datasets):
        datasets = [d for d in datasets if d.kind != "dashboard"] + [
            d for d in datasets if d.kind == "dashboard"
        ]
    for d in datasets:
        ctx = d.model_dump(exclude={"columns"})
        # (named after the sync's job where the reader's job was only the file's name)
        ctx["id"], ctx["name"] = dataset_named_under(d, graph, job)
        # templates see a column's name, type and description (its metadata goes beside the entity)
        ctx["columns"] = (
            [{"name": c.name, "type": c.type, "description": c.description} for c in d.columns]
            if d.columns
            else [{"name": c} for c in columns[d.id]]
        )
        if with_bi and d.kind in BI_KINDS:
            charts = [_ref(ds_refs[c]) for c in d.facets.get("charts") or () if c in ds_refs]
            ent = r.render_main("bi", f"dataset {d.id!r}", {"dataset": ctx, "charts": charts})
        else:
            ent = r.render_main("dataset", f"dataset {d.id!r}", {"dataset": ctx})
        if ent is None:
            raise RenderError(f"template {profile.templates['dataset']} (dataset {d.id!r}) rendered nothing")
        ds_keys[d.id] = ent.key
        if with_metadata:
            ent.metadata = entity_metadata(d, tags=tags)
            if ent.shared:
                ent.foreign_metadata = d.foreign_metadata
        if "column" in profile.templates:
            cols = {c.name: c for c in d.columns}
            for pos, cname in enumerate(columns[d.id]):
                col = cols.get(cname)
                cctx = {
                    "dataset": ctx,
                    "dataset_ref": _ref(ent.key),
                    "dataset_qualified_name": ent.qualified_name,
                    "column": {
                        "name": cname,
                        "type": col.type if col else None,
                        "description": col.description if col else None,
                    },
                    "position": pos,
                }
                origin = f"column {d.id}.{cname}"
                cent = r.render_main("column", origin, cctx)
                if cent is not None:
                    col_keys[(d.id, cname)] = cent.key
                    if with_metadata and col is not None:
                        cent.metadata = entity_metadata(col, tags=tags)
                        if cent.shared:
                            cent.foreign_metadata = col.foreign_metadata

    proc_keys: dict[str, Key] = {}
    for p in graph.processes:
        pdoc = p.model_dump()
        # named under the sync's job where the reader's job was only the file's name
        pdoc["id"] = process_id_under(p.id, graph, job)
        if p.name == p.id:  # a name that is the id follows it
            pdoc["name"] = pdoc["id"]
        # its qualified name without @<domain>, as templates use it
        pdoc["local_name"] = process_local_name(p.id, graph, job)
        ctx = {
            "process": pdoc,
            "inputs": [_ref(ds_refs[i]) for i in p.inputs],
            "outputs": [_ref(ds_refs[o]) for o in p.outputs],
            "single_process": len(graph.processes) == 1 if single_process is None else single_process,
            "source": graph.source or "",
            "display_name": process_display_name(pdoc, job),
        }
        ent = r.render_main("process", f"process {p.id!r}", ctx)
        if ent is None:
            raise RenderError(f"template {profile.templates['process']} (process {p.id!r}) rendered nothing")
        proc_keys[p.id] = ent.key
        if with_metadata:
            ent.metadata = entity_metadata(p, tags=tags)

    if "column_lineage" in profile.templates and graph.edges:
        default_proc = graph.processes[0].id if len(graph.processes) == 1 else None
        producers: dict[str, str] = {}  # dataset id -> first process writing it
        for p in graph.processes:
            for o in p.outputs:
                producers.setdefault(o, p.id)
        groups: dict[tuple[str, str, str | None, str], list[ColumnEdge]] = defaultdict(list)
        for e in graph.edges:
            pid = e.process or default_proc or producers.get(e.target.dataset)
            if pid is None or pid not in proc_keys:
                continue
            bucket: str = "DIRECT" if e.is_direct else e.kind
            groups[(pid, e.target.dataset, e.target.column, bucket)].append(e)
        # An indirect dependency of a whole dataset (target `*`: a JOIN, FILTER, ... of the statement)
        # goes to the columns the process writes there, never to the dataset itself: a process whose
        # output is the dataset would stand in the dataset's table-level lineage (Atlas's UI draws it
        # beside the job). None written (no column known): the entity has no outputs.
        written: dict[tuple[str, str], dict[Key, None]] = defaultdict(dict)
        for pid, tds, tcol, _ in groups:
            if tcol is not None and (key := col_refs.get((tds, tcol))) is not None:
                written[(pid, tds)][key] = None
        for (pid, tds, tcol, bucket), edges in groups.items():
            target_key = col_refs.get((tds, tcol)) if tcol is not None else ds_refs.get(tds)
            if target_key is None:
                continue
            outputs = [target_key] if tcol is not None else list(written.get((pid, tds), ()))
            # first-seen order without duplicates (a dict: a column fed by 50,000 inputs stays linear)
            sources: dict[Key, None] = {}
            for e in edges:
                sk = (
                    col_refs.get((e.source.dataset, e.source.column))
                    if e.source.column
                    else ds_refs.get(e.source.dataset)
                )
                if sk is not None:
                    sources[sk] = None
            kind = (
                max((e.kind for e in edges), key=lambda k: _DIRECT_RANK[k]) if bucket == "DIRECT" else bucket
            )
            exprs = sorted({e.expression for e in edges if e.expression})
            proc_key = proc_keys[pid]
            ctx = {
                "process_ref": _ref(proc_key),
                "process_qualified_name": proc_key[1],
                "process_name": proc_key[1].rsplit("@", 1)[0],
                "target": {"dataset": dataset_id_under(tds, graph, job), "column": tcol},
                "target_name": tcol if tcol is not None else "*",
                "inputs": [_ref(k) for k in sources],
                "outputs": [_ref(k) for k in outputs],
                "target_ref": _ref(target_key),  # the target column, or the dataset of a `*` target
                "kind": kind,
                "direct": bucket == "DIRECT",
                "expression": "; ".join(exprs) if exprs else None,
            }
            origin = f"column lineage {pid}:{tds}.{tcol or '*'} ({kind})"
            r.render_main("column_lineage", origin, ctx)

    _assign_tiers(r.state, rendered.tiers if rendered else {})
    return r.state


def _assign_tiers(state: DesiredState, known: Mapping[Key, int]) -> None:
    """tier = 1 + the highest tier of anything referenced (datasets 0, columns 1, processes ...);
    ``known``: tiers of entities rendered earlier that ``state`` refers to."""
    memo: dict[Key, int] = dict(known)
    for key, ent in state.entities.items():
        ent.tier = _tier(key, frozenset(), state, memo)


def _tier(key: Key, stack: frozenset[Key], state: DesiredState, memo: dict[Key, int]) -> int:
    """``key``'s tier (an entity of ``state``); ``memo``: the tiers known (those rendered earlier too).
    (A function of its own, not a closure calling itself: that closure is a reference cycle, which
    kept every rendered state alive until the cyclic collector ran.)"""
    if key in memo:
        return memo[key]
    ent = state.entities[key]
    best = 0
    for v in ent.refs.values():
        for k in v if isinstance(v, list) else ([v] if v else []):
            tier = memo.get(k)  # (a tier known is of an entity rendered, off every path to here)
            if tier is None:
                if k in stack:
                    raise RenderError(f"reference cycle through {key[0]} {key[1]!r}")
                if k not in state.entities:
                    raise RenderError(
                        f"{ent.origin}: references {k[0]} {k[1]!r}, which the profile does not render"
                    )
                tier = _tier(k, stack | {key}, state, memo)
            if tier >= best:
                best = tier + 1
    memo[key] = best
    return best


__all__ = [
    "DIRECT_KINDS",
    "DesiredEntity",
    "Namespaces",
    "DesiredState",
    "Key",
    "RenderError",
    "RenderedKeys",
    "render",
]
