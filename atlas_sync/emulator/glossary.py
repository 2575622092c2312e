"""The glossary REST API (``GlossaryREST`` / ``GlossaryService``, Atlas 2.1 and 2.4).

Glossaries, terms and categories are entities of Atlas's own types (``AtlasGlossary``, ``AtlasGlossaryTerm``,
``AtlasGlossaryCategory``), so they are reachable by unique attribute like any entity: a term's
qualifiedName is ``name@glossary`` and follows a rename (seen on a real 2.1.0), a nested category's is
``child.parent@glossary``. Their links are rows of Atlas's glossary
relationship types (anchor, categorization, hierarchy, term relations, ``AtlasGlossarySemanticAssignment``),
so an entity's ``relationshipAttributes.meanings`` and its header's ``meanings`` come from the same rows.
Deletes are soft, as ``DataAccess.delete`` is under Atlas's default delete handler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atlas_sync.emulator.errors import AtlasApiError, BadJsonError
from atlas_sync.emulator.repo import ACTIVE, DELETED, Rel, Repo, Row, display_text

if TYPE_CHECKING:
    from atlas_sync.emulator.state import State

GLOSSARY = "AtlasGlossary"
TERM = "AtlasGlossaryTerm"
CATEGORY = "AtlasGlossaryCategory"
TERM_ANCHOR = "AtlasGlossaryTermAnchor"
CATEGORY_ANCHOR = "AtlasGlossaryCategoryAnchor"
HIERARCHY = "AtlasGlossaryCategoryHierarchyLink"
CATEGORIZATION = "AtlasGlossaryTermCategorization"
ASSIGNMENT = "AtlasGlossarySemanticAssignment"

# AtlasGlossaryTerm.Relation: JSON field -> (relationship type, the end this term is on)
TERM_RELATIONS: dict[str, tuple[str, int]] = {
    "seeAlso": ("AtlasGlossaryRelatedTerm", 0),
    "synonyms": ("AtlasGlossarySynonym", 0),
    "antonyms": ("AtlasGlossaryAntonym", 0),
    "preferredTerms": ("AtlasGlossaryPreferredTerm", 1),
    "preferredToTerms": ("AtlasGlossaryPreferredTerm", 2),
    "replacedBy": ("AtlasGlossaryReplacementTerm", 1),
    "replacementTerms": ("AtlasGlossaryReplacementTerm", 2),
    "translatedTerms": ("AtlasGlossaryTranslation", 1),
    "translationTerms": ("AtlasGlossaryTranslation", 2),
    "classifies": ("AtlasGlossaryIsARelationship", 1),
    "isA": ("AtlasGlossaryIsARelationship", 2),
    "validValuesFor": ("AtlasGlossaryValidValue", 1),
    "validValues": ("AtlasGlossaryValidValue", 2),
}
_COMMON = ("shortDescription", "longDescription", "additionalAttributes")
_OWN_ATTRS = {
    GLOSSARY: (*_COMMON, "language", "usage"),
    TERM: (*_COMMON, "examples", "abbreviation", "usage"),
    CATEGORY: _COMMON,
}


def _invalid_name(name: Any) -> bool:
    return isinstance(name, str) and ("@" in name or "." in name)  # GlossaryUtils.invalidNameChars


def _object(body: Any, what: str) -> dict[str, Any]:
    if body is None:
        raise AtlasApiError("ATLAS-400-00-029", f"{what} definition missing")
    if not isinstance(body, dict):
        raise BadJsonError(f"Cannot deserialize value of type `{what}` from non-object value")
    return body


def _load(repo: Repo, guid: Any, type_name: str) -> Row:
    row = repo.get(str(guid)) if isinstance(guid, str) and guid else None
    if row is None or row.type_name != type_name or row.status != ACTIVE:
        raise AtlasApiError("ATLAS-404-00-005", guid)
    return row


def _new_row(state: State, repo: Repo, type_name: str, attrs: dict[str, Any]) -> Row:
    import uuid

    now = state.now()
    row = Row(
        guid=str(uuid.uuid4()),
        type_name=type_name,
        status=ACTIVE,
        attrs=attrs,
        created_by=state.user,
        updated_by=state.user,
        create_time=now,
        update_time=now,
        new=True,
    )
    repo.rows[row.guid] = row
    repo.flush()
    return row


def _own_attrs(type_name: str, body: dict[str, Any]) -> dict[str, Any]:
    out = {"name": body.get("name")}
    for key in _OWN_ATTRS[type_name]:
        if body.get(key) is not None:
            out[key] = body[key]
    return out


def _save(state: State, repo: Repo, row: Row, body: dict[str, Any]) -> None:
    attrs = {"qualifiedName": row.attrs.get("qualifiedName"), **_own_attrs(row.type_name, body)}
    if attrs != row.attrs:
        row.attrs = attrs
        row.updated_by = state.user
        row.update_time = state.now()
        row.dirty = True
        repo.flush()


def _active_rels(repo: Repo, guid: str, type_name: str, end: int) -> list[Rel]:
    """Active rows of one relationship type with ``guid`` at ``end`` (1 or 2; 0: either)."""
    return [
        r
        for r in repo.rels_of(guid)
        if r.type_name == type_name
        and r.status == ACTIVE
        and (end == 0 or (r.end1 if end == 1 else r.end2) == guid)
    ]


def _other(rel: Rel, guid: str) -> str:
    return rel.end2 if rel.end1 == guid else rel.end1


def _drop(state: State, repo: Repo, rels: list[Rel]) -> None:
    if rels:
        repo.set_rel_status([r.guid for r in rels], DELETED, state.now())


def _name_of(repo: Repo, guid: str) -> Any:
    row = repo.get(guid)
    return None if row is None else row.attrs.get("name")


def _qn_exists(repo: Repo, type_name: str, qn: str, but: str | None = None) -> bool:
    row = repo.find_active(type_name, qn, subtypes=False)
    return row is not None and row.guid != but


def _anchor_guid(repo: Repo, row: Row) -> str | None:
    rel_type = TERM_ANCHOR if row.type_name == TERM else CATEGORY_ANCHOR
    rels = _active_rels(repo, row.guid, rel_type, 2)
    return rels[-1].end1 if rels else None


def _anchor_of(repo: Repo, body: dict[str, Any]) -> Row:
    anchor = body.get("anchor")
    if not isinstance(anchor, dict) or not anchor.get("glossaryGuid"):
        raise AtlasApiError("ATLAS-400-00-072")
    return _load(repo, anchor["glossaryGuid"], GLOSSARY)


# ---------------------------------------------------------------------------------------------- render
def _display(repo: Repo, row: Row) -> Any:
    return display_text(repo.reg.entity(row.type_name), row)


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    """Jackson's NON_NULL: null fields are left out."""
    return {k: v for k, v in d.items() if v is not None}


