"""Plan, apply and tear down a glossary file against Atlas (or the emulator), idempotently.

Ownership lives in Atlas: every glossary, category and term this tool creates carries
``additionalAttributes`` ``atlas-sync.owner`` (the file's ``owner``) and ``atlas-sync.id`` (its stable id),
so any machine knows what a file made. Objects are matched by that id, so a changed ``name`` with the same
``id`` is a rename (an update), never a delete and a create. What another tool or a person made is never
changed or deleted: a glossary of the same name that is not ours is refused; terms and categories added by
hand inside our glossary are left alone, and so are relations and category links to them.

Requests: one ``GET /v2/glossary`` plus two reads per glossary of the file that exists (its terms and its
categories); no write when nothing changed. Writes: a POST per new glossary, a PUT per changed one, one
bulk POST per level of new categories, a PUT per changed category, one bulk POST for all new terms, a PUT
per term whose fields or links change (a relation between two terms is written from one side only).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas_sync.atlas import glossary as api
from atlas_sync.errors import AtlasSyncError
from atlas_sync.glossary.spec import RELATIONS, CategorySpec, GlossaryFile, GlossarySpec, TermSpec
from atlas_sync.wording import counted

if TYPE_CHECKING:
    from atlas_sync.atlas.interface import AtlasApi

OWNER_KEY = "atlas-sync.owner"
ID_KEY = "atlas-sync.id"
# Relation fields we manage, and the inverse each one shows on the other term.
INVERSE = {f: inv for _, f, inv in RELATIONS}
MANAGED_FIELDS = tuple(dict.fromkeys(f for _, f, _ in RELATIONS))
UNMANAGED_FIELDS = (
    "antonyms",
    "preferredTerms",
    "preferredToTerms",
    "translatedTerms",
    "translationTerms",
    "classifies",
    "isA",
    "validValues",
    "validValuesFor",
)
_TERM_SCALARS = (
    ("name", "name"),
    ("shortDescription", "short_description"),
    ("longDescription", "long_description"),
    ("abbreviation", "abbreviation"),
    ("usage", "usage"),
)

TermKey = tuple[str, str]  # (glossary id, term id)
Edge = tuple[str, TermKey, TermKey]  # (relation, a, b); symmetric ones with a <= b


class GlossaryConflictError(AtlasSyncError):
    """The file would change or delete what this file did not create; nothing was written."""


class GlossaryInUseError(AtlasSyncError):
    """Terms to delete are still assigned to entities (or the glossary holds others' objects)."""


@dataclass
class Change:
    """One line of the plan: ``op`` is ``+`` create, ``~`` update, ``=`` unchanged, ``-`` delete,
    ``!`` blocked (a delete refused without ``--force``)."""

    op: str
    kind: str  # glossary, category, term
    label: str
    details: list[str] = field(default_factory=list)

    def render(self) -> str:
        text = f"{self.op} {self.kind} {self.label}"
        return text + (f": {'; '.join(self.details)}" if self.details else "")

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "kind": self.kind, "name": self.label, "details": list(self.details)}


