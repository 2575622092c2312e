"""Atlas's calls for an entity's classifications, labels, business attributes and glossary term
assignments (``EntityREST`` and ``GlossaryREST``, Atlas 2.1+), as functions over an :class:`~atlas_sync.atlas.interface.AtlasApi`.

Counted under the ``metadata_write`` / ``metadata_read`` call kinds. Writes that add are not retried
after an answer that may have been lost (a second add of a classification is refused by Atlas).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from atlas_sync.atlas.errors import BadRequestError
from atlas_sync.atlas.interface import AtlasApi

TERM_TYPE = "AtlasGlossaryTerm"
WRITE = "metadata_write"


def _guid_path(guid: str, tail: str) -> str:
    return f"/v2/entity/guid/{quote(guid, safe='')}/{tail}"


def classify(client: AtlasApi, classification: Mapping[str, Any], guids: list[str]) -> None:
    """Add one classification to many entities (POST ``/v2/entity/bulk/classification``)."""
    client.call(
        WRITE,
        "POST",
        "/v2/entity/bulk/classification",
        body={"classification": dict(classification), "entityGuids": guids},
        idempotent=False,
    )


def update_classifications(client: AtlasApi, guid: str, classifications: list[dict[str, Any]]) -> None:
    """Change the attributes / ``propagate`` of classifications the entity has (PUT ``.../classifications``)."""
    client.call(WRITE, "PUT", _guid_path(guid, "classifications"), body=classifications)


def declassify(client: AtlasApi, guid: str, name: str) -> None:
    """Remove the entity's own classification ``name`` (DELETE ``.../classification/{name}``); what
    it propagated goes with it. Already gone counts as done."""
    client.call(
        WRITE, "DELETE", _guid_path(guid, f"classification/{quote(name, safe='')}"), not_found_ok=True
    )


def add_labels(client: AtlasApi, guid: str, labels: list[str]) -> None:
    """Add labels, keeping the others (PUT ``.../labels``)."""
    client.call(WRITE, "PUT", _guid_path(guid, "labels"), body=sorted(labels))


def remove_labels(client: AtlasApi, guid: str, labels: list[str]) -> None:
    """Remove these labels only (DELETE ``.../labels``)."""
    client.call(WRITE, "DELETE", _guid_path(guid, "labels"), body=sorted(labels))


def set_business(client: AtlasApi, guid: str, values: Mapping[str, Mapping[str, Any]]) -> None:
    """Set business attributes, keeping the others (POST ``.../businessmetadata?isOverwrite=false``)."""
    client.call(
        WRITE,
        "POST",
        _guid_path(guid, "businessmetadata"),
        params=[("isOverwrite", "false")],
        body={bm: dict(attrs) for bm, attrs in values.items()},
    )


def remove_business(client: AtlasApi, guid: str, attributes: Mapping[str, Iterable[str]]) -> None:
    """Remove these business attributes only (DELETE ``.../businessmetadata``; values are ignored)."""
    body = {bm: dict.fromkeys(attrs) for bm, attrs in attributes.items()}
    client.call(WRITE, "DELETE", _guid_path(guid, "businessmetadata"), body=body)


def assign_term(client: AtlasApi, term_guid: str, guids: list[str]) -> None:
    """Assign a glossary term to entities (POST ``/v2/glossary/terms/{guid}/assignedEntities``)."""
    client.call(
        WRITE,
        "POST",
        f"/v2/glossary/terms/{quote(term_guid, safe='')}/assignedEntities",
        body=[{"guid": g} for g in guids],
        idempotent=False,
    )


def unassign_term(client: AtlasApi, term_guid: str, assignments: list[tuple[str, str | None]]) -> None:
    """Remove a term's assignments (DELETE ``/v2/glossary/terms/{guid}/assignedEntities``): each an
    entity guid and the assignment's relationship guid, which Atlas needs to find it."""
    client.call(
        WRITE,
        "DELETE",
        f"/v2/glossary/terms/{quote(term_guid, safe='')}/assignedEntities",
        body=[{"guid": g, **({"relationshipGuid": r} if r else {})} for g, r in assignments],
    )


def term_guids(client: AtlasApi, qualified_names: Iterable[str]) -> dict[str, str]:
    """Guids of glossary terms by qualifiedName (``term@glossary``), read in bulk by unique attribute;
    a term Atlas lacks is absent from the answer."""
    names = sorted(set(qualified_names))
    if not names:
        return {}
    try:
        found = client.get_entities_by_unique(TERM_TYPE, names, min_ext_info=True, ignore_relationships=True)
    except BadRequestError as exc:
        if exc.error_code == "ATLAS-400-00-014":  # a server without the glossary's types has no terms
            return {}
        raise
    out: dict[str, str] = {}
    for ent in found:
        qn = (ent.get("attributes") or {}).get("qualifiedName")
        if isinstance(qn, str) and isinstance(ent.get("guid"), str):
            out[qn] = ent["guid"]
    return out
