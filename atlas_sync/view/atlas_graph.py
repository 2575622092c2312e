"""Read back what Atlas holds for a domain as a LineageGraph (for `atlas-sync show`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Protocol

from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.errors import AtlasSyncError
from atlas_sync.lineage.model import Classification, Dataset, LineageGraph, Process
from atlas_sync.reconcile.actual import ActualHeader, Key
from atlas_sync.render.profile import Profile


class DomainSource(Protocol):
    """What ``show`` reads a domain back through (:class:`atlas_sync.api.Publisher` is one)."""

    @property
    def client(self) -> AtlasApi: ...

    @property
    def domain(self) -> str: ...

    @property
    def profile(self) -> Profile: ...

    @property
    def native(self) -> bool:
        """A profile on Atlas's own models: qualifiedNames without ``@domain``, no classification listing."""
        ...

    @property
    def process_types(self) -> Collection[str]: ...

    def list_domain(self) -> Mapping[Key, ActualHeader]:
        """Every ACTIVE entity of the domain, by (type, qualifiedName)."""
        ...


def _dataset(header: dict[str, Any]) -> Dataset:
    attrs = header.get("attributes") or {}
    qn = attrs.get("qualifiedName") or header.get("guid", "?")
    return Dataset(
        id=qn,
        name=attrs.get("name") or qn,
        kind=header.get("typeName", "table"),
        facets={"guid": header.get("guid"), "status": header.get("status", "ACTIVE")},
    )


def from_lineage(info: dict[str, Any], process_types: Collection[str]) -> LineageGraph:
    """A LineageGraph from Atlas's lineage API answer (guidEntityMap + relations)."""
    g = LineageGraph()
    # Atlas's lineage walks soft-deleted entities too (a process deleted and created again is there
    # twice under one qualifiedName): what is deleted is not lineage.
    ents: dict[str, dict[str, Any]] = {
        guid: h
        for guid, h in (info.get("guidEntityMap") or {}).items()
        if h.get("status", "ACTIVE") == "ACTIVE"
    }
    is_proc = {
        guid
        for guid, h in ents.items()
        if h.get("typeName") in process_types or "inputs" in (h.get("attributes") or {})
    }
    inputs: dict[str, list[str]] = {}
    outputs: dict[str, list[str]] = {}
    for rel in info.get("relations") or []:
        a, b = rel.get("fromEntityId"), rel.get("toEntityId")
        if b in is_proc and a not in is_proc:
            inputs.setdefault(b, []).append(a)
        elif a in is_proc and b not in is_proc:
            outputs.setdefault(a, []).append(b)
    qn = {guid: ((h.get("attributes") or {}).get("qualifiedName") or guid) for guid, h in ents.items()}
    for guid, h in ents.items():
        if guid not in is_proc:
            g.add_dataset(_dataset(h))
    for guid, h in ents.items():
        if guid in is_proc:
            attrs = h.get("attributes") or {}
            g.add_process(
                Process(
                    id=qn[guid],
                    name=attrs.get("name") or qn[guid],
                    kind=h.get("typeName", "process"),
                    inputs=[qn[x] for x in inputs.get(guid, []) if x in qn],
                    outputs=[qn[x] for x in outputs.get(guid, []) if x in qn],
                )
            )
    return g


def _link_operator_tree(g: LineageGraph) -> None:
    """Processes chained through datasets read as a tree: the consumer of my output is my parent."""
    consumer: dict[str, list[str]] = {}
    for p in g.processes:
        for i in p.inputs:
            consumer.setdefault(i, []).append(p.id)
    for p in g.processes:
        parents = {c for o in p.outputs for c in consumer.get(o, [])}
        if len(parents) == 1:
            parent = parents.pop()
            p.parent = parent
            par = g.process(parent)
            if par is not None and p.id not in par.children:
                par.children.append(p.id)
    if any(p.children for p in g.processes):
        for p in g.processes:
            p.operator = p.kind