@dataclass
class _Server:
    """What Atlas holds for one glossary of the file (or of the owner, to delete)."""

    glossary: dict[str, Any] | None
    terms: list[dict[str, Any]] = field(default_factory=list)
    categories: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class GlossaryPlan:
    """The changes :func:`apply_glossary` would make. ``changes`` holds one line per object."""

    spec: GlossaryFile
    target: str
    changes: list[Change]
    force: bool
    servers: dict[str, _Server]  # glossary id -> what the server holds
    doomed: dict[str, _Server]  # our glossaries no longer in the file -> delete
    reads: int = 0

    def count(self, op: str) -> int:
        return sum(1 for c in self.changes if c.op == op)

    @property
    def has_changes(self) -> bool:
        return any(c.op in "+~-" for c in self.changes)

    @property
    def blocked(self) -> list[Change]:
        return [c for c in self.changes if c.op == "!"]

    def summary(self) -> str:
        s = f"{self.count('+')} to create, {self.count('~')} to update, {self.count('=')} unchanged"
        if self.count("-"):
            s += f", {self.count('-')} to delete"
        if self.blocked:
            s += f", {len(self.blocked)} blocked"
        return s

    def render(self, *, unchanged: bool = False) -> str:
        lines = [f"Glossary plan for {self.spec.path} (owner {self.spec.owner}) against {self.target}"]
        lines += ["  " + c.render() for c in self.changes if unchanged or c.op != "="]
        lines.append(f"Plan: {self.summary()}.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.spec.path,
            "owner": self.spec.owner,
            "changes": [c.to_dict() for c in self.changes],
            "create": self.count("+"),
            "update": self.count("~"),
            "unchanged": self.count("="),
            "delete": self.count("-"),
            "blocked": len(self.blocked),
        }


@dataclass
class GlossaryResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    writes: int = 0

    def summary(self) -> str:
        s = f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged"
        return s + (f", {self.deleted} deleted" if self.deleted else "")

    def to_dict(self) -> dict[str, int]:
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "writes": self.writes,
        }


# ---------------------------------------------------------------------------------------------- helpers
def _marks(obj: dict[str, Any] | None) -> tuple[Any, Any]:
    attrs = (obj or {}).get("additionalAttributes") or {}
    return attrs.get(OWNER_KEY), attrs.get(ID_KEY)


def _attrs(owner: str, oid: str, extra: dict[str, str]) -> dict[str, str]:
    return {**extra, OWNER_KEY: owner, ID_KEY: oid}


def _norm(value: Any) -> Any:
    return None if value in ("", [], {}) else value


def _diff(label: str, have: Any, want: Any) -> str | None:
    have, want = _norm(have), _norm(want)
    if have == want:
        return None
    if label == "name":
        return f"renamed {have!r} -> {want!r}"
    return label


def _guids(headers: Iterable[dict[str, Any]] | None, key: str) -> list[str]:
    return [h[key] for h in headers or [] if h.get(key)]


def _owned(items: list[dict[str, Any]], owner: str) -> dict[str, dict[str, Any]]:
    """Objects this owner made, by their stable id."""
    out = {}
    for o in items:
        who, oid = _marks(o)
        if who == owner and isinstance(oid, str):
            out[oid] = o
    return out


def _desired_edges(spec: GlossaryFile) -> set[Edge]:
    edges: set[Edge] = set()
    for g in spec.glossaries:
        for t in g.terms:
            for fld, targets in t.relations.items():
                for b in targets:
                    edges.add(_edge(fld, (g.id, t.id), b))
    return edges


def _edge(fld: str, a: TermKey, b: TermKey) -> Edge:
    """The canonical form of ``a.fld contains b`` (the same fact seen from b is the same edge)."""
    if fld == "replacementTerms":  # a.replacementTerms b  ==  b.replacedBy a
        return ("replacedBy", b, a)
    if fld in ("synonyms", "seeAlso"):
        lo, hi = sorted((a, b))
        return (fld, lo, hi)
    return (fld, a, b)


def _edge_fields(edge: Edge, me: TermKey) -> list[tuple[str, TermKey]]:
    """Which field of ``me`` shows this edge, and the other end."""
    rel, a, b = edge
    out = []
    if a == me:
        out.append((rel, b))
    if b == me:
        out.append((INVERSE[rel], a))
    return out


