"""Atlas's glossary REST API (``/v2/glossary``) as functions over an :class:`~atlas_sync.atlas.interface.AtlasApi`.

Plain dicts in Atlas's JSON shapes (``AtlasGlossary``, ``AtlasGlossaryTerm``, ``AtlasGlossaryCategory``).
Reads are counted as ``glossary_read``, writes as ``glossary_write`` in :attr:`AtlasClient.stats`.
Creates are not retried after a request that may have reached the server (a repeat would be a 409).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from atlas_sync.atlas.interface import AtlasApi

READ = "glossary_read"
WRITE = "glossary_write"
_ALL = [("limit", "-1"), ("offset", "0"), ("sort", "ASC")]


def _g(guid: str) -> str:
    return quote(guid, safe="")


def list_glossaries(client: AtlasApi) -> list[dict[str, Any]]:
    """Every glossary, with its term and category headers (``GET /v2/glossary?limit=-1``)."""
    return list(client.call(READ, "GET", "/v2/glossary", params=_ALL) or [])


def glossary_terms(client: AtlasApi, glossary_guid: str) -> list[dict[str, Any]]:
    """The full terms of one glossary (relations, categories, assigned entities)."""
    return list(client.call(READ, "GET", f"/v2/glossary/{_g(glossary_guid)}/terms", params=_ALL) or [])


def glossary_categories(client: AtlasApi, glossary_guid: str) -> list[dict[str, Any]]:
    return list(client.call(READ, "GET", f"/v2/glossary/{_g(glossary_guid)}/categories", params=_ALL) or [])


def create_glossary(client: AtlasApi, body: dict[str, Any]) -> dict[str, Any]:
    return dict(client.call(WRITE, "POST", "/v2/glossary", body=body, idempotent=False) or {})


def update_glossary(client: AtlasApi, guid: str, body: dict[str, Any]) -> dict[str, Any]:
    return dict(client.call(WRITE, "PUT", f"/v2/glossary/{_g(guid)}", body=body) or {})


def delete_glossary(client: AtlasApi, guid: str) -> None:
    """Deletes the glossary with its terms and categories (refused while a term is assigned)."""
    client.call(WRITE, "DELETE", f"/v2/glossary/{_g(guid)}")


def create_terms(client: AtlasApi, terms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One request for many terms (``POST /v2/glossary/terms``); answers them in the same order."""
    return list(client.call(WRITE, "POST", "/v2/glossary/terms", body=terms, idempotent=False) or [])


def update_term(client: AtlasApi, guid: str, body: dict[str, Any]) -> dict[str, Any]:
    """A full update: relations and categories left out of ``body`` are removed."""
    return dict(client.call(WRITE, "PUT", f"/v2/glossary/term/{_g(guid)}", body=body) or {})


def delete_term(client: AtlasApi, guid: str) -> None:
    client.call(WRITE, "DELETE", f"/v2/glossary/term/{_g(guid)}")


def create_categories(client: AtlasApi, categories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(
        client.call(WRITE, "POST", "/v2/glossary/categories", body=categories, idempotent=False) or []
    )


def update_category(client: AtlasApi, guid: str, body: dict[str, Any]) -> dict[str, Any]:
    return dict(client.call(WRITE, "PUT", f"/v2/glossary/category/{_g(guid)}", body=body) or {})


def delete_category(client: AtlasApi, guid: str) -> None:
    client.call(WRITE, "DELETE", f"/v2/glossary/category/{_g(guid)}")


def assigned_entities(client: AtlasApi, term_guid: str) -> list[dict[str, Any]]:
    """``AtlasRelatedObjectId`` of each entity the term is assigned to (with ``relationshipGuid``)."""
    path = f"/v2/glossary/terms/{_g(term_guid)}/assignedEntities"
    return list(client.call(READ, "GET", path, params=_ALL) or [])


def remove_assignments(client: AtlasApi, term_guid: str, assigned: list[dict[str, Any]]) -> None:
    """Dissociate the term from these entities (each needs the ``relationshipGuid`` Atlas gave it)."""
    body = [{"guid": a["guid"], "relationshipGuid": a["relationshipGuid"]} for a in assigned]
    client.call(WRITE, "DELETE", f"/v2/glossary/terms/{_g(term_guid)}/assignedEntities", body=body)
