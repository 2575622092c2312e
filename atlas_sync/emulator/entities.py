"""Entity endpoints (contract §3-§5): create-or-update, reads, deletes and purge.

Entities live in the ``entities`` table (non-relationship attributes as JSON); relationship attributes
(``inputs``/``outputs`` and every other relationshipDef end) live in ``relationships`` rows with their own
guid and status, so that soft-deleted edges stay visible the way Atlas shows them.
"""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas_sync.emulator.errors import AtlasApiError, BadJsonError, InternalError
from atlas_sync.emulator.glossary import meanings
from atlas_sync.emulator.repo import ACTIVE, DELETED, SYSTEM_FIELDS, Rel, Repo, Row, display_text, dump_json
from atlas_sync.emulator.tags import (
    all_classification_names,
    attach,
    labels_of,
    parse_classifications,
    rendered_classifications,
    validate_labels,
)
from atlas_sync.emulator.types import Attr, EntityType, RelEnd
from atlas_sync.emulator.values import InvalidValue, default_for, normalize_value, null_value, values_equal

if TYPE_CHECKING:
    from atlas_sync.emulator.state import State

_counter = itertools.count(1)


# ====================================================================== rendering
def header(
    repo: Repo, row: Row, extra_attrs: list[str] | None = None, *, classifications: bool = True
) -> dict[str, Any]:
    """``AtlasEntityHeader``: unique + name/description/owner/createTime attributes, null as "".

    ``classifications=False`` mirrors Atlas's plain ``toAtlasEntityHeader`` (search results, lineage maps,
    DELETE headers), which leaves ``classifications`` null and so out of the JSON; the ``…WithClassifications``
    variant (GET header, CREATE/UPDATE, PURGE) writes ``[]``."""
    et = repo.reg.entity(row.type_name)
    names = list(et.header) if et else ["qualifiedName"]
    for n in extra_attrs or []:
        if n not in names:
            names.append(n)
    terms = meanings(repo, row)
    attrs: dict[str, Any] = {}
    for n in names:
        value = row.attrs.get(n)
        if n in SYSTEM_FIELDS:  # asked for by name, Atlas gives system attributes too (2.1.0: seen)
            value = getattr(row, SYSTEM_FIELDS[n])
        elif et is not None and n in et.rels and n not in row.attrs:
            value = _rel_value(repo, row, et, n, header_only=True)
        if value is None and n not in (et.header if et else []):
            continue  # a requested extra attribute that is unset is left out (toAtlasEntityHeader)
        attrs[n] = "" if value is None else value
    out: dict[str, Any] = {
        "typeName": row.type_name,
        "attributes": attrs,
        "guid": row.guid,
        "status": row.status,
        "displayText": display_text(et, row),
        "classificationNames": all_classification_names(row),
        "meaningNames": [m.get("displayText") for m in terms],
        "meanings": terms,
        "isIncomplete": False,
        "labels": labels_of(row),
    }
    if classifications:
        out["classifications"] = rendered_classifications(row)
    if out["displayText"] is None:
        del out["displayText"]
    return out


def object_id(row: Row | None, guid: str, type_name: str | None = None) -> dict[str, Any]:
    if row is None:
        return {"guid": guid, "typeName": type_name}
    return {
        "guid": row.guid,
        "typeName": row.type_name,
        "uniqueAttributes": {"qualifiedName": row.qualified_name},
    }


def _rel_value(repo: Repo, row: Row, et: EntityType, name: str, *, header_only: bool = False) -> Any:
    ends = et.rels[name]
    items: list[dict[str, Any]] = []
    for end in ends:
        rels = repo.rels_for_attr(row.guid, end)
        others = repo.get_many([r.end2 if end.end == 1 else r.end1 for r in rels])
        for r in rels:
            other_guid = r.end2 if end.end == 1 else r.end1
            items.append(object_id(others.get(other_guid), other_guid, end.other_type))
    if ends[0].many:
        return items
    return items[-1] if items else None


def _object_id(repo: Repo, row: Row | None, guid: str) -> dict[str, Any]:
    if row is None and guid in repo.pending:
        type_name, qn = repo.pending[guid]
        return {"guid": guid, "typeName": type_name, "uniqueAttributes": {"qualifiedName": qn}}
    return object_id(row, guid)