# ---------------------------------------------------------------------------------------------- plan
def plan_glossary(client: AtlasApi, spec: GlossaryFile, *, force: bool = False) -> GlossaryPlan:
    """Read what Atlas holds and diff the file against it; writes nothing."""
    before = client.stats["glossary_read"].requests
    listed = api.list_glossaries(client)
    ours = _owned(listed, spec.owner)
    by_qn = {g.get("qualifiedName"): g for g in listed}
    changes: list[Change] = []
    servers: dict[str, _Server] = {}
    for g in spec.glossaries:
        found = ours.get(g.id)
        if found is None:
            other = by_qn.get(g.name)
            if other is not None:
                who, _ = _marks(other)
                by = f"by atlas-sync file owner {who!r}" if who else "by another tool or a person"
                raise GlossaryConflictError(
                    f"{spec.path}: glossary {g.name!r} exists in Atlas, created {by}, not by this file; "
                    "nothing was written",
                    hint="rename the glossary in the file, or give the file that glossary's owner",
                )
        server = _Server(found)
        if found is not None:
            server.terms = api.glossary_terms(client, found["guid"])
            server.categories = api.glossary_categories(client, found["guid"])
        servers[g.id] = server
    doomed = {}
    for oid, found in ours.items():
        if oid not in servers:
            doomed[oid] = _Server(found, api.glossary_terms(client, found["guid"]), [])
    key_of = _term_keys(spec, servers)
    desired = _desired_edges(spec)
    actual = _actual_edges(spec, servers, key_of)
    for g in spec.glossaries:
        changes.extend(_glossary_changes(spec, g, servers[g.id], desired, actual, force))
    for oid, server in doomed.items():
        assert server.glossary is not None
        changes.append(_delete_glossary_change(server, oid, force))
    plan = GlossaryPlan(spec, client.target, changes, force, servers, doomed)
    plan.reads = client.stats["glossary_read"].requests - before
    return plan


def _term_keys(spec: GlossaryFile, servers: dict[str, _Server]) -> dict[str, TermKey]:
    """guid -> (glossary id, term id) of every term this file owns in Atlas (in any of its glossaries)."""
    out: dict[str, TermKey] = {}
    for gid, server in servers.items():
        for tid, t in _owned(server.terms, spec.owner).items():
            out[t["guid"]] = (gid, tid)
    return out


def _actual_edges(spec: GlossaryFile, servers: dict[str, _Server], key_of: dict[str, TermKey]) -> set[Edge]:
    edges: set[Edge] = set()
    for server in servers.values():
        for t in server.terms:
            me = key_of.get(t["guid"])
            if me is None:
                continue
            for fld in (*MANAGED_FIELDS, "replacementTerms"):
                for g in _guids(t.get(fld), "termGuid"):
                    other = key_of.get(g)
                    if other is not None:
                        edges.add(_edge(fld, me, other))
    return edges


