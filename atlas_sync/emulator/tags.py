"""Entity labels and classifications (Atlas 2.1+ ``EntityREST`` label and classification endpoints).

Both live in the entity row's ``extra``: ``labels`` (a sorted list; Atlas keeps a set) and
``classifications`` (the directly attached ``AtlasClassification`` objects, in the order added);
``propagated`` holds the classifications other entities' propagate here (:mod:`propagation` keeps it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from atlas_sync.emulator import propagation
from atlas_sync.emulator.errors import AtlasApiError, BadJsonError
from atlas_sync.emulator.repo import ACTIVE, Repo, Row

if TYPE_CHECKING:
    from atlas_sync.emulator.state import State

LABEL_MAX_LENGTH = 50  # atlas.entity.label.max.length default (AtlasConfiguration.LABEL_MAX_LENGTH)
# EntityGraphMapper.LABEL_REGEX: CJK ranges, letters, digits, '_' and '-'
_LABEL_RE = re.compile("^[\u2e80-\u2fd5\u3190-\u319f\u3400-\u4dbf\u4e00-\u9fcc\uf900-\ufaada-zA-Z0-9_-]*$")


def validate_labels(labels: Any) -> list[str]:
    """``EntityGraphMapper.validateLabels``: the labels as a sorted list, or the error Atlas gives."""
    if labels is None:
        return []
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise BadJsonError("Cannot deserialize value of type `java.util.HashSet<java.lang.String>`")
    for label in labels:
        if len(label) > LABEL_MAX_LENGTH:
            raise AtlasApiError("ATLAS-400-00-08F", label, LABEL_MAX_LENGTH)
        if not _LABEL_RE.match(label):
            raise AtlasApiError("ATLAS-400-00-090", label)
    return sorted(set(labels))


def labels_of(row: Row) -> list[str]:
    return list(row.extra.get("labels") or [])


def label_text(row: Row) -> str | None:
    """The ``__labels`` vertex property as Atlas stores it (``|a|b|``), which search filters match."""
    labels = labels_of(row)
    return "|" + "|".join(labels) + "|" if labels else None


def classification_names(row: Row) -> list[str]:
    """The entity's own classifications (what it may delete or update)."""
    return [c["typeName"] for c in row.extra.get("classifications") or []]


def all_classification_names(row: Row) -> list[str]:
    """Own and propagated, as headers (``classificationNames``) and search see them."""
    names = classification_names(row) + [c["typeName"] for c in row.extra.get("propagated") or []]
    return list(dict.fromkeys(names))


def classification_text(row: Row) -> str | None:
    names = all_classification_names(row)
    return "|" + "|".join(names) + "|" if names else None


def rendered_classifications(row: Row) -> list[dict[str, Any]]:
    """``AtlasClassification`` JSON as ``GET /v2/entity/guid/{guid}`` returns it."""
    return [
        {
            "typeName": c["typeName"],
            "attributes": dict(c.get("attributes") or {}),
            "entityGuid": row.guid,
            "entityStatus": row.status,
            "propagate": c.get("propagate", True),
            "validityPeriods": list(c.get("validityPeriods") or []),
            "removePropagationsOnEntityDelete": c.get("removePropagationsOnEntityDelete", False),
        }
        for c in row.extra.get("classifications") or []
    ] + [dict(c, entityStatus=c.get("entityStatus", ACTIVE)) for c in row.extra.get("propagated") or []]


def _entity(state: State, guid: str) -> tuple[Repo, Row]:
    repo = Repo(state)
    row = repo.get(guid)
    if row is None:
        raise AtlasApiError("ATLAS-404-00-005", guid)
    return repo, row


def _touch(state: State, repo: Repo, row: Row) -> None:
    row.updated_by = state.user
    row.update_time = state.now()
    row.dirty = True
    repo.flush()


def change_labels(state: State, guid: str, body: Any, how: str) -> None:
    """POST (``set``), PUT (``add``) and DELETE (``remove``) ``/v2/entity/guid/{guid}/labels``."""
    repo, row = _entity(state, guid)
    labels = validate_labels(body)
    current = set(labels_of(row))
    if how == "remove" and not labels:
        raise AtlasApiError("ATLAS-400-00-01A", "labels is null/empty")
    new = set(labels) if how == "set" else current | set(labels) if how == "add" else current - set(labels)
    if new != current:
        row.extra["labels"] = sorted(new)
        _touch(state, repo, row)


