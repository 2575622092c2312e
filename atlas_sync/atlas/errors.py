"""Errors raised by :class:`~atlas_sync.atlas.client.AtlasClient`.

Every error carries what a user needs to act on it: the HTTP status, Atlas's ``errorCode`` and
``errorMessage``, the request method and path (never credentials, never the query string, which
may carry qualified names of other teams or tokens), and a hint that reads as advice.
"""

from __future__ import annotations

from typing import Any

from atlas_sync.errors import AtlasSyncError

# Hints for the Atlas error codes atlas-sync users run into most (see atlas-contract.md §1.8, §3.6).
_CODE_HINTS: dict[str, str] = {
    "ATLAS-404-00-007": (
        "an entity lacks a mandatory attribute (often name or qualifiedName) or has a value of the wrong "
        "type; check the profile's templates and the typedefs"
    ),
    "ATLAS-404-00-00A": (
        "a referenced entity does not exist: reference entities created in the same request by their "
        "placeholder guid, and make sure referenced existing entities are ACTIVE"
    ),
    "ATLAS-400-00-014": "the entity type is not registered; run `atlas-sync typedefs apply` first",
    "ATLAS-409-00-001": "the type already exists; `atlas-sync typedefs apply` updates existing types instead",
    "ATLAS-409-00-002": (
        "the type still has instances or references; delete and purge its entities first "
        "(`atlas-sync teardown --domain D --purge`)"
    ),
    "ATLAS-409-00-005": "delete the relationshipDefs that use this type in the same request",
    "ATLAS-400-00-09E": (
        "a subtype re-declares an attribute of its supertype (e.g. a Process subtype declaring inputs); "
        "remove the attribute from the subtype"
    ),
    "ATLAS-400-00-00D": "Atlas cannot remove attributes from a type; rebuild the domain to change it",
    "ATLAS-400-00-00C": "new attributes of an existing type must be optional (isOptional: true)",
    "ATLAS-400-00-029": "a referenced type is unknown, or an attribute's type changed (not supported by Atlas)",
    "ATLAS-500-00-005": "another typedef update is in progress on the server; try again in a moment",
}


class AtlasError(AtlasSyncError):
    """An Atlas request failed. ``status`` is the HTTP status (None for transport errors)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_code: str | None = None,
        error_message: str | None = None,
        method: str | None = None,
        path: str | None = None,
        hint: str | None = None,
        body: Any = None,
    ) -> None:
        if hint is None and error_code:
            hint = _CODE_HINTS.get(error_code)
        super().__init__(message, hint=hint)
        self.status = status
        self.error_code = error_code
        self.error_message = error_message
        self.method = method
        self.path = path
        self.body = body  # parsed error body (Atlas error JSON), for callers that need errorCause
        # Set by batch operations that failed part-way: what was already applied (a MutationResult).
        self.partial: Any = None
        # Set by the client: an earlier attempt of this request may have been applied (its answer was
        # lost, it timed out or got a 5xx), so a 409/404 now may be that attempt's doing.
        self.retried_after_ambiguous = False

    # Atlas's own spelling, for callers used to the REST body.
    @property
    def errorCode(self) -> str | None:  # noqa: N802
        return self.error_code

    @property
    def errorMessage(self) -> str | None:  # noqa: N802
        return self.error_message

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, error_code={self.error_code!r}, "
            f"method={self.method!r}, path={self.path!r}, message={self.message!r})"
        )


class BadRequestError(AtlasError):
    """HTTP 400: Atlas rejected the request (bad typedef, invalid parameter, malformed JSON)."""


class AuthError(AtlasError):
    """HTTP 401/403: missing or wrong credentials, or the user lacks a privilege."""


class NotFoundError(AtlasError):
    """HTTP 404: type, entity or referenced entity not found (also Atlas's missing-mandatory-attribute)."""


class ConflictError(AtlasError):
    """HTTP 409: type exists already, or a type still has instances/references."""


class ServerError(AtlasError):
    """HTTP 5xx (or 429) that persisted after the retries."""


class TransportError(AtlasError):
    """No HTTP answer: connection refused/reset, DNS, TLS or timeout, after the retries."""


class NotAtlasError(AtlasError):
    """The URL answers, but not as Atlas does: a 404 without Atlas's ``ATLAS-404-...`` JSON body, or
    an HTML page where Atlas's REST API answers JSON (a wrong URL or context path, another server).
    Not a :class:`NotFoundError`: nothing may read it as "absent"."""


def error_class_for(status: int) -> type[AtlasError]:
    """The :class:`AtlasError` subclass for an HTTP status."""
    if status in (401, 403, 419):
        return AuthError
    if status == 404:
        return NotFoundError
    if status == 409:
        return ConflictError
    if status == 429 or status >= 500:
        return ServerError
    if 400 <= status < 500:
        return BadRequestError
    return AtlasError