def render_glossary(repo: Repo, row: Row) -> dict[str, Any]:
    out = {
        "guid": row.guid,
        "qualifiedName": row.attrs.get("qualifiedName"),
        **_own_attrs(GLOSSARY, row.attrs),
    }
    terms = [
        {"termGuid": r.end2, "relationGuid": r.guid, "displayText": _name_of(repo, r.end2)}
        for r in _active_rels(repo, row.guid, TERM_ANCHOR, 1)
    ]
    cats = []
    for r in _active_rels(repo, row.guid, CATEGORY_ANCHOR, 1):
        parent = _active_rels(repo, r.end2, HIERARCHY, 2)
        cats.append(
            _clean(
                {
                    "categoryGuid": r.end2,
                    "parentCategoryGuid": parent[-1].end1 if parent else None,
                    "relationGuid": r.guid,
                    "displayText": _name_of(repo, r.end2),
                }
            )
        )
    out["terms"] = terms or None
    out["categories"] = cats or None
    return _clean(out)


def _glossary_header(repo: Repo, row: Row, rel_type: str) -> dict[str, Any] | None:
    rels = _active_rels(repo, row.guid, rel_type, 2)
    if not rels:
        return None
    return {
        "glossaryGuid": rels[-1].end1,
        "relationGuid": rels[-1].guid,
        "displayText": _name_of(repo, rels[-1].end1),
    }


