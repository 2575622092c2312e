"""What atlas-sync keeps on each entity it writes, as one value built once per sync.

Every entity of a profile with bookkeeping carries (typedefs/lineage, typedefs/pico):

* its owner, the job that created it (``atlasSyncJob``, written on create only: a shared dataset's
  other jobs refer to it without taking it over);
* one indexed key (the profile's ``key_attribute``): the domain's key then the owner's
  (:func:`entity_key`, ``d<20 hex>j<20 hex>``), letters and digits only, so that Atlas answers both
  listings on its index: a job's entities by the whole key (``=``), the domain's by its first part
  (``startsWith``, a prefix query on the index);
* the digest of what atlas-sync last wrote (``digest_attribute``, 11 characters per job);
* what atlas-sync added of its metadata (``metadata_attribute``), only where metadata rules put some.

:class:`Bookkeeping` holds the names the profile declares and those of them the server's types have
(a sync reads, searches and writes only those), and builds the searches by them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from atlas_sync.render.profile import BookkeepingNames

OWNER_ATTRIBUTE = "atlasSyncJob"
NONE = BookkeepingNames()


def scope_key(domain: str) -> str:
    """The domain's key: the first part of every key of the domain's entities. Letters and digits
    only, so that Atlas runs a search for it on its index (a value with ``@`` or other query
    characters, like the ``@domain`` suffix of a qualifiedName, is checked in memory on every entity
    of the types)."""
    return "d" + hashlib.blake2b(domain.encode(), digest_size=10).hexdigest()


def job_key(domain: str, job: str) -> str:
    """The key of ``job`` in ``domain`` (its claims in metadata records, its digest part; the second
    part of the key of what it owns): letters and digits only, like :func:`scope_key`."""
    raw = json.dumps([domain, job]).encode()  # unambiguous: no two (domain, job) pairs give one text
    return "j" + hashlib.blake2b(raw, digest_size=10).hexdigest()


def entity_key(domain: str, job: str) -> str:
    """The key an entity ``job`` owns in ``domain`` carries: the domain's key, then the job's."""
    return scope_key(domain) + job_key(domain, job)


@dataclass(frozen=True)
class Bookkeeping:
    """The profile's bookkeeping attributes (``profile``: what it declares) and, of those, what the
    server's types have now (``server``: an older registration may lack one; a search naming it is a
    400 and Atlas drops it from writes). Built once per sync (:meth:`of`), passed to whatever reads,
    searches or writes them."""

    profile: BookkeepingNames = NONE
    server: BookkeepingNames = NONE

    @classmethod
    def of(cls, names: BookkeepingNames, held: Callable[[str], bool] | None = None) -> Bookkeeping:
        """``names`` as far as the server's types have them (``held``: whether they have that
        attribute; ``None``: all of them, e.g. once the profile's typedefs are ensured)."""
        if held is None:
            return cls(names, names)
        on_server = {k: v if v is not None and held(v) else None for k, v in names.items()}
        return cls(names, BookkeepingNames(**on_server))

    @property
    def digest(self) -> str | None:
        return self.server.digest

    @property
    def key(self) -> str | None:
        return self.server.key

    @property
    def metadata(self) -> str | None:
        return self.server.metadata

    def without_digest(self) -> Bookkeeping:
        """No stored digest read (``refresh``: every entity compared in full)."""
        return replace(self, server=replace(self.server, digest=None))

    def with_metadata(self) -> Bookkeeping:
        """The profile's metadata record as if the server had it (a plan before the types hold it)."""
        return replace(self, server=replace(self.server, metadata=self.profile.metadata))

    def names(self) -> dict[str, str | None]:
        """The server's names, for a receipt's context (what the sync read and wrote by)."""
        return {f"{k}_attribute": v for k, v in self.server.items()}

    # ------------------------------------------------------------------ searches by the key
    def domain_filter(self, domain: str) -> dict[str, Any] | None:
        """Every entity of ``domain`` (a prefix of the key, on Atlas's index); ``None`` without a key."""
        if self.key is None:
            return None
        return {"attributeName": self.key, "operator": "startsWith", "attributeValue": scope_key(domain)}

    def job_filter(self, domain: str, job: str) -> dict[str, Any] | None:
        """The entities ``job`` owns in ``domain`` (the whole key); ``None`` without a key."""
        if self.key is None:
            return None
        return {"attributeName": self.key, "operator": "eq", "attributeValue": entity_key(domain, job)}

    def others_filter(self, domain: str, job: str) -> list[dict[str, Any]]:
        """Criteria of the entities of ``domain`` that ``job`` does not own (to AND with others)."""
        assert self.key is not None
        return [
            {"attributeName": self.key, "operator": "startsWith", "attributeValue": scope_key(domain)},
            {"attributeName": self.key, "operator": "neq", "attributeValue": entity_key(domain, job)},
        ]

    def read_attributes(self) -> list[str]:
        """What a listing reads of each header: the owner, and the stored digest."""
        return [OWNER_ATTRIBUTE, *([self.digest] if self.digest else [])]

    def create_only(self, domain: str, job: str) -> dict[str, str]:
        """The key written when ``job`` creates an entity (with its owner: neither changes on update)."""
        return {} if self.profile.key is None else {self.profile.key: entity_key(domain, job)}
