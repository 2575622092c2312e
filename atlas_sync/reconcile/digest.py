"""A digest of what atlas-sync wrote, kept in Atlas with each entity (the profile's ``digest_attribute``).

A re-sync lists the domain with that one attribute and reads in full only the entities whose stored
digest differs from the digest of what it would write now (or that refer to an entity it is about to
create): an unchanged domain is decided from the listing alone. The digest covers what a full compare
compares (attributes and references, normalised the same way), so equal digests mean a full compare
would find nothing to write, unless someone changed the entity in Atlas since (drift: ``refresh``).
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from atlas_sync.reconcile.plan import _norm, _ref_norm
from atlas_sync.render.renderer import DesiredEntity

# Bumped whenever what the digest covers changes: every entity is then compared in full once.
VERSION = "1"
# A plan item decided by digest carries this fingerprint prefix and the stored digest.
DIGEST_MARK = "digest:"


def entity_digest(e: DesiredEntity, digest_attribute: str) -> str:
    """``<VERSION>:<11 characters>`` (64 bits of BLAKE2b, base64url) over ``e``'s type, name, attributes
    (but the digest's own) and references: short, since every write carries it."""
    attrs = {k: _norm(v) for k, v in e.attributes.items() if k != digest_attribute}
    refs = {k: _ref_norm(v) for k, v in e.refs.items()}
    doc: list[Any] = [e.type_name, e.qualified_name, attrs, refs]
    if e.metadata:
        # (absent when there is none: the digests of entities without metadata stay what they were)
        doc.append(_norm(e.metadata))
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    raw = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return f"{VERSION}:{base64.urlsafe_b64encode(raw).decode().rstrip('=')}"