def render_term(repo: Repo, row: Row) -> dict[str, Any]:
    out: dict[str, Any] = {
        "guid": row.guid,
        "qualifiedName": row.attrs.get("qualifiedName"),
        **_own_attrs(TERM, row.attrs),
        "anchor": _glossary_header(repo, row, TERM_ANCHOR),
    }
    cats = [
        {"categoryGuid": r.end1, "relationGuid": r.guid, "displayText": _name_of(repo, r.end1)}
        for r in _active_rels(repo, row.guid, CATEGORIZATION, 2)
    ]
    out["categories"] = cats or None
    for field, (rel_type, end) in TERM_RELATIONS.items():
        items = [
            {
                "termGuid": _other(r, row.guid),
                "relationGuid": r.guid,
                "displayText": _name_of(repo, _other(r, row.guid)),
            }
            for r in _active_rels(repo, row.guid, rel_type, end)
        ]
        out[field] = items or None
    assigned = []
    for r in _active_rels(repo, row.guid, ASSIGNMENT, 1):
        other = repo.get(r.end2)
        if other is None:
            continue
        assigned.append(
            _clean(
                {
                    "guid": other.guid,
                    "typeName": other.type_name,
                    "entityStatus": other.status,
                    "displayText": _display(repo, other),
                    "relationshipType": ASSIGNMENT,
                    "relationshipGuid": r.guid,
                    "relationshipStatus": r.status,
                }
            )
        )
    out["assignedEntities"] = assigned or None
    return _clean(out)


def render_category(repo: Repo, row: Row) -> dict[str, Any]:
    parent = _active_rels(repo, row.guid, HIERARCHY, 2)
    children = _active_rels(repo, row.guid, HIERARCHY, 1)
    terms = _active_rels(repo, row.guid, CATEGORIZATION, 1)
    out: dict[str, Any] = {
        "guid": row.guid,
        "qualifiedName": row.attrs.get("qualifiedName"),
        **_own_attrs(CATEGORY, row.attrs),
        "anchor": _glossary_header(repo, row, CATEGORY_ANCHOR),
        "parentCategory": {
            "categoryGuid": parent[-1].end1,
            "relationGuid": parent[-1].guid,
            "displayText": _name_of(repo, parent[-1].end1),
        }
        if parent
        else None,
        "childrenCategories": [
            {
                "categoryGuid": r.end2,
                "parentCategoryGuid": row.guid,
                "relationGuid": r.guid,
                "displayText": _name_of(repo, r.end2),
            }
            for r in children
        ]
        or None,
        "terms": [
            {"termGuid": r.end2, "relationGuid": r.guid, "displayText": _name_of(repo, r.end2)} for r in terms
        ]
        or None,
    }
    return _clean(out)


def meanings(repo: Repo, row: Row) -> list[dict[str, Any]]:
    """``AtlasTermAssignmentHeader`` list of an entity header (``EntityGraphRetriever.mapAssignedTerms``)."""
    if not _any_assignment(repo):
        return []  # one query per request, not one per header (listings render thousands)
    out = []
    for r in _active_rels(repo, row.guid, ASSIGNMENT, 2):
        out.append(
            _clean(
                {
                    "termGuid": r.end1,
                    "relationGuid": r.guid,
                    "displayText": _name_of(repo, r.end1),
                    "confidence": 0,
                }
            )
        )
    return out


def _any_assignment(repo: Repo) -> bool:
    if "assignments" not in repo.flags:
        found = repo.conn.execute(
            "SELECT 1 FROM relationships WHERE type_name=? AND status='ACTIVE' LIMIT 1", (ASSIGNMENT,)
        ).fetchone()
        repo.flags["assignments"] = found is not None
    return repo.flags["assignments"]