def _glossary_changes(
    spec: GlossaryFile, g: GlossarySpec, server: _Server, desired: set[Edge], actual: set[Edge], force: bool
) -> list[Change]:
    out: list[Change] = []
    have = server.glossary
    if have is None:
        out.append(Change("+", "glossary", g.name))
    else:
        details = [
            d
            for d in (
                _diff("name", have.get("name"), g.name),
                _diff("shortDescription", have.get("shortDescription"), g.short_description),
                _diff("longDescription", have.get("longDescription"), g.long_description),
                _diff("language", have.get("language"), g.language),
                _diff("usage", have.get("usage"), g.usage),
                _diff(
                    "additionalAttributes",
                    have.get("additionalAttributes"),
                    _attrs(spec.owner, g.id, g.attributes),
                ),
            )
            if d
        ]
        out.append(Change("~" if details else "=", "glossary", g.name, details))
    cats = _owned(server.categories, spec.owner)
    cat_ids_by_guid = {c["guid"]: cid for cid, c in cats.items()}
    names_taken = {c.get("name"): c for c in server.categories if c["guid"] not in cat_ids_by_guid}
    for c in g.categories:
        label = f"{g.name}/{c.name}"
        found = cats.get(c.id)
        if found is None:
            if c.name in names_taken:
                raise GlossaryConflictError(
                    f"{spec.path}: category {label} exists in Atlas, not created by this file; nothing was written"
                )
            out.append(Change("+", "category", label))
            continue
        parent_have = (found.get("parentCategory") or {}).get("categoryGuid")
        parent_want = _category_by_name(g, c.parent)
        details = [
            d
            for d in (
                _diff("name", found.get("name"), c.name),
                _diff("shortDescription", found.get("shortDescription"), c.short_description),
                _diff("longDescription", found.get("longDescription"), c.long_description),
                _diff(
                    "additionalAttributes",
                    found.get("additionalAttributes"),
                    _attrs(spec.owner, c.id, c.attributes),
                ),
                None
                if cat_ids_by_guid.get(parent_have) == (parent_want.id if parent_want else None)
                else "parent",
            )
            if d
        ]
        out.append(Change("~" if details else "=", "category", label, details))
    wanted_cats = {c.id for c in g.categories}
    for cid, found in cats.items():
        if cid not in wanted_cats:
            out.append(Change("-", "category", f"{g.name}/{found.get('name')}"))
    terms = _owned(server.terms, spec.owner)
    term_names_taken = {t.get("name") for t in server.terms if _marks(t)[0] != spec.owner}
    for t in g.terms:
        label = f"{g.name}/{t.name}"
        found = terms.get(t.id)
        me = (g.id, t.id)
        if found is None:
            if t.name in term_names_taken:
                raise GlossaryConflictError(
                    f"{spec.path}: term {label} exists in Atlas, not created by this file; nothing was written",
                    hint="give the term another name, or remove the hand-made one first",
                )
            out.append(Change("+", "term", label))
            continue
        details = [
            d
            for d in (
                *(_diff(k, found.get(k), getattr(t, attr)) for k, attr in _TERM_SCALARS),
                _diff("examples", found.get("examples"), t.examples),
                _diff(
                    "additionalAttributes",
                    found.get("additionalAttributes"),
                    _attrs(spec.owner, t.id, t.attributes),
                ),
            )
            if d
        ]
        have_cats = {
            cat_ids_by_guid[x]
            for x in _guids(found.get("categories"), "categoryGuid")
            if x in cat_ids_by_guid
        }
        if have_cats != {_cat_id(g, name) for name in t.categories}:
            details.append("categories")
        for edge in sorted((desired ^ actual) - _dead_edges(spec, desired ^ actual)):
            for fld, _other in _edge_fields(edge, me):
                if fld not in details:
                    details.append(fld)
        out.append(Change("~" if details else "=", "term", label, details))
    wanted_terms = {t.id for t in g.terms}
    for tid, found in terms.items():
        if tid not in wanted_terms:
            assigned = found.get("assignedEntities") or []
            label = f"{g.name}/{found.get('name')}"
            if assigned and not force:
                out.append(
                    Change(
                        "!",
                        "term",
                        label,
                        [f"assigned to {counted(len(assigned), 'entity')}: delete needs --force"],
                    )
                )
            else:
                extra = [f"unassigned from {counted(len(assigned), 'entity')} first"] if assigned else []
                out.append(Change("-", "term", label, extra))
    return out


def _dead_edges(spec: GlossaryFile, edges: set[Edge]) -> set[Edge]:
    """Edges to terms that are deleted: they go with the term, no write needed."""
    alive = {(g.id, t.id) for g in spec.glossaries for t in g.terms}
    return {e for e in edges if e[1] not in alive or e[2] not in alive}


def _delete_glossary_change(server: _Server, oid: str, force: bool) -> Change:
    assert server.glossary is not None
    assigned = sum(len(t.get("assignedEntities") or []) for t in server.terms)
    if assigned and not force:
        return Change(
            "!",
            "glossary",
            str(server.glossary.get("name")),
            [f"no longer in the file, but {assigned} term assignments: delete needs --force"],
        )
    return Change("-", "glossary", str(server.glossary.get("name")), ["no longer in the file"])


def _category_by_name(g: GlossarySpec, name: str | None) -> CategorySpec | None:
    return next((c for c in g.categories if c.name == name), None) if name else None


