"""The metadata of a dataset, column or process as atlas-sync attaches it to the entity: classifications
(name, attributes, propagate), user labels, glossary terms (``term@glossary``) and business attributes.

Reader tags publish as labels when they are valid Atlas labels (letters, digits, ``_`` and ``-``, at
most 50): a tag with other characters (``environment:production``) stays in the model, where metadata
rules can match it (``tagged``), and is not published. Classifications need a type on the server, so
only rules add them.
"""

from __future__ import annotations

import re
from typing import Any

from atlas_sync.lineage.model import Column, Dataset, Process

_LABEL = re.compile(r"^[a-zA-Z0-9_-]{1,50}$")


def entity_metadata(item: Dataset | Column | Process, *, tags: bool = True) -> dict[str, Any] | None:
    """The canonical metadata document of ``item`` (sorted, only what it has), or ``None``.
    ``tags``: the reader's tags publish as labels (not under a native profile, where only rules and
    graph documents add metadata)."""
    if not (item.classifications or (tags and item.tags) or item.labels or item.terms or item.business):
        return None
    out: dict[str, Any] = {}
    if item.classifications:
        out["classifications"] = sorted(
            (
                {
                    "typeName": c.name,
                    "attributes": dict(c.attributes),
                    **({"propagate": c.propagate} if c.propagate is not None else {}),
                }
                for c in item.classifications
            ),
            key=lambda c: c["typeName"],
        )
    labels = sorted({*item.labels, *(t for t in item.tags if tags and _LABEL.match(t))})
    if labels:
        out["labels"] = labels
    if item.terms:
        out["terms"] = sorted(set(item.terms))
    business = {bm: dict(attrs) for bm, attrs in sorted((item.business or {}).items()) if attrs}
    if business:
        out["business"] = business
    return out or None