def domain_graph(pub: DomainSource, qualified_name: str | None, *, depth: int = 0) -> LineageGraph:
    """The domain's lineage (or one entity's) as Atlas reports it."""
    from atlas_sync.view.fold import fold_columns

    # Columns back into their datasets, column-lineage entities into column edges, no @domain.
    graph = fold_columns(_domain_graph(pub, qualified_name, depth=depth), pub.domain)
    # Processes chained through datasets are an operator tree only in operator profiles (pico);
    # elsewhere they are jobs feeding each other.
    if pub.profile.reader_options.get("mode") == "operator":
        _link_operator_tree(graph)
    graph.job = qualified_name or f"domain {pub.domain}"  # the picture's title
    return graph


def _domain_graph(pub: DomainSource, qualified_name: str | None, *, depth: int) -> LineageGraph:
    client = pub.client
    native = pub.native
    headers = pub.list_domain()
    if qualified_name:
        if not native and not qualified_name.endswith("@" + pub.domain):
            qualified_name = qualified_name + "@" + pub.domain
        match = [h for k, h in headers.items() if k[1] == qualified_name]
        if not match:
            raise AtlasSyncError(
                f"no entity {qualified_name!r} in domain {pub.domain!r}",
                hint=f"`atlas-sync show --domain {pub.domain}` lists what the domain holds",
            )
        info = client.lineage(match[0].guid, direction="BOTH", depth=depth)
        return from_lineage(info, pub.process_types)
    g = LineageGraph()
    procs = [h for k, h in headers.items() if k[0] in pub.process_types]
    ents = client.get_entities([h.guid for h in procs]) if procs else []
    by_guid = {h.guid: k for k, h in headers.items()}
    tagged = {} if native else _classified(pub, sorted({k[0] for k in headers} - set(pub.process_types)))
    for k, h in headers.items():
        if k[0] not in pub.process_types:
            classes, terms = tagged.get(h.guid, ((), ()))
            g.add_dataset(
                Dataset(
                    id=k[1],
                    name=k[1],
                    kind=k[0],
                    facets={"guid": h.guid},
                    classifications=list(classes),
                    terms=list(terms),
                )
            )
    for e in ents:
        rels = e.get("relationshipAttributes") or {}
        attrs = e.get("attributes") or {}

        def active(name: str, rels: dict[str, Any] = rels) -> list[str]:
            out = []
            for r in rels.get(name) or []:
                if r.get("relationshipStatus", "ACTIVE") == "ACTIVE" and r.get("guid") in by_guid:
                    qn = by_guid[r["guid"]][1]
                    if g.dataset(qn) is not None:
                        out.append(qn)
            return out

        qn = attrs.get("qualifiedName", e["guid"])
        g.add_process(
            Process(
                id=qn,
                name=attrs.get("name") or qn,
                kind=e.get("typeName", "process"),
                inputs=active("inputs"),
                outputs=active("outputs"),
                attributes={"dependencyType": attrs["dependencyType"]} if attrs.get("dependencyType") else {},
            )
        )
    return g


def _classified(
    pub: DomainSource, types: list[str]
) -> dict[str, tuple[tuple[Classification, ...], tuple[str, ...]]]:
    """guid -> (classifications, the entity's own and those Atlas propagated to it; glossary term
    names) of the domain's datasets and columns that have any, from one listing of their headers."""
    from atlas_sync.reconcile.actual import search_roots

    if not types:
        return {}
    suffix = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": "@" + pub.domain}
    out: dict[str, tuple[tuple[Classification, ...], tuple[str, ...]]] = {}
    for h in search_roots(
        pub.client, types, entity_filters=suffix, attributes=["qualifiedName"], include_classifications=True
    ):
        classes = _classifications(h)
        terms = tuple(sorted(h.get("meaningNames") or ()))
        if classes or terms:
            out[h["guid"]] = (classes, terms)
    return out


def _classifications(header: dict[str, Any]) -> tuple[Classification, ...]:
    """Own first, then propagated (``entityGuid`` another entity), each name once per kind; a name the
    header lists without its classification (a server that ignores the request for them) as own."""
    own: set[str] = set()
    propagated: set[str] = set()
    for c in header.get("classifications") or []:
        name = c.get("typeName")
        if isinstance(name, str):
            (own if c.get("entityGuid") in (None, header.get("guid")) else propagated).add(name)
    own |= {n for n in header.get("classificationNames") or () if n not in own | propagated}
    return tuple(Classification(name=n) for n in sorted(own)) + tuple(
        Classification(name=n, propagated=True) for n in sorted(propagated)
    )