def _cat_id(g: GlossarySpec, name: str) -> str:
    c = _category_by_name(g, name)
    assert c is not None  # validated
    return c.id


# ---------------------------------------------------------------------------------------------- apply
def apply_glossary(client: AtlasApi, plan: GlossaryPlan) -> GlossaryResult:
    """Write what the plan says, in dependency order. Refuses blocked deletes before any write."""
    if plan.blocked:
        first = plan.blocked[0]
        raise GlossaryInUseError(
            f"{first.kind} {first.label}: {'; '.join(first.details)}; nothing was written",
            hint="remove the assignments first, or pass --force to remove them with the term",
        )
    spec, owner = plan.spec, plan.spec.owner
    before = client.stats["glossary_write"].requests
    result = GlossaryResult(
        created=plan.count("+"), updated=plan.count("~"), unchanged=plan.count("="), deleted=plan.count("-")
    )
    if not plan.has_changes:
        return result
    g_guid: dict[str, str] = {}
    c_guid: dict[tuple[str, str], str] = {}
    t_guid: dict[TermKey, str] = {}
    for g in spec.glossaries:
        server = plan.servers[g.id]
        body = {
            "name": g.name,
            "shortDescription": g.short_description,
            "longDescription": g.long_description,
            "language": g.language,
            "usage": g.usage,
            "additionalAttributes": _attrs(owner, g.id, g.attributes),
        }
        if server.glossary is None:
            g_guid[g.id] = api.create_glossary(client, body)["guid"]
            continue
        g_guid[g.id] = server.glossary["guid"]
        if _change(plan, "glossary", g.name).op == "~":
            api.update_glossary(client, g_guid[g.id], {**server.glossary, **body})
        for cid, c in _owned(server.categories, owner).items():
            c_guid[(g.id, cid)] = c["guid"]
        for tid, t in _owned(server.terms, owner).items():
            t_guid[(g.id, tid)] = t["guid"]
    _apply_categories(client, plan, g_guid, c_guid)
    _apply_terms(client, plan, g_guid, c_guid, t_guid)
    _apply_deletes(client, plan)
    result.writes = client.stats["glossary_write"].requests - before
    return result


def _change(plan: GlossaryPlan, kind: str, label: str) -> Change:
    return next(c for c in plan.changes if c.kind == kind and c.label == label)


def _apply_categories(
    client: AtlasApi, plan: GlossaryPlan, g_guid: dict[str, str], c_guid: dict[tuple[str, str], str]
) -> None:
    owner = plan.spec.owner

    def body(g: GlossarySpec, c: CategorySpec) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": c.name,
            "anchor": {"glossaryGuid": g_guid[g.id]},
            "shortDescription": c.short_description,
            "longDescription": c.long_description,
            "additionalAttributes": _attrs(owner, c.id, c.attributes),
        }
        if c.parent:
            out["parentCategory"] = {"categoryGuid": c_guid[(g.id, _cat_id(g, c.parent))]}
        return out

    # new categories level by level: a child's parent must exist when it is created
    pending = [(g, c) for g in plan.spec.glossaries for c in g.categories if (g.id, c.id) not in c_guid]
    while pending:
        ready = [(g, c) for g, c in pending if not c.parent or (g.id, _cat_id(g, c.parent)) in c_guid]
        made = api.create_categories(client, [body(g, c) for g, c in ready])
        for (g, c), m in zip(ready, made, strict=True):
            c_guid[(g.id, c.id)] = m["guid"]
        pending = [p for p in pending if p not in ready]
    for g in plan.spec.glossaries:
        server = {c["guid"]: c for c in plan.servers[g.id].categories}
        for c in g.categories:
            if _change(plan, "category", f"{g.name}/{c.name}").op != "~":
                continue
            have = server[c_guid[(g.id, c.id)]]
            # a category update replaces its term and child links: send the ones it has
            full = {
                **body(g, c),
                "terms": have.get("terms"),
                "childrenCategories": have.get("childrenCategories"),
            }
            api.update_category(client, have["guid"], full)


