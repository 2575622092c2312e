"""Request objects and the route table: one small handler per Atlas REST endpoint.

Handlers get a :class:`Request` (path parameters, query, body, and the emulator :class:`State`) and
return plain JSON values, :class:`NoContent` (204) or :class:`Text`; errors are raised as exceptions from
:mod:`atlas_sync.emulator.errors` and turned into responses by :class:`~atlas_sync.emulator.app.Emulator`.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas_sync.emulator import business, tags
from atlas_sync.emulator import entities as ent
from atlas_sync.emulator import glossary as gl
from atlas_sync.emulator import lineage as lin
from atlas_sync.emulator import propagation as prop
from atlas_sync.emulator import search as srch
from atlas_sync.emulator import typedefs as tdefs
from atlas_sync.emulator.errors import AtlasApiError, BadJsonError, InternalError
from atlas_sync.emulator.types import Registry, parse_type

if TYPE_CHECKING:
    from atlas_sync.emulator.state import State

ATLAS_VERSION = "2.4.0"

Handler = Callable[["Request"], Any]


@dataclass
class Request:
    method: str
    path: str
    params: list[str]
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    state: State
    _json: Any = field(default=None)

    def json(self) -> Any:
        if not self.body.strip():
            raise BadJsonError("No content to map due to end-of-input")
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadJsonError(f"Unexpected character: {exc}") from exc

    def flag(self, name: str) -> bool:
        return (self.query.get(name) or ["false"])[0].lower() == "true"

    def q(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


class NoContent:
    """Handler result for 204 responses."""


class Text:
    def __init__(self, text: str) -> None:
        self.text = text


# ---------------------------------------------------------------------- handlers
def _types_get(r: Request) -> Any:
    return tdefs.search_typedefs(r.state, r.query)


def _unique_attrs(r: Request, type_name: str) -> dict[str, str]:
    et = r.state.registry.entity(type_name)
    if et is None:
        raise AtlasApiError("ATLAS-400-00-014", "ENTITY", type_name)
    attrs = {k[5:]: v[0] for k, v in r.query.items() if k.startswith("attr:") and v}
    if not attrs:
        raise AtlasApiError("ATLAS-400-00-013", type_name, "")
    for name in attrs:
        if name not in et.unique:
            raise AtlasApiError("ATLAS-400-00-013", type_name, name)
    return attrs


def _unique_text(attrs: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in attrs.items()) + "}"


def _looked_up(r: Request, repo: ent.Repo, type_name: str, attrs: dict[str, str]) -> ent.Row | None:
    """A GET by unique attribute. After racing creates a name may have several ACTIVE entities, and
    a real Atlas's lookup names any of them (the index's order), not always the same: so here. Once
    one of them is deleted, the others are not found by name (Atlas 2.1.0: its unique index kept one
    entry for the name, which the delete removed) until a write sets the name again."""
    if r.state.racing_creates_ms and attrs.get("qualifiedName") is not None:
        if (type_name, attrs["qualifiedName"]) in r.state.unindexed:
            return None  # its index entry went with another copy's delete
        copies = repo.active_copies(type_name, attrs["qualifiedName"])
        if len(copies) > 1:
            return random.choice(copies)
    return repo.find_by_unique(type_name, attrs)


def _find_unique(r: Request, repo: ent.Repo, type_name: str, attrs: dict[str, str]) -> ent.Row:
    row = _looked_up(r, repo, type_name, attrs)
    if row is None:
        raise AtlasApiError("ATLAS-404-00-009", type_name, _unique_text(attrs))
    return row


def _entity_get(r: Request) -> Any:
    tdefs.check_param_length("guid", r.params[0])
    repo = ent.Repo(r.state)
    row = repo.get(r.params[0])
    if row is None:
        raise AtlasApiError("ATLAS-404-00-005", r.params[0])
    return _with_ext(r, repo, row)


def _with_ext(r: Request, repo: ent.Repo, row: ent.Row) -> dict[str, Any]:
    entities, referred = ent.with_ext_info(
        repo, [row], ignore_relationships=r.flag("ignoreRelationships"), min_ext_info=r.flag("minExtInfo")
    )
    return {"referredEntities": referred, "entity": entities[0]}


def _entity_header(r: Request) -> Any:
    repo = ent.Repo(r.state)
    row = repo.get(r.params[0])
    if row is None:
        raise AtlasApiError("ATLAS-404-00-005", r.params[0])
    return ent.header(repo, row)


def _entity_by_unique(r: Request) -> Any:
    attrs = _unique_attrs(r, r.params[0])
    repo = ent.Repo(r.state)
    return _with_ext(r, repo, _find_unique(r, repo, r.params[0], attrs))


def _entity_header_by_unique(r: Request) -> Any:
    attrs = _unique_attrs(r, r.params[0])
    repo = ent.Repo(r.state)
    return ent.header(repo, _find_unique(r, repo, r.params[0], attrs))


def _entity_bulk_get(r: Request) -> Any:
    guids = r.query.get("guid") or []
    if not guids:
        raise AtlasApiError("ATLAS-404-00-005", "[]")
    repo = ent.Repo(r.state)
    found = repo.get_many(guids)
    for g in guids:
        if g not in found:
            raise AtlasApiError("ATLAS-404-00-005", g)
    rows = [found[g] for g in dict.fromkeys(guids)]
    entities, referred = ent.with_ext_info(
        repo, rows, ignore_relationships=r.flag("ignoreRelationships"), min_ext_info=r.flag("minExtInfo")
    )
    return {"referredEntities": referred, "entities": entities}


def _entity_bulk_by_unique(r: Request) -> Any:
    type_name = r.params[0]
    et = r.state.registry.entity(type_name)
    if et is None:
        raise AtlasApiError("ATLAS-400-00-014", "ENTITY", type_name)
    groups: dict[str, dict[str, str]] = {}
    for key, values in r.query.items():
        m = re.match(r"^attr_([^:]*):(.+)$", key)
        if m and values:
            if m.group(2) not in et.unique:
                raise AtlasApiError("ATLAS-400-00-013", type_name, m.group(2))
            groups.setdefault(m.group(1), {})[m.group(2)] = values[0]
    repo = ent.Repo(r.state)
    rows = []
    for attrs in groups.values():
        row = _looked_up(r, repo, type_name, attrs)
        if row is not None and row not in rows:
            rows.append(row)
    entities, referred = ent.with_ext_info(
        repo, rows, ignore_relationships=r.flag("ignoreRelationships"), min_ext_info=r.flag("minExtInfo")
    )
    out: dict[str, Any] = {"referredEntities": referred}
    if entities:
        out["entities"] = entities
    return out


def _entity_post(r: Request) -> Any:
    body = r.json()
    if not isinstance(body, dict):
        raise BadJsonError("Cannot deserialize value of type `AtlasEntityWithExtInfo` from non-object value")
    entity = body.get("entity")
    if entity is None:
        raise InternalError("entity is null")
    if not isinstance(entity, dict):
        raise BadJsonError("Cannot deserialize value of type `AtlasEntity` from non-object value")
    return ent.create_or_update(r.state, [entity], body.get("referredEntities"))


def _entity_bulk_post(r: Request) -> Any:
    body = r.json()
    if not isinstance(body, dict):
        raise BadJsonError(
            "Cannot deserialize value of type `AtlasEntitiesWithExtInfo` from non-object value"
        )
    return ent.create_or_update(r.state, body.get("entities"), body.get("referredEntities"))


def _entity_put_unique(r: Request) -> Any:
    type_name = r.params[0]
    attrs = _unique_attrs(r, type_name)
    body = r.json()
    if not isinstance(body, dict):
        raise BadJsonError("Cannot deserialize value of type `AtlasEntityWithExtInfo` from non-object value")
    entity = body.get("entity")
    if not isinstance(entity, dict):
        raise AtlasApiError("ATLAS-400-00-01A", "no entities to create/update.")
    repo = ent.Repo(r.state)
    row = _find_unique(r, repo, type_name, attrs)
    if not entity.get("typeName") or r.state.registry.entity(str(entity.get("typeName"))) is None:
        raise AtlasApiError("ATLAS-400-00-014", "ENTITY", entity.get("typeName"))
    return ent.create_or_update(r.state, [entity], body.get("referredEntities"), partial_guid=row.guid)


def _entity_put_attr(r: Request) -> Any:
    guid = r.params[0]
    name = r.q("name")
    repo = ent.Repo(r.state)
    row = repo.get(guid)
    if row is None:
        raise AtlasApiError("ATLAS-404-00-005", guid)
    et = r.state.registry.entity(row.type_name)
    assert et is not None
    attr = et.attrs.get(str(name))
    if attr is None:
        raise AtlasApiError("ATLAS-400-00-023", name, row.type_name)
    if attr.kind in ("array", "map", "struct"):
        raise AtlasApiError("ATLAS-400-00-027", name, _runtime_type_name(r.state.registry, attr.type_name))
    value = r.json()
    entity = {"typeName": row.type_name, "guid": guid, "attributes": {name: value}}
    return ent.create_or_update(r.state, [entity], partial_guid=guid)


def _runtime_type_name(reg: Registry, type_name: str) -> str:
    """The name of an attribute's resolved type as Atlas prints it: entity types resolve to ``objectid``
    (``AtlasEntityType.getTypeForAttribute``), so ``array<DataSet>`` reads ``array<objectid>``."""
    parsed = parse_type(type_name)
    if parsed[0] == "array":
        return f"array<{_runtime_type_name(reg, parsed[1])}>"
    if parsed[0] == "map":
        return f"map<{_runtime_type_name(reg, parsed[1])},{_runtime_type_name(reg, parsed[2])}>"
    return "objectid" if reg.entity(type_name) is not None else type_name


def _entity_delete(r: Request) -> Any:
    return ent.delete_guids(r.state, [r.params[0]])


def _entity_bulk_delete(r: Request) -> Any:
    guids = r.query.get("guid") or []
    if not guids:
        raise AtlasApiError("ATLAS-400-00-01A", "Guid(s) not specified")
    return ent.delete_guids(r.state, guids)


def _entity_delete_unique(r: Request) -> Any:
    type_name = r.params[0]
    if r.state.registry.entity(type_name) is None:
        raise AtlasApiError("ATLAS-400-00-014", "ENTITY", type_name)
    attrs = {k[5:]: v[0] for k, v in r.query.items() if k.startswith("attr:") and v}
    if not attrs:
        raise AtlasApiError("ATLAS-404-00-009", type_name, "{}")
    repo = ent.Repo(r.state)
    et = r.state.registry.entity(type_name)
    assert et is not None
    if any(k in et.unique for k in attrs):
        row = repo.find_by_unique(type_name, attrs)
    else:
        row = repo.first_active(type_name)  # Atlas does not validate the key here (contract §5.1)
    if row is None:
        return {}
    return ent.delete_guids(r.state, [row.guid])


def _purge(r: Request) -> Any:
    body = r.json()
    if not isinstance(body, list):
        raise BadJsonError(
            "Cannot deserialize value of type `java.util.HashSet<java.lang.String>` from Object value"
        )
    if not body:
        raise AtlasApiError("ATLAS-400-00-01A", "Guid(s) not specified")
    return ent.purge(r.state, [str(g) for g in body])


def _version(r: Request) -> Any:
    return {
        "Version": ATLAS_VERSION,
        "Revision": "atlas-sync-emulator",
        "Name": "apache-atlas",
        "Description": "Metadata Management and Data Governance Platform over Hadoop",
    }


def _relationship_get(r: Request) -> Any:
    row = r.state.store.conn.execute("SELECT * FROM relationships WHERE guid=?", (r.params[0],)).fetchone()
    if row is None:
        raise AtlasApiError("ATLAS-404-00-005", r.params[0])
    repo = ent.Repo(r.state)
    ends = repo.get_many([row["end1"], row["end2"]])
    override, blocked = prop.relationship_props(r.state, row["guid"])
    rel = {
        "guid": row["guid"],
        "typeName": row["type_name"],
        "status": row["status"],
        "createdBy": row["created_by"],
        "createTime": row["create_time"],
        "updateTime": row["update_time"],
        "version": 0,
        "end1": ent.object_id(ends.get(row["end1"]), row["end1"]),
        "end2": ent.object_id(ends.get(row["end2"]), row["end2"]),
        "label": _rel_label(r.state.registry, row["type_name"]),
        "propagateTags": override
        or r.state.registry.defs.get(row["type_name"], {}).get("propagateTags", "NONE"),
        "attributes": {},
    }
    if r.flag("extendedInfo"):
        rel["propagatedClassifications"] = prop.across(
            r.state, row["guid"], row["end1"], row["end2"], row["type_name"]
        )
        rel["blockedPropagatedClassifications"] = _blocked_full(r, blocked)
    referred = {g: ent.header(repo, x) for g, x in ends.items()}
    return {"relationship": rel, "referredEntities": referred}


def _blocked_full(r: Request, blocked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    repo = ent.Repo(r.state)
    out = []
    for b in blocked:
        source = repo.get(str(b.get("entityGuid")))
        own = (
            [c for c in (source.extra.get("classifications") or []) if c["typeName"] == b.get("typeName")]
            if source
            else []
        )
        if source is not None and own:
            out.append(
                {
                    "typeName": own[0]["typeName"],
                    "attributes": dict(own[0].get("attributes") or {}),
                    "entityGuid": source.guid,
                    "entityStatus": source.status,
                    "propagate": own[0].get("propagate", True),
                    "removePropagationsOnEntityDelete": own[0].get("removePropagationsOnEntityDelete", False),
                }
            )
    return out


def _relationship_update(r: Request) -> Any:
    """PUT ``/v2/relationship``: the emulator keeps a relationship's ``propagateTags`` and
    ``blockedPropagatedClassifications`` (its ends and attributes are not updated)."""
    body = r.json()
    if not isinstance(body, dict) or not body.get("guid"):
        raise AtlasApiError("ATLAS-400-00-01A", "relationship guid is missing")
    row = r.state.store.conn.execute("SELECT * FROM relationships WHERE guid=?", (body["guid"],)).fetchone()
    if row is None:
        raise AtlasApiError("ATLAS-404-00-005", body["guid"])
    tags = body.get("propagateTags")
    if tags is not None and tags not in ("NONE", "ONE_TO_TWO", "TWO_TO_ONE", "BOTH"):
        raise BadJsonError(f"Cannot deserialize value of type `PropagateTags` from String {tags!r}")
    blocked = [
        {"typeName": b.get("typeName"), "entityGuid": b.get("entityGuid")}
        for b in body.get("blockedPropagatedClassifications") or []
        if isinstance(b, dict)
    ]
    prop.set_relationship_props(r.state, row["guid"], tags, blocked)
    r.query = {**r.query, "extendedInfo": ["false"]}
    r.params = [row["guid"]]
    out = _relationship_get(r)["relationship"]
    out["propagatedClassifications"] = []
    out["blockedPropagatedClassifications"] = _blocked_full(r, blocked)
    return out


def _relationship_create(r: Request) -> Any:
    guid, type_name, g1, g2, now = ent.create_relationship(r.state, r.json())
    repo = ent.Repo(r.state)
    ends = repo.get_many([g1, g2])
    # AtlasRelationship as a real 2.4.0 answers the create (keys in its order)
    return {
        "typeName": type_name,
        "guid": guid,
        "provenanceType": 0,
        "end1": ent.object_id(ends.get(g1), g1),
        "end2": ent.object_id(ends.get(g2), g2),
        "label": _rel_label(r.state.registry, type_name),
        "propagateTags": r.state.registry.defs.get(type_name, {}).get("propagateTags", "NONE"),
        "status": "ACTIVE",
        "createdBy": r.state.user,
        "updatedBy": r.state.user,
        "createTime": now,
        "updateTime": now,
        "version": 0,
        "propagatedClassifications": [],
        "blockedPropagatedClassifications": [],
    }


def _rel_label(reg: Registry, name: str) -> str:
    d = reg.defs.get(name, {})
    end1 = d.get("endDef1") or {}
    if end1.get("isLegacyAttribute"):
        return f"__{end1.get('type')}.{end1.get('name')}"
    return str(d.get("relationshipLabel") or f"r:{name}")


def _no_content(fn: Callable[[Request], None]) -> Handler:
    def run(r: Request) -> Any:
        fn(r)
        return NoContent()

    return run


def routes() -> list[tuple[str, re.Pattern[str], Handler]]:
    seg = r"([^/]+)"
    cats = "(entity|enum|struct|classification|relationship|businessmetadata)"
    cat_names = {
        "entity": "ENTITY",
        "enum": "ENUM",
        "struct": "STRUCT",
        "classification": "CLASSIFICATION",
        "relationship": "RELATIONSHIP",
        "businessmetadata": "BUSINESS_METADATA",
    }
    table: list[tuple[str, str, Handler]] = [
        ("GET", "/admin/version", _version),
        ("GET", "/admin/liveness", lambda r: Text("Service is live")),
        ("GET", "/admin/readiness", lambda r: Text("Service is ready to accept requests")),
        ("GET", "/admin/patches", lambda r: {"patches": {}}),
        ("PUT", "/admin/purge", _purge),
        ("PUT", "/admin/purge/", _purge),
        ("GET", "/v2/types/typedefs/?", _types_get),
        ("GET", "/v2/types/typedefs/headers", lambda r: tdefs.typedef_headers(r.state, r.query)),
        ("GET", f"/v2/types/typedef/name/{seg}", lambda r: tdefs.typedef_by_name(r.state, r.params[0])),
        ("GET", f"/v2/types/typedef/guid/{seg}", lambda r: tdefs.typedef_by_guid(r.state, r.params[0])),
        (
            "GET",
            f"/v2/types/{cats}def/name/{seg}",
            lambda r: tdefs.typedef_by_name(r.state, r.params[1], cat_names[r.params[0]]),
        ),
        (
            "GET",
            f"/v2/types/{cats}def/guid/{seg}",
            lambda r: tdefs.typedef_by_guid(r.state, r.params[1], cat_names[r.params[0]]),
        ),
        ("POST", "/v2/types/typedefs/?", lambda r: tdefs.create_typedefs(r.state, r.json())),
        ("PUT", "/v2/types/typedefs/?", lambda r: tdefs.update_typedefs(r.state, r.json())),
        ("DELETE", "/v2/types/typedefs/?", _no_content(lambda r: tdefs.delete_typedefs(r.state, r.json()))),
        (
            "DELETE",
            f"/v2/types/typedef/name/{seg}",
            _no_content(lambda r: tdefs.delete_typedef_by_name(r.state, r.params[0])),
        ),
        ("POST", "/v2/entity/?", _entity_post),
        ("POST", "/v2/entity/bulk/?", _entity_bulk_post),
        ("GET", "/v2/entity/bulk/?", _entity_bulk_get),
        ("DELETE", "/v2/entity/bulk/?", _entity_bulk_delete),
        ("GET", f"/v2/entity/bulk/uniqueAttribute/type/{seg}", _entity_bulk_by_unique),
        ("GET", f"/v2/entity/guid/{seg}", _entity_get),
        ("GET", f"/v2/entity/guid/{seg}/header", _entity_header),
        ("PUT", f"/v2/entity/guid/{seg}", _entity_put_attr),
        ("DELETE", f"/v2/entity/guid/{seg}", _entity_delete),
        ("POST", f"/v2/entity/guid/{seg}/labels", _no_content(lambda r: _labels(r, "set"))),
        ("PUT", f"/v2/entity/guid/{seg}/labels", _no_content(lambda r: _labels(r, "add"))),
        ("DELETE", f"/v2/entity/guid/{seg}/labels", _no_content(lambda r: _labels(r, "remove"))),
        (
            "POST",
            f"/v2/entity/guid/{seg}/classifications",
            _no_content(lambda r: tags.add_classifications(r.state, r.params[0], r.json())),
        ),
        (
            "PUT",
            f"/v2/entity/guid/{seg}/classifications",
            _no_content(lambda r: tags.update_classifications(r.state, r.params[0], r.json())),
        ),
        (
            "POST",
            "/v2/entity/bulk/classification/?",
            _no_content(lambda r: tags.add_classification_bulk(r.state, r.json())),
        ),
        (
            "POST",
            f"/v2/entity/guid/{seg}/businessmetadata",
            _no_content(
                lambda r: business.set_business(
                    r.state,
                    r.params[0],
                    r.json(),
                    (r.query.get("isOverwrite") or ["false"])[0].lower() == "true",
                )
            ),
        ),
        (
            "DELETE",
            f"/v2/entity/guid/{seg}/businessmetadata",
            _no_content(
                lambda r: business.remove_business(r.state, r.params[0], r.json() if r.body.strip() else None)
            ),
        ),
        (
            "GET",
            f"/v2/entity/guid/{seg}/classifications",
            lambda r: tags.get_classifications(r.state, r.params[0]),
        ),
        (
            "DELETE",
            f"/v2/entity/guid/{seg}/classification/{seg}",
            _no_content(lambda r: tags.delete_classification(r.state, r.params[0], r.params[1])),
        ),
        ("GET", f"/v2/entity/uniqueAttribute/type/{seg}", _entity_by_unique),
        ("GET", f"/v2/entity/uniqueAttribute/type/{seg}/header", _entity_header_by_unique),
        ("PUT", f"/v2/entity/uniqueAttribute/type/{seg}", _entity_put_unique),
        ("DELETE", f"/v2/entity/uniqueAttribute/type/{seg}", _entity_delete_unique),
        ("POST", "/v2/search/basic/?", lambda r: srch.basic_search(r.state, r.json())),
        ("GET", "/v2/search/basic/?", lambda r: srch.basic_search_get(r.state, r.query)),
        ("GET", "/v2/search/attribute/?", lambda r: srch.attribute_search(r.state, r.query)),
        ("GET", "/v2/search/dsl/?", lambda r: srch.dsl_search(r.state, r.query)),
        (
            "GET",
            f"/v2/lineage/uniqueAttribute/type/{seg}",
            lambda r: lin.lineage_by_unique(r.state, r.params[0], r.query),
        ),
        ("GET", f"/v2/lineage/{seg}", lambda r: lin.lineage(r.state, r.params[0], r.query)),
        ("POST", f"/v2/lineage/{seg}", _lineage_on_demand),
        ("GET", "/v2/glossary/?", lambda r: gl.list_glossaries(r.state, r.query)),
        ("POST", "/v2/glossary/?", lambda r: gl.create_glossary(r.state, r.json())),
        ("POST", "/v2/glossary/term/?", lambda r: gl.create_term(r.state, r.json())),
        ("POST", "/v2/glossary/terms/?", lambda r: gl.create_terms(r.state, r.json())),
        ("POST", "/v2/glossary/category/?", lambda r: gl.create_category(r.state, r.json())),
        ("POST", "/v2/glossary/categories/?", lambda r: gl.create_categories(r.state, r.json())),
        ("GET", f"/v2/glossary/term/{seg}", lambda r: gl.get_term(r.state, r.params[0])),
        ("PUT", f"/v2/glossary/term/{seg}", lambda r: gl.update_term(r.state, r.params[0], r.json())),
        ("DELETE", f"/v2/glossary/term/{seg}", _no_content(lambda r: gl.delete_term(r.state, r.params[0]))),
        ("GET", f"/v2/glossary/category/{seg}", lambda r: gl.get_category(r.state, r.params[0])),
        ("PUT", f"/v2/glossary/category/{seg}", lambda r: gl.update_category(r.state, r.params[0], r.json())),
        (
            "DELETE",
            f"/v2/glossary/category/{seg}",
            _no_content(lambda r: gl.delete_category(r.state, r.params[0])),
        ),
        (
            "GET",
            f"/v2/glossary/terms/{seg}/assignedEntities",
            lambda r: gl.assigned_entities(r.state, r.params[0], r.query),
        ),
        (
            "POST",
            f"/v2/glossary/terms/{seg}/assignedEntities",
            _no_content(lambda r: gl.assign(r.state, r.params[0], r.json())),
        ),
        (
            "DELETE",
            f"/v2/glossary/terms/{seg}/assignedEntities",
            _no_content(lambda r: gl.dissociate(r.state, r.params[0], r.json())),
        ),
        (
            "PUT",
            f"/v2/glossary/terms/{seg}/assignedEntities",
            _no_content(lambda r: gl.dissociate(r.state, r.params[0], r.json())),
        ),
        ("GET", f"/v2/glossary/{seg}", lambda r: gl.get_glossary(r.state, r.params[0])),
        ("GET", f"/v2/glossary/{seg}/detailed", lambda r: gl.detailed_glossary(r.state, r.params[0])),
        ("GET", f"/v2/glossary/{seg}/terms", lambda r: gl.glossary_terms(r.state, r.params[0], r.query)),
        (
            "GET",
            f"/v2/glossary/{seg}/categories",
            lambda r: gl.glossary_categories(r.state, r.params[0], r.query),
        ),
        ("PUT", f"/v2/glossary/{seg}", lambda r: gl.update_glossary(r.state, r.params[0], r.json())),
        ("DELETE", f"/v2/glossary/{seg}", _no_content(lambda r: gl.delete_glossary(r.state, r.params[0]))),
        ("GET", f"/v2/relationship/guid/{seg}", _relationship_get),
        ("POST", "/v2/relationship/?", _relationship_create),
        ("PUT", "/v2/relationship/?", _relationship_update),
    ]
    return [(m, re.compile("^" + p + "$"), h) for m, p, h in table]


def _labels(r: Request, how: str) -> None:
    # Jackson reads an empty body as a null Set: POST clears the labels, PUT adds nothing
    body = r.json() if r.body.strip() else None
    tags.change_labels(r.state, r.params[0], body, how)


def _lineage_on_demand(r: Request) -> Any:
    raise AtlasApiError("ATLAS-400-00-100", "atlas.lineage.on.demand.enabled")