# ---------------------------------------------------------------------------------------------- paging
def _page(items: list[Any], query: dict[str, list[str]]) -> list[Any]:
    """``GlossaryService.PaginationHelper``: negative limit means all; ``sort`` DESC reverses."""

    def num(name: str, default: int) -> int:
        try:
            return int((query.get(name) or [str(default)])[0])
        except ValueError:
            return default

    if (query.get("sort") or ["ASC"])[0].upper() == "DESC":
        items = list(reversed(items))
    limit, offset = num("limit", -1), max(0, num("offset", 0))
    if offset > len(items):
        return []
    end = len(items) if limit < 0 else min(len(items), offset + limit)
    return items[offset:end]


def _by_name(repo: Repo, guids: list[str]) -> list[Row]:
    rows = [r for g in guids if (r := repo.get(g)) is not None and r.status == ACTIVE]
    return sorted(rows, key=lambda r: str(r.attrs.get("name") or ""))


# ---------------------------------------------------------------------------------------------- glossaries
def list_glossaries(state: State, query: dict[str, list[str]]) -> list[dict[str, Any]]:
    repo = Repo(state)
    guids = [
        r[0]
        for r in state.store.conn.execute(
            "SELECT guid FROM entities WHERE type_name=? AND status='ACTIVE' ORDER BY seq", (GLOSSARY,)
        )
    ]
    return [render_glossary(repo, row) for row in _page(_by_name(repo, guids), query)]


def create_glossary(state: State, body: Any) -> dict[str, Any]:
    body = _object(body, "AtlasGlossary")
    repo = Repo(state)
    qn = body.get("qualifiedName")
    if not qn:
        if not body.get("name"):
            raise AtlasApiError("ATLAS-400-00-079")
        if _invalid_name(body["name"]):
            raise AtlasApiError("ATLAS-400-00-083")
        qn = body["name"]
    if _qn_exists(repo, GLOSSARY, str(qn)):
        raise AtlasApiError("ATLAS-409-00-007", qn)
    row = _new_row(state, repo, GLOSSARY, {"qualifiedName": qn, **_own_attrs(GLOSSARY, body)})
    return render_glossary(repo, row)


def get_glossary(state: State, guid: str) -> dict[str, Any]:
    repo = Repo(state)
    return render_glossary(repo, _load(repo, guid, GLOSSARY))


def detailed_glossary(state: State, guid: str) -> dict[str, Any]:
    repo = Repo(state)
    row = _load(repo, guid, GLOSSARY)
    out = render_glossary(repo, row)
    out["termInfo"] = {
        t["termGuid"]: render_term(repo, _load(repo, t["termGuid"], TERM)) for t in out.get("terms", [])
    }
    out["categoryInfo"] = {
        c["categoryGuid"]: render_category(repo, _load(repo, c["categoryGuid"], CATEGORY))
        for c in out.get("categories", [])
    }
    return out


def _check_name(body: dict[str, Any]) -> None:
    if not body.get("name"):
        raise AtlasApiError("ATLAS-400-00-029", "DisplayName can't be null/empty")
    if _invalid_name(body["name"]):
        raise AtlasApiError("ATLAS-400-00-083")


def update_glossary(state: State, guid: str, body: Any) -> dict[str, Any]:
    body = _object(body, "AtlasGlossary")
    _check_name(body)
    repo = Repo(state)
    row = _load(repo, guid, GLOSSARY)
    _save(state, repo, row, body)  # the qualifiedName stays (updateGlossary)
    return render_glossary(repo, row)


def _soft_delete(state: State, repo: Repo, row: Row) -> None:
    _drop(state, repo, [r for r in repo.rels_of(row.guid) if r.status == ACTIVE])
    row.status = DELETED
    row.updated_by = state.user
    row.update_time = state.now()
    row.dirty = True
    repo.flush()