def _apply_terms(
    client: AtlasApi,
    plan: GlossaryPlan,
    g_guid: dict[str, str],
    c_guid: dict[tuple[str, str], str],
    t_guid: dict[TermKey, str],
) -> None:
    spec, owner = plan.spec, plan.spec.owner
    existing = dict(t_guid)
    server_terms = {t["guid"]: t for s in plan.servers.values() for t in s.terms}
    owned_guids = set(existing.values())
    owned_cats = set(c_guid.values())
    desired = _desired_edges(spec)

    def links(me: TermKey, fld: str, known: dict[TermKey, str]) -> list[str]:
        out = []
        for e in desired:
            for f, other in _edge_fields(e, me):
                if f == fld and other in known:
                    out.append(known[other])
        return sorted(set(out))

    def body(
        g: GlossarySpec, t: TermSpec, known: dict[TermKey, str], have: dict[str, Any] | None
    ) -> dict[str, Any]:
        me = (g.id, t.id)
        out: dict[str, Any] = {
            "name": t.name,
            "anchor": {"glossaryGuid": g_guid[g.id]},
            "shortDescription": t.short_description,
            "longDescription": t.long_description,
            "abbreviation": t.abbreviation,
            "usage": t.usage,
            "examples": t.examples or None,
            "additionalAttributes": _attrs(owner, t.id, t.attributes),
        }
        cats = [c_guid[(g.id, _cat_id(g, n))] for n in t.categories]
        # keep links to categories and terms others made (a term update replaces every link)
        cats += [x for x in _guids((have or {}).get("categories"), "categoryGuid") if x not in owned_cats]
        out["categories"] = [{"categoryGuid": x} for x in dict.fromkeys(cats)] or None
        for fld in (*MANAGED_FIELDS, "replacementTerms"):
            guids = links(me, fld, known)
            guids += [x for x in _guids((have or {}).get(fld), "termGuid") if x not in owned_guids]
            out[fld] = [{"termGuid": x} for x in dict.fromkeys(guids)] or None
        for fld in UNMANAGED_FIELDS:
            if have and have.get(fld):
                out[fld] = [{"termGuid": x} for x in _guids(have[fld], "termGuid")]
        return out

    new = [(g, t) for g in spec.glossaries for t in g.terms if (g.id, t.id) not in t_guid]
    if new:
        # created with their links to terms that exist already; links between new terms follow below
        made = api.create_terms(client, [body(g, t, existing, None) for g, t in new])
        for (g, t), m in zip(new, made, strict=True):
            t_guid[(g.id, t.id)] = m["guid"]
    actual = _actual_edges(spec, plan.servers, {v: k for k, v in existing.items()})
    diff = (desired ^ actual) - _dead_edges(spec, desired ^ actual)

    def by_create(e: Edge) -> bool:  # a link between a new and an existing term: made by the create
        return e in desired and ((e[1] in existing) != (e[2] in existing))

    todo = {e for e in diff if not by_create(e)}
    for g in spec.glossaries:
        for t in g.terms:
            me = (g.id, t.id)
            change = _change(plan, "term", f"{g.name}/{t.name}")
            mine = {e for e in todo if me in (e[1], e[2])}
            needs = change.op == "~" and any(
                d not in MANAGED_FIELDS and d != "replacementTerms" for d in change.details
            )
            if not needs and not mine:
                continue
            have = server_terms.get(t_guid[me])
            api.update_term(client, t_guid[me], body(g, t, t_guid, have))
            todo -= mine