def parse_classifications(state: State, body: Any) -> list[dict[str, Any]]:
    """A request's ``AtlasClassification`` list, each naming a known classification type."""
    if not isinstance(body, list) or not all(isinstance(c, dict) for c in body):
        raise BadJsonError(
            "Cannot deserialize value of type `java.util.ArrayList<AtlasClassification>` from non-array value"
        )
    out = []
    for c in body:
        name = c.get("typeName")
        d = state.registry.defs.get(name) if isinstance(name, str) else None
        if d is None or d.get("category") != "CLASSIFICATION":
            raise AtlasApiError("ATLAS-404-00-008", name)
        attrs = c.get("attributes") or {}
        if not isinstance(attrs, dict):
            raise BadJsonError("Cannot deserialize value of type `java.util.HashMap` from non-object value")
        out.append(
            {
                "typeName": name,
                "attributes": attrs,
                "propagate": c.get("propagate", True) is not False,
                "removePropagationsOnEntityDelete": bool(c.get("removePropagationsOnEntityDelete", False)),
                "validityPeriods": list(c.get("validityPeriods") or []),
            }
        )
    return out


def attach(state: State, row: Row, classifications: list[dict[str, Any]]) -> None:
    """Add classifications to a row; one already there is refused and nothing is added
    (``AtlasEntityStoreV2``: ``INVALID_PARAMETERS``, seen on a real 2.1.0)."""
    have = classification_names(row)
    for c in classifications:
        if c["typeName"] in have:
            raise AtlasApiError(
                "ATLAS-400-00-01A",
                f"entity: {row.guid}, already associated with classification: {c['typeName']}",
            )
        have.append(c["typeName"])
    row.extra["classifications"] = list(row.extra.get("classifications") or []) + classifications
    if any(c["propagate"] for c in classifications):
        propagation.enable(state)


def add_classifications(state: State, guid: str, body: Any) -> None:
    """POST ``/v2/entity/guid/{guid}/classifications``."""
    repo, row = _entity(state, guid)
    items = parse_classifications(state, body)
    if not items:
        raise AtlasApiError("ATLAS-400-00-01A", "classifications(s) not specified")
    attach(state, row, items)
    _touch(state, repo, row)


def update_classifications(state: State, guid: str, body: Any) -> None:
    """PUT ``/v2/entity/guid/{guid}/classifications``: attributes, ``propagate`` and
    ``removePropagationsOnEntityDelete`` of classifications the entity has itself (not propagated ones)."""
    repo, row = _entity(state, guid)
    items = parse_classifications(state, body)
    if not items:
        raise AtlasApiError("ATLAS-400-00-01A", "classifications(s) not specified")
    own = {c["typeName"]: c for c in row.extra.get("classifications") or []}
    for c in items:
        if c["typeName"] not in own:
            raise AtlasApiError("ATLAS-400-00-06D", c["typeName"])
    for c in items:
        own[c["typeName"]].update(c)
        if c["propagate"]:
            propagation.enable(state)
    _touch(state, repo, row)


def get_classifications(state: State, guid: str) -> dict[str, Any]:
    """GET ``/v2/entity/guid/{guid}/classifications`` (an ``AtlasClassifications`` page)."""
    _, row = _entity(state, guid)
    items = rendered_classifications(row)
    return {
        "list": items,
        "startIndex": 0,
        "pageSize": len(items),
        "totalCount": len(items),
        "sortType": "NONE",
    }


def delete_classification(state: State, guid: str, name: str) -> None:
    """DELETE ``/v2/entity/guid/{guid}/classification/{name}``."""
    repo, row = _entity(state, guid)
    if state.registry.defs.get(name, {}).get("category") != "CLASSIFICATION":
        raise AtlasApiError("ATLAS-404-00-008", name)
    names = classification_names(row)
    if not names:  # EntityGraphMapper.deleteClassification
        raise AtlasApiError("ATLAS-404-00-003", guid)
    if name not in names:
        raise AtlasApiError("ATLAS-400-00-06D", name)
    row.extra["classifications"] = [c for c in row.extra["classifications"] if c["typeName"] != name]
    _touch(state, repo, row)


def add_classification_bulk(state: State, body: Any) -> None:
    """POST ``/v2/entity/bulk/classification`` (``ClassificationAssociateRequest``): one classification
    added to several entities, all or nothing."""
    if not isinstance(body, dict):
        raise BadJsonError("Cannot deserialize value of type `ClassificationAssociateRequest`")
    guids = body.get("entityGuids")
    if not isinstance(guids, list) or not guids or not all(isinstance(g, str) for g in guids):
        raise AtlasApiError("ATLAS-400-00-01A", "entityGuids is null/empty")
    if not isinstance(body.get("classification"), dict):
        raise AtlasApiError("ATLAS-400-00-01A", "classification is null")
    (item,) = parse_classifications(state, [body["classification"]])
    rows = []
    for g in dict.fromkeys(guids):
        repo, row = _entity(state, g)
        rows.append((repo, row))
    for _, row in rows:  # checked first: one already classified refuses the whole request
        if item["typeName"] in classification_names(row):
            raise AtlasApiError(
                "ATLAS-400-00-01A",
                f"entity: {row.guid}, already associated with classification: {item['typeName']}",
            )
    for repo, row in rows:
        attach(state, row, [dict(item)])
        _touch(state, repo, row)