def delete_glossary(state: State, guid: str) -> None:
    repo = Repo(state)
    row = _load(repo, guid, GLOSSARY)
    for r in _active_rels(repo, row.guid, TERM_ANCHOR, 1):
        delete_term(state, r.end2, repo)
    for r in _active_rels(repo, row.guid, CATEGORY_ANCHOR, 1):
        category = repo.get(r.end2)
        if category is not None and category.status == ACTIVE:
            _soft_delete(state, repo, category)
    _soft_delete(state, repo, row)


def glossary_terms(state: State, guid: str, query: dict[str, list[str]]) -> list[dict[str, Any]]:
    repo = Repo(state)
    row = _load(repo, guid, GLOSSARY)
    terms = _by_name(repo, [r.end2 for r in _active_rels(repo, row.guid, TERM_ANCHOR, 1)])
    return [render_term(repo, t) for t in _page(terms, query)]


def glossary_categories(state: State, guid: str, query: dict[str, list[str]]) -> list[dict[str, Any]]:
    repo = Repo(state)
    row = _load(repo, guid, GLOSSARY)
    cats = _by_name(repo, [r.end2 for r in _active_rels(repo, row.guid, CATEGORY_ANCHOR, 1)])
    return [render_category(repo, c) for c in _page(cats, query)]


# ---------------------------------------------------------------------------------------------- terms
def _related_guids(repo: Repo, items: Any, self_guid: str, field: str) -> list[str]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise BadJsonError(f"Cannot deserialize value of type `java.util.HashSet` for {field}")
    out = []
    for h in items:
        g = h.get("termGuid") if isinstance(h, dict) else None
        if g == self_guid:
            raise AtlasApiError("ATLAS-400-00-07E")
        _load(repo, g, TERM)
        out.append(str(g))
    return list(dict.fromkeys(out))


def _set_links(state: State, repo: Repo, row: Row, rel_type: str, end: int, wanted: list[str]) -> None:
    """Make the active rows of one relation of ``row`` link exactly ``wanted`` (processTermRelations);
    ``end`` is the end ``row`` is on (0: either, new rows put it at end 1)."""
    have = _active_rels(repo, row.guid, rel_type, end)
    have_guids = {_other(r, row.guid): r for r in have}
    _drop(state, repo, [r for g, r in have_guids.items() if g not in wanted])
    now = state.now()
    for g in wanted:
        if g in have_guids:
            continue
        if end == 2:
            repo.add_rel(rel_type, g, row.guid, now)
        else:
            repo.add_rel(rel_type, row.guid, g, now)


def _term_links(state: State, repo: Repo, row: Row, body: dict[str, Any]) -> None:
    for field, (rel_type, end) in TERM_RELATIONS.items():
        # end 0: a symmetric relation (both ends named alike), a link made from either side counts
        _set_links(state, repo, row, rel_type, end, _related_guids(repo, body.get(field), row.guid, field))
    cats = []
    for h in body.get("categories") or []:
        g = h.get("categoryGuid") if isinstance(h, dict) else None
        if not g:
            raise AtlasApiError("ATLAS-400-00-076")
        _load(repo, g, CATEGORY)
        cats.append(str(g))
    _set_links(state, repo, row, CATEGORIZATION, 2, list(dict.fromkeys(cats)))


def create_term(state: State, body: Any) -> dict[str, Any]:
    body = _object(body, "AtlasGlossaryTerm")
    repo = Repo(state)
    glossary = _anchor_of(repo, body)
    if not body.get("name"):
        raise AtlasApiError("ATLAS-400-00-07A")
    if _invalid_name(body["name"]):
        raise AtlasApiError("ATLAS-400-00-083")
    qn = f"{body['name']}@{glossary.attrs.get('qualifiedName')}"
    if _qn_exists(repo, TERM, qn):
        raise AtlasApiError("ATLAS-409-00-009", qn)
    row = _new_row(state, repo, TERM, {"qualifiedName": qn, **_own_attrs(TERM, body)})
    repo.add_rel(TERM_ANCHOR, glossary.guid, row.guid, state.now())
    _term_links(state, repo, row, body)
    return render_term(repo, row)