def _apply_deletes(client: AtlasApi, plan: GlossaryPlan) -> None:
    owner = plan.spec.owner
    for g in plan.spec.glossaries:
        server = plan.servers[g.id]
        wanted_terms = {t.id for t in g.terms}
        for tid, t in _owned(server.terms, owner).items():
            if tid not in wanted_terms:
                _delete_term(client, t, plan.force)
        wanted_cats = {c.id for c in g.categories}
        doomed = [c for cid, c in _owned(server.categories, owner).items() if cid not in wanted_cats]
        # children before parents (a category's qualifiedName has one dot per level)
        for c in sorted(doomed, key=lambda c: -str(c.get("qualifiedName", "")).count(".")):
            api.delete_category(client, c["guid"])
    for server in plan.doomed.values():
        assert server.glossary is not None
        _delete_whole(client, server, plan.force)


def _delete_term(client: AtlasApi, term: dict[str, Any], force: bool) -> None:
    assigned = term.get("assignedEntities") or []
    if assigned:
        if not force:
            raise GlossaryInUseError(
                f"term {term.get('qualifiedName')} is assigned to {len(assigned)} entities"
            )
        api.remove_assignments(client, term["guid"], assigned)
    api.delete_term(client, term["guid"])


def _delete_whole(client: AtlasApi, server: _Server, force: bool) -> None:
    assert server.glossary is not None
    for t in server.terms:
        if t.get("assignedEntities"):
            if not force:
                raise GlossaryInUseError(f"term {t.get('qualifiedName')} is assigned to entities")
            api.remove_assignments(client, t["guid"], t["assignedEntities"])
    api.delete_glossary(client, server.glossary["guid"])


# ---------------------------------------------------------------------------------------------- teardown
@dataclass
class TeardownResult:
    deleted: list[str] = field(default_factory=list)  # glossary names
    absent: list[str] = field(default_factory=list)
    unassigned: int = 0

    def summary(self) -> str:
        was = "was" if len(self.absent) == 1 else "were"
        s = f"Deleted {counted(len(self.deleted), 'glossary')} ({len(self.absent)} {was} absent)"
        return s + (
            f", {counted(self.unassigned, 'term assignment')} removed first." if self.unassigned else "."
        )

    def to_dict(self) -> dict[str, Any]:
        return {"deleted": self.deleted, "absent": self.absent, "unassigned": self.unassigned}


def teardown_glossary(client: AtlasApi, spec: GlossaryFile, *, force: bool = False) -> TeardownResult:
    """Delete the glossaries this file created (with their terms and categories), nothing else.

    Checked before any write: a term still assigned to entities, or a term or category someone else added
    to one of these glossaries, refuses the whole teardown unless ``force``.
    """
    listed = api.list_glossaries(client)
    ours = _owned(listed, spec.owner)
    result = TeardownResult()
    todo: list[_Server] = []
    problems: list[str] = []
    for g in spec.glossaries:
        found = ours.get(g.id)
        if found is None:
            result.absent.append(g.name)
            continue
        server = _Server(
            found, api.glossary_terms(client, found["guid"]), api.glossary_categories(client, found["guid"])
        )
        assigned = sum(len(t.get("assignedEntities") or []) for t in server.terms)
        if assigned:
            problems.append(f"glossary {g.name}: {counted(assigned, 'term assignment')}")
        foreign = [o.get("name") for o in server.terms + server.categories if _marks(o)[0] != spec.owner]
        if foreign:
            problems.append(
                f"glossary {g.name}: {counted(len(foreign), 'term or category', 'terms or categories')} not made by this file ({', '.join(map(str, foreign[:3]))})"
            )
        todo.append(server)
    if problems and not force:
        raise GlossaryInUseError(
            f"{spec.path}: {'; '.join(problems)}; nothing was deleted",
            hint="pass --force to remove the assignments and delete everything in these glossaries",
        )
    for server in todo:
        assert server.glossary is not None
        result.unassigned += sum(len(t.get("assignedEntities") or []) for t in server.terms)
        _delete_whole(client, server, True)
        result.deleted.append(str(server.glossary.get("name")))
    return result