def related_object(repo: Repo, rel: Rel, other: Row | None, other_guid: str, end: RelEnd) -> dict[str, Any]:
    et = repo.reg.entity(other.type_name) if other else None
    out: dict[str, Any] = {
        "guid": other_guid,
        "typeName": other.type_name if other else end.other_type,
        "entityStatus": other.status if other else DELETED,
    }
    if other is not None:
        text = display_text(et, other)
        if text is not None:
            out["displayText"] = text
    # key order as a real Atlas 2.4.0 writes it; relationshipType is filled (RL-002, seen on 2.4.0)
    out["relationshipType"] = rel.type_name
    out["relationshipGuid"] = rel.guid
    out["relationshipStatus"] = rel.status
    # AtlasStruct(typeName, relationship.getAttributes()): a relationship type without attributes leaves the
    # map null, so the JSON has no "attributes" key (seen on a real Atlas; EntityGraphRetriever 2.4.0)
    out["relationshipAttributes"] = {"typeName": rel.type_name}
    if other is not None and other.qualified_name is not None:
        out["qualifiedName"] = other.qualified_name
    return out


def render_entity(
    repo: Repo, row: Row, *, ignore_relationships: bool = False, min_ext_info: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """``AtlasEntity`` JSON plus the guids of owned (composition) children for ``referredEntities``."""
    et = repo.reg.entity(row.type_name)
    attrs: dict[str, Any] = {}
    rel_attrs: dict[str, Any] = {}
    owned: list[str] = []
    rels = repo.rels_of(row.guid) if et and et.rels else []
    other_rows = repo.get_many(sorted({r.end2 if r.end1 == row.guid else r.end1 for r in rels}))
    by_attr: dict[str, list[tuple[Rel, RelEnd, str]]] = {}
    if et is not None:
        for name, ends in et.rels.items():
            bucket = by_attr.setdefault(name, [])
            for end in ends:
                col_self = end.end
                for r in rels:
                    if r.type_name != end.rel_type:
                        continue
                    if (r.end1 if col_self == 1 else r.end2) != row.guid:
                        continue
                    bucket.append((r, end, r.end2 if col_self == 1 else r.end1))
                    if end.owned and r.status == ACTIVE:
                        owned.append(r.end2 if col_self == 1 else r.end1)
        for name, _attr in et.attrs.items():
            if name in et.rels:
                ids = [object_id(other_rows.get(g), g, e.other_type) for (_, e, g) in by_attr[name]]
                attrs[name] = ids if et.rels[name][0].many else (ids[-1] if ids else None)
            else:
                attrs[name] = row.attrs.get(name)
        if not ignore_relationships:
            for name, ends in et.rels.items():
                objs = [related_object(repo, r, other_rows.get(g), g, e) for (r, e, g) in by_attr[name]]
                rel_attrs[name] = objs if ends[0].many else (objs[-1] if objs else None)
    else:
        attrs = dict(row.attrs)
    entity: dict[str, Any] = {
        "typeName": row.type_name,
        "attributes": attrs,
        "guid": row.guid,
        "isIncomplete": False,
        "provenanceType": 0,
        "status": row.status,
        "createdBy": row.created_by,
        "updatedBy": row.updated_by,
        "createTime": row.create_time,
        "updateTime": row.update_time,
        "version": row.version,
        "proxy": False,
        "labels": labels_of(row),
    }
    if row.extra.get("classifications") or row.extra.get("propagated"):
        entity["classifications"] = rendered_classifications(row)
    if row.extra.get("businessAttributes"):
        entity["businessAttributes"] = {bm: dict(a) for bm, a in row.extra["businessAttributes"].items()}
    if not ignore_relationships:
        entity["relationshipAttributes"] = rel_attrs
    if row.extra.get("customAttributes"):
        entity["customAttributes"] = row.extra["customAttributes"]
    return entity, owned


def with_ext_info(
    repo: Repo, rows: list[Row], *, ignore_relationships: bool, min_ext_info: bool
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    entities = []
    referred: dict[str, Any] = {}
    pending: list[str] = []
    min_mapped: set[str] = set()
    for row in rows:
        if min_ext_info and row.guid in min_mapped:
            # a real 2.4.0 maps an owned child of an entity listed earlier in the same request only once,
            # in its minimal form, and returns that form in "entities" (seen on 2.4.0: a column asked for
            # after its dataset comes back with qualifiedName and name only, no relationshipAttributes)
            entities.append(_min_entity(repo, row))
            continue
        ent, owned = render_entity(repo, row, ignore_relationships=ignore_relationships)
        entities.append(ent)
        pending.extend(owned)
        if min_ext_info:
            min_mapped.update(owned)
    seen = {r.guid for r in rows}
    while pending:
        g = pending.pop(0)
        if g in seen:
            continue
        seen.add(g)
        child = repo.get(g)
        if child is None:
            continue
        if min_ext_info:
            h = header(repo, child)
            referred[g] = {
                k: v for k, v in h.items() if k not in ("classificationNames", "meaningNames", "meanings")
            }
        else:
            ent, owned = render_entity(repo, child, ignore_relationships=ignore_relationships)
            referred[g] = ent
            pending.extend(owned)
    return entities, referred


def _min_entity(repo: Repo, row: Row) -> dict[str, Any]:
    """The reduced entity a real 2.4.0 returns for an already min-mapped child (see with_ext_info)."""
    attrs = {k: row.attrs[k] for k in ("qualifiedName", "name") if row.attrs.get(k) is not None}
    return {
        "typeName": row.type_name,
        "attributes": attrs,
        "guid": row.guid,
        "isIncomplete": False,
        "status": row.status,
        "createdBy": row.created_by,
        "updatedBy": row.updated_by,
        "createTime": row.create_time,
        "updateTime": row.update_time,
        "version": row.version,
        "labels": [],
    }


# ====================================================================== writes
@dataclass
class ObjRef:
    guid: str | None
    type_name: str | None
    unique: dict[str, Any] | None
    relationship_type: str | None = None


def _parse_ref(value: Any) -> ObjRef:
    if isinstance(value, dict):
        guid = value.get("guid")
        tn = value.get("typeName")
        ua = value.get("uniqueAttributes")
        if isinstance(guid, str) and guid:
            return ObjRef(guid, tn, None, value.get("relationshipType"))
        if tn and isinstance(ua, dict) and ua:
            return ObjRef(None, str(tn), ua, value.get("relationshipType"))
        raise AtlasApiError(
            "ATLAS-400-00-021",
            _ref_text(
                ObjRef(guid if isinstance(guid, str) else None, tn, ua if isinstance(ua, dict) else None)
            ),
        )
    raise AtlasApiError("ATLAS-400-00-021", dump_json(value))


def _ref_text(ref: ObjRef) -> str:
    """``AtlasObjectId.toString()``, as Atlas quotes it in 400-00-021 and 404-00-00A messages."""
    ua = ", ".join(f"{k}:{v}" for k, v in (ref.unique or {}).items())
    guid = "null" if ref.guid is None else ref.guid
    tn = "null" if ref.type_name is None else ref.type_name
    return f"AtlasObjectId{{guid='{guid}', typeName='{tn}', uniqueAttributes={{{ua}}}}}"


def _java_text(value: Any) -> str:
    """``String.valueOf`` of a JSON value as Jackson hands it to Atlas (for validation messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_java_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_java_text(v)}" for k, v in value.items()) + "}"
    return str(value)


@dataclass
class Incoming:
    """One entity of a write request, after compaction."""

    sent_guid: str
    type: EntityType
    attrs: dict[str, Any]
    rel_attrs: dict[str, Any]
    custom: Any = None
    labels: list[str] | None = None
    classifications: list[dict[str, Any]] | None = None
    real_guid: str = ""
    existing: bool = False


@dataclass
class Mutations:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    assignments: dict[str, str] = field(default_factory=dict)
    # entities of the request itself; the others were only touched as the far end of a relationship
    main: set[str] = field(default_factory=set)

    _seen: set[tuple[str, str]] = field(default_factory=set)

    def note_create(self, guid: str) -> None:
        self.created.append(guid)
        self._seen.add(("C", guid))

    def note_update(self, guid: str, *, partial: bool = False, main: bool = False) -> None:
        if main:
            self.main.add(guid)
        if ("C", guid) in self._seen:
            return
        key = ("P" if partial else "U", guid)
        if key not in self._seen:
            self._seen.add(key)
            (self.partial if partial else self.updated).append(guid)


def _compact(et: EntityType, entity: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    attrs = entity.get("attributes") or {}
    rel_attrs = dict(entity.get("relationshipAttributes") or {})
    if not isinstance(attrs, dict) or not isinstance(rel_attrs, dict):
        raise BadJsonError("Cannot deserialize value of type `java.util.HashMap` from non-object value")
    plain: dict[str, Any] = {}
    for key, value in attrs.items():
        if key in et.rels:
            if value is not None and key not in rel_attrs:
                rel_attrs[key] = value
        else:
            plain[key] = value
    rel_attrs = {k: v for k, v in rel_attrs.items() if v is not None and k in et.rels}
    return plain, rel_attrs


def create_or_update(
    state: State, entities: Any, referred: Any = None, *, partial_guid: str | None = None
) -> dict[str, Any]:
    """POST /v2/entity and /v2/entity/bulk (and PUT by unique attribute when ``partial_guid`` is set)."""
    reg = state.registry
    if entities is None:
        raise InternalError("entities is null")
    if not isinstance(entities, list) or not all(isinstance(e, dict) for e in entities):
        raise BadJsonError(
            "Cannot deserialize value of type `java.util.ArrayList<AtlasEntity>` from non-array value"
        )
    if not entities:
        raise AtlasApiError("ATLAS-400-00-01A", "no entities to create/update.")
    referred = referred if isinstance(referred, dict) else {}
    repo = Repo(state)
    now = state.now()
    partial = partial_guid is not None

    # 1. parse, compact and collect the request's entities (referred ones only when referenced by guid)
    incoming: list[Incoming] = []
    by_sent: dict[str, Incoming] = {}

    def take(entity: dict[str, Any]) -> Incoming:
        tn = entity.get("typeName")
        et = reg.entity(str(tn)) if tn else None
        if et is None:
            raise AtlasApiError("ATLAS-400-00-014", "ENTITY", tn)
        if "guid" in entity:
            guid = entity["guid"]
            if not isinstance(guid, str) or not guid:
                raise AtlasApiError("ATLAS-400-00-021", _ref_text(ObjRef(None, tn, None)))
        else:
            guid = f"-{time.monotonic_ns()}{next(_counter)}"
        if partial_guid is not None:
            guid = partial_guid
        attrs, rel_attrs = _compact(et, entity)
        inc = Incoming(guid, et, attrs, rel_attrs, entity.get("customAttributes"))
        # AtlasEntityGraphDiscoveryV2 validates labels on every write; they and classifications are
        # applied when the entity is created (EntityGraphMapper), an update leaves both as they are
        inc.labels = validate_labels(entity.get("labels"))
        if entity.get("classifications"):
            inc.classifications = parse_classifications(state, entity["classifications"])
        incoming.append(inc)
        by_sent[guid] = inc
        return inc

    for entity in entities:
        take(entity)
    todo = list(incoming)
    while todo:
        inc = todo.pop()
        for ref in _refs_in(inc):
            if ref.guid and ref.guid not in by_sent and isinstance(referred.get(ref.guid), dict):
                todo.append(take(referred[ref.guid]))

    # 2. resolve each entity to an existing vertex (guid, else unique attributes among ACTIVE) or a new one
    pending_new: dict[tuple[str, str], str] = {}
    for inc in incoming:
        row = None
        if not inc.sent_guid.startswith("-"):
            row = repo.get(inc.sent_guid)
        if row is None:
            row = repo.find_active(inc.type.name, inc.attrs.get("qualifiedName"))
            if (
                row is not None
                and inc.sent_guid.startswith("-")
                and (
                    now - row.create_time < state.racing_creates_ms
                    or (inc.type.name, str(inc.attrs.get("qualifiedName"))) in state.unindexed
                )
            ):
                row = None  # created by a request still "in flight" for this one, or off the index: a second entity
            if row is None and not inc.sent_guid.startswith("-") and partial_guid is None:
                raise AtlasApiError("ATLAS-404-00-00A", inc.sent_guid)
        if row is not None:
            inc.real_guid, inc.existing = row.guid, True
        else:
            key = (inc.type.name, str(inc.attrs.get("qualifiedName")))
            inc.real_guid = pending_new.setdefault(key, str(uuid.uuid4()))
    guid_map = {inc.sent_guid: inc.real_guid for inc in incoming}
    for inc in incoming:
        if not inc.existing:
            repo.pending[inc.real_guid] = (inc.type.name, inc.attrs.get("qualifiedName"))

    # 3. resolve references: placeholders to this request, assigned guids to the store, unique attrs to ACTIVE
    resolved: dict[int, dict[str, list[tuple[str, ObjRef]]]] = {}
    for idx, inc in enumerate(incoming):
        per_attr: dict[str, list[tuple[str, ObjRef]]] = {}
        for name, value in inc.rel_attrs.items():
            per_attr[name] = [(_resolve_ref(repo, reg, guid_map, ref), ref) for ref in _as_refs(value)]
        for name, value in inc.attrs.items():
            attr = inc.type.attrs.get(name)
            if attr is not None and _is_ref_attr(attr) and value is not None:
                per_attr[name] = [(_resolve_ref(repo, reg, guid_map, ref), ref) for ref in _as_refs(value)]
        resolved[idx] = per_attr

    # 4. validate (full create/update: mandatory attributes; always: value types)
    for inc in incoming:
        _validate(reg, inc, partial=partial)

    # 5. apply in request order
    muts = Mutations()
    for idx, inc in enumerate(incoming):
        if inc.sent_guid != inc.real_guid:
            muts.assignments[inc.sent_guid] = inc.real_guid
        _apply(state, repo, inc, resolved[idx], muts, now, partial=partial)
    repo.flush()
    return mutation_response(repo, muts, include_assignments=True)


def _refs_in(inc: Incoming) -> list[ObjRef]:
    out: list[ObjRef] = []
    for value in inc.rel_attrs.values():
        out.extend(_as_refs(value))
    for name, value in inc.attrs.items():
        attr = inc.type.attrs.get(name)
        if attr is not None and _is_ref_attr(attr) and value is not None:
            out.extend(_as_refs(value))
    return out


def _is_ref_attr(attr: Attr) -> bool:
    return attr.kind in ("entity", "objectid") or (
        attr.kind == "array" and attr.elem_kind in ("entity", "objectid")
    )


def _as_refs(value: Any) -> list[ObjRef]:
    if isinstance(value, list):
        return [_parse_ref(v) for v in value if v is not None]
    return [_parse_ref(value)]


def _resolve_ref(repo: Repo, reg: Any, guid_map: dict[str, str], ref: ObjRef) -> str:
    if ref.guid:
        if ref.guid in guid_map:
            return guid_map[ref.guid]
        if not ref.guid.startswith("-") and repo.get(ref.guid) is not None:
            return ref.guid
        raise AtlasApiError("ATLAS-404-00-00A", ref.guid)
    assert ref.type_name is not None and ref.unique is not None
    if reg.entity(ref.type_name) is None:
        raise AtlasApiError("ATLAS-400-00-014", "ENTITY", ref.type_name)
    row = repo.find_by_unique(ref.type_name, ref.unique)
    if (ref.type_name, str(ref.unique.get("qualifiedName"))) in repo.state.unindexed:
        row = None  # off Atlas's unique index (see State.unindexed)
    if row is None:
        raise AtlasApiError("ATLAS-404-00-00A", _ref_text(ref))
    return row.guid


def _validate(reg: Any, inc: Incoming, *, partial: bool) -> None:
    et = inc.type
    messages: list[str] = []
    for name, attr in et.attrs.items():
        present = inc.attrs.get(name) if name not in et.rels else inc.rel_attrs.get(name)
        if present is None and not attr.optional and not partial and name not in et.rels:
            messages.append(f"{et.name}.{name}: mandatory attribute value missing in type {attr.declaring}")
            continue
        if name in inc.attrs and inc.attrs[name] is not None and not _is_ref_attr(attr):
            try:
                inc.attrs[name] = normalize_value(reg, attr.type_name, inc.attrs[name])
            except InvalidValue:
                value_text = _java_text(inc.attrs[name])
                messages.append(f"{et.name}.{name}={value_text}: invalid value for type {attr.type_name}")
    if not partial:
        for name, ends in et.rels.items():
            if not any(e.mandatory for e in ends):
                continue
            if inc.rel_attrs.get(name) is None and inc.attrs.get(name) is None:
                # (as Atlas 2.1.0 says it of an rdbms_table without db)
                messages.append(f"{et.name}.{name}: mandatory attribute value missing in type {et.name}")
    if messages:
        # AtlasBaseException(code, List<String>) passes each message as a separate MessageFormat
        # argument and the template uses only {0}: the first problem alone is reported
        raise AtlasApiError("ATLAS-404-00-007", messages[0])


def _apply(
    state: State,
    repo: Repo,
    inc: Incoming,
    refs: dict[str, list[tuple[str, ObjRef]]],
    muts: Mutations,
    now: int,
    *,
    partial: bool,
) -> None:
    et = inc.type
    reg = repo.reg
    row = repo.get(inc.real_guid) if inc.existing or ("C", inc.real_guid) in muts._seen else None
    creating = row is None
    if row is None:
        row = Row(
            guid=inc.real_guid,
            type_name=et.name,
            status=ACTIVE,
            attrs={},
            created_by=state.user,
            updated_by=state.user,
            create_time=now,
            update_time=now,
            new=True,
        )
        for name, declared in et.attrs.items():
            if name not in et.rels:
                row.attrs[name] = default_for(reg, declared)
        repo.rows[row.guid] = row
    changed = creating
    if state.unindexed and (creating or inc.attrs.get("qualifiedName") != row.qualified_name):
        state.unindexed.discard((et.name, str(inc.attrs.get("qualifiedName"))))  # the index names it again
    # plain attributes: only keys present are written
    for name, value in inc.attrs.items():
        attr = et.attrs.get(name)
        if attr is None:
            continue  # unknown attributes are ignored
        if _is_ref_attr(attr):
            new_value: Any = None
            if value is not None:
                targets = repo.get_many([g for g, _ in refs.get(name, [])])
                ids = [_object_id(repo, targets.get(g), g) for g, _ in refs.get(name, [])]
                new_value = ids if attr.kind == "array" else (ids[0] if ids else None)
        elif value is None:
            new_value = default_for(reg, attr) if attr.has_default else null_value(attr)
        else:
            new_value = value
        if creating or not values_equal(attr, row.attrs.get(name), new_value):
            row.attrs[name] = new_value
            changed = True
    if inc.custom is not None and inc.custom != row.extra.get("customAttributes"):
        row.extra["customAttributes"] = inc.custom
        changed = True
    # relationship attributes: replace as a set
    for name in inc.rel_attrs:
        if _apply_rel(repo, row, et, name, refs.get(name, []), muts, now, creating=creating):
            changed = True
    if creating:
        if inc.labels:
            row.extra["labels"] = inc.labels
        if inc.classifications:
            attach(state, row, inc.classifications)
        muts.note_create(row.guid)
    elif changed:
        row.updated_by = state.user
        row.update_time = now
        row.dirty = True
        muts.note_update(row.guid, partial=partial, main=True)


def _apply_rel(
    repo: Repo,
    row: Row,
    et: EntityType,
    name: str,
    targets: list[tuple[str, ObjRef]],
    muts: Mutations,
    now: int,
    *,
    creating: bool,
) -> bool:
    ends = et.rels[name]
    end = ends[0]
    chosen = {ref.relationship_type for _, ref in targets if ref.relationship_type}
    if chosen:
        end = next((e for e in ends if e.rel_type in chosen), end)
    target_rows = repo.get_many([g for g, _ in targets])
    # the referenced entities must fit the relationship's other end
    for g, _ in targets:
        trow = target_rows.get(g)
        target_type = trow.type_name if trow else repo.pending.get(g, ("null", None))[0]
        tet = repo.reg.entity(target_type)
        if tet is None or not tet.is_a(end.other_type):
            raise AtlasApiError("ATLAS-400-00-036", end.rel_type, end.other_type, target_type)
    history = [] if creating else repo.rels_for_attr(row.guid, end)  # every edge, any state, oldest first
    current = [r for r in history if r.status == ACTIVE]

    def other_of(r: Rel) -> str:
        return r.end2 if end.end == 1 else r.end1

    current_other = {other_of(r): r for r in current}
    wanted: list[str] = []
    for g, _ in targets:
        if g not in wanted:
            wanted.append(g)
    if not end.many:
        wanted = wanted[-1:]
    changed = False
    # a reference by uniqueAttributes whose typeName is not the target's concrete type never compares equal
    for g, ref in targets:
        trow = target_rows.get(g)
        if ref.guid is None and trow is not None and ref.type_name != trow.type_name:
            changed = True
    if set(current_other) == set(wanted):
        return changed  # the same ACTIVE set: nothing is written
    if not end.many:
        for r in current:
            if other_of(r) not in wanted:
                repo.set_rel_status([r.guid], DELETED, now)
        for g in wanted:
            if g not in current_other:
                _new_edge(repo, row, end, g, muts, now)
        return True
    # Atlas 2.4.0 EntityGraphMapper.mapArrayValue, as observed on a real 2.4.0 (RL-006, RL-010): element i
    # of the new list reuses the attribute's i-th stored edge when that edge points at the same entity,
    # whatever its state, so a DELETED edge stays DELETED (a removed input re-added at its old position
    # does not come back). Otherwise an ACTIVE edge to that entity is reused, else a new edge is made; the
    # far end of a reused or new edge is reported as UPDATE. ACTIVE edges not reused are soft-deleted, and
    # their far ends are not reported. (Edges are taken in creation order; a real server's order can
    # differ once an attribute holds two edges to one entity.)
    kept: set[str] = set()
    for i, g in enumerate(wanted):
        if i < len(history) and other_of(history[i]) == g and history[i].guid not in kept:
            kept.add(history[i].guid)
            continue
        active = current_other.get(g)
        if active is not None and active.guid not in kept:
            kept.add(active.guid)
            if g != row.guid:
                muts.note_update(g)
            continue
        _new_edge(repo, row, end, g, muts, now)
    removed = [r.guid for r in current if r.guid not in kept]
    if removed:
        repo.set_rel_status(removed, DELETED, now)
    return True


def _new_edge(repo: Repo, row: Row, end: RelEnd, g: str, muts: Mutations, now: int) -> None:
    if end.end == 1:
        repo.add_rel(end.rel_type, row.guid, g, now)
    else:
        repo.add_rel(end.rel_type, g, row.guid, now)
    if g != row.guid:
        muts.note_update(g)


def create_relationship(state: State, body: Any) -> tuple[str, str, str, str, int]:
    """POST /v2/relationship: a new ACTIVE edge between two existing entities.

    Returns (relationship guid, type, end1 guid, end2 guid, time). A real 2.4.0 makes the new edge even when a
    DELETED one joins the same entities, which is how a re-added input that stayed DELETED (RL-010) comes
    back ACTIVE; an ACTIVE duplicate is 409 ATLAS-409-00-004. Neither end entity is updated.
    """
    if not isinstance(body, dict):
        raise BadJsonError("Cannot deserialize value of type `AtlasRelationship` from non-object value")
    reg = state.registry
    type_name = body.get("typeName")
    rdef = reg.defs.get(type_name) if isinstance(type_name, str) else None
    if rdef is None or rdef.get("category") != "RELATIONSHIP":
        raise AtlasApiError("ATLAS-400-00-028", f"unknown relationship type'{type_name}'")
    repo = Repo(state)
    g1 = _resolve_ref(repo, reg, {}, _parse_ref(body.get("end1")))
    g2 = _resolve_ref(repo, reg, {}, _parse_ref(body.get("end2")))
    rows = repo.get_many([g1, g2])
    t1, t2 = (reg.entity(rows[g].type_name) for g in (g1, g2))
    d1, d2 = (str((rdef.get(k) or {}).get("type")) for k in ("endDef1", "endDef2"))

    def fits(a: EntityType | None, b: EntityType | None) -> bool:
        return a is not None and b is not None and a.is_a(d1) and b.is_a(d2)

    # a real 2.4.0 also accepts the ends the other way round (seen: DataSet as end1 of
    # dataset_process_inputs); the error for ends of wrong types is not checked against a real server
    if not (fits(t1, t2) or fits(t2, t1)):
        raise AtlasApiError("ATLAS-400-00-036", type_name, d1 if not fits(t1, t2) else d2, rows[g1].type_name)
    for r in repo.rels_of(g1):
        if r.type_name == type_name and r.status == ACTIVE and (r.end1, r.end2) == (g1, g2):
            raise AtlasApiError("ATLAS-409-00-004", type_name, g1, g2)
    now = state.now()
    guid = repo.add_rel(str(type_name), g1, g2, now)
    return guid, str(type_name), g1, g2, now


def mutation_response(repo: Repo, muts: Mutations, *, include_assignments: bool) -> dict[str, Any]:
    mutated: dict[str, list[dict[str, Any]]] = {}
    created = set(muts.created)
    updated = [g for g in muts.updated if g not in created]
    partial = [g for g in muts.partial if g not in created]
    for key, guids in (("CREATE", muts.created), ("UPDATE", updated), ("PARTIAL_UPDATE", partial)):
        rows = repo.get_many(guids)
        # far-end entities are recorded with a plain toAtlasEntityHeader (no classifications key); the
        # request's own entities with toAtlasEntityHeaderWithClassifications (EntityGraphMapper.constructHeader)
        headers = [
            header(repo, rows[g], classifications=key == "CREATE" or g in muts.main)
            for g in guids
            if g in rows
        ]
        if headers:
            mutated[key] = headers
    out: dict[str, Any] = {}
    if mutated:
        out["mutatedEntities"] = mutated
        if "PARTIAL_UPDATE" in mutated:
            # EntityMutationResponse.getPartialUpdatedEntities() has no @JsonIgnore (2.1 through 2.4)
            out["partialUpdatedEntities"] = mutated["PARTIAL_UPDATE"]
    if include_assignments:
        out["guidAssignments"] = muts.assignments
    return out


# ====================================================================== deletes and purge
def delete_guids(state: State, guids: list[str]) -> dict[str, Any]:
    """Soft delete (idempotent). The response lists DELETE only: a real Atlas 2.4.0 (and 2.1.0) does not
    report the far ends of the removed relationships as UPDATE, e.g. a deleted process's datasets (DL-011)."""
    repo = Repo(state)
    now = state.now()
    deleted: list[dict[str, Any]] = []
    deleted_guids: list[str] = []
    queue = list(dict.fromkeys(guids))
    while queue:
        g = queue.pop(0)
        row = repo.get(g)
        if row is None or row.status != ACTIVE or g in deleted_guids:
            continue
        deleted.append(header(repo, row, classifications=False))
        deleted_guids.append(g)
        et = repo.reg.entity(row.type_name)
        rels = [r for r in repo.rels_of(g) if r.status == ACTIVE]
        for r in rels:
            if et is not None and _owns(et, r, g):
                queue.append(r.end2 if r.end1 == g else r.end1)
        if rels:
            repo.set_rel_status([r.guid for r in rels], DELETED, now)
        # Atlas's unique index holds one entry per name: the delete of one of two copies takes it
        if (
            state.racing_index_loss
            and row.qualified_name is not None
            and any(c.guid != g for c in repo.active_copies(row.type_name, row.qualified_name))
        ):
            state.unindexed.add((row.type_name, row.qualified_name))
        row.status = DELETED
        row.updated_by = state.user
        row.update_time = now
        row.dirty = True
    repo.flush()
    if not deleted:
        return {}
    return {"mutatedEntities": {"DELETE": deleted}}


def _owns(et: EntityType, rel: Rel, guid: str) -> bool:
    for ends in et.rels.values():
        for end in ends:
            if (
                end.owned
                and end.rel_type == rel.type_name
                and (rel.end1 if end.end == 1 else rel.end2) == guid
            ):
                return True
    return False


def purge(state: State, guids: list[str]) -> dict[str, Any]:
    """PUT /admin/purge: hard-delete entities that are already DELETED; others silently ignored."""
    repo = Repo(state)
    purged = []
    for g in dict.fromkeys(guids):
        row = repo.get(g)
        if row is None or row.status != DELETED:
            continue
        purged.append(header(repo, row))
        state.store.conn.execute("DELETE FROM relationships WHERE end1=? OR end2=?", (g, g))
        state.store.conn.execute("DELETE FROM entities WHERE guid=?", (g,))
        repo.rows[g] = None
    return {"mutatedEntities": {"PURGE": purged}} if purged else {}