def create_terms(state: State, body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, list) or not body:
        raise AtlasApiError("ATLAS-400-00-029", "glossaryTerm(s) is null/empty")
    return [create_term(state, t) for t in body]


def get_term(state: State, guid: str) -> dict[str, Any]:
    repo = Repo(state)
    return render_term(repo, _load(repo, guid, TERM))


def update_term(state: State, guid: str, body: Any) -> dict[str, Any]:
    body = _object(body, "AtlasGlossaryTerm")
    _check_name(body)
    repo = Repo(state)
    row = _load(repo, guid, TERM)
    glossary = _anchor_of(repo, body)
    _save(state, repo, row, body)
    # the qualifiedName follows the name and the anchor (seen on a real 2.1.0: a renamed term's changes)
    qn = f"{row.attrs.get('name')}@{glossary.attrs.get('qualifiedName')}"
    if qn != row.attrs.get("qualifiedName"):
        if _qn_exists(repo, TERM, qn, but=row.guid):
            raise AtlasApiError("ATLAS-409-00-009", qn)
        row.attrs["qualifiedName"] = qn
        row.dirty = True
        repo.flush()
    if glossary.guid != _anchor_guid(repo, row):
        _set_links(state, repo, row, TERM_ANCHOR, 2, [glossary.guid])
    _term_links(state, repo, row, body)
    return render_term(repo, row)


def delete_term(state: State, guid: str, repo: Repo | None = None) -> None:
    repo = repo or Repo(state)
    row = _load(repo, guid, TERM)
    assigned = _active_rels(repo, row.guid, ASSIGNMENT, 1)
    if assigned:
        raise AtlasApiError("ATLAS-400-00-084", row.guid, len(assigned))
    _soft_delete(state, repo, row)


# ---------------------------------------------------------------------------------------------- categories
def _category_qn(repo: Repo, name: str, glossary: Row, parent: Row | None) -> str:
    # a child's qualifiedName is its name, a dot and its parent's (child.parent@glossary, seen on 2.1.0)
    if parent is not None:
        return f"{name}.{parent.attrs.get('qualifiedName')}"
    return f"{name}@{glossary.attrs.get('qualifiedName')}"


def _parent_of(repo: Repo, body: dict[str, Any], glossary: Row) -> Row | None:
    parent = body.get("parentCategory")
    if not isinstance(parent, dict) or not parent.get("categoryGuid"):
        return None
    row = _load(repo, parent["categoryGuid"], CATEGORY)
    if _anchor_guid(repo, row) != glossary.guid:
        raise AtlasApiError("ATLAS-400-00-07F", row.guid)
    return row


def create_category(state: State, body: Any) -> dict[str, Any]:
    body = _object(body, "AtlasGlossaryCategory")
    repo = Repo(state)
    glossary = _anchor_of(repo, body)
    if not body.get("name"):
        raise AtlasApiError("ATLAS-400-00-07B")
    if _invalid_name(body["name"]):
        raise AtlasApiError("ATLAS-400-00-083")
    parent = _parent_of(repo, body, glossary)
    qn = _category_qn(repo, str(body["name"]), glossary, parent)
    if _qn_exists(repo, CATEGORY, qn):
        raise AtlasApiError("ATLAS-409-00-00A", qn)
    row = _new_row(state, repo, CATEGORY, {"qualifiedName": qn, **_own_attrs(CATEGORY, body)})
    repo.add_rel(CATEGORY_ANCHOR, glossary.guid, row.guid, state.now())
    if parent is not None:
        repo.add_rel(HIERARCHY, parent.guid, row.guid, state.now())
    return render_category(repo, row)


def create_categories(state: State, body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, list) or not body:
        raise AtlasApiError("ATLAS-400-00-029", "glossaryCategory is null/empty")
    return [create_category(state, c) for c in body]


def get_category(state: State, guid: str) -> dict[str, Any]:
    repo = Repo(state)
    return render_category(repo, _load(repo, guid, CATEGORY))


def _descendants(repo: Repo, guid: str) -> set[str]:
    out: set[str] = set()
    todo = [guid]
    while todo:
        for r in _active_rels(repo, todo.pop(), HIERARCHY, 1):
            if r.end2 not in out:
                out.add(r.end2)
                todo.append(r.end2)
    return out


def update_category(state: State, guid: str, body: Any) -> dict[str, Any]:
    body = _object(body, "AtlasGlossaryCategory")
    _check_name(body)
    repo = Repo(state)
    row = _load(repo, guid, CATEGORY)
    glossary = _anchor_of(repo, body)
    _save(state, repo, row, body)
    parent = _parent_of(repo, body, glossary)
    if parent is not None and (parent.guid == row.guid or parent.guid in _descendants(repo, row.guid)):
        raise AtlasApiError("ATLAS-400-00-029", "category hierarchy can't contain a cycle")
    _set_links(state, repo, row, HIERARCHY, 2, [parent.guid] if parent else [])
    qn = _category_qn(repo, str(row.attrs.get("name")), glossary, parent)
    if qn != row.attrs.get("qualifiedName"):  # the hierarchy changed: the qualifiedName follows it
        if _qn_exists(repo, CATEGORY, qn, but=row.guid):
            raise AtlasApiError("ATLAS-409-00-00A", qn)
        row.attrs["qualifiedName"] = qn
        row.dirty = True
        repo.flush()
    return render_category(repo, row)


def delete_category(state: State, guid: str) -> None:
    repo = Repo(state)
    _soft_delete(state, repo, _load(repo, guid, CATEGORY))


# ---------------------------------------------------------------------------------------------- assignments
def _object_ids(body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, list) or not all(isinstance(x, dict) for x in body):
        raise BadJsonError("Cannot deserialize value of type `java.util.ArrayList<AtlasRelatedObjectId>`")
    return body


def assigned_entities(state: State, guid: str, query: dict[str, list[str]]) -> list[dict[str, Any]]:
    repo = Repo(state)
    return _page(list(render_term(repo, _load(repo, guid, TERM)).get("assignedEntities", [])), query)


def assign(state: State, guid: str, body: Any) -> None:
    """POST ``/v2/glossary/terms/{guid}/assignedEntities``: entities already assigned are skipped."""
    repo = Repo(state)
    term = _load(repo, guid, TERM)
    have = {r.end2 for r in _active_rels(repo, term.guid, ASSIGNMENT, 1)}
    now = state.now()
    for oid in _object_ids(body):
        g = oid.get("guid")
        target = repo.get(str(g)) if g else None
        if target is None or target.status != ACTIVE:
            raise AtlasApiError("ATLAS-404-00-005", g)
        if target.guid in have:
            continue
        have.add(target.guid)
        repo.add_rel(ASSIGNMENT, term.guid, target.guid, now)
        target.update_time = now
        target.dirty = True
    repo.flush()


def dissociate(state: State, guid: str, body: Any) -> None:
    """DELETE (or PUT) ``/v2/glossary/terms/{guid}/assignedEntities``: each id needs its relationshipGuid."""
    repo = Repo(state)
    term = _load(repo, guid, TERM)
    current = {r.end2: r for r in _active_rels(repo, term.guid, ASSIGNMENT, 1)}
    drop = []
    for oid in _object_ids(body):
        rel_guid = oid.get("relationshipGuid")
        if not rel_guid:
            raise AtlasApiError("ATLAS-400-00-078")
        existing = current.get(str(oid.get("guid")))
        if existing is None or existing.guid != rel_guid:
            raise AtlasApiError("ATLAS-400-00-080", rel_guid, term.guid, oid.get("guid"))
        drop.append(existing)
    _drop(state, repo, drop)
