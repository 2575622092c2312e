"""Classifications, labels, glossary terms and business attributes: what to send so an entity carries
what atlas-sync wants of them, without touching what a person or another tool added.

What atlas-sync added is recorded in the entity itself, in the profile's metadata attribute (reconcile.bookkeeping)
(``atlasSyncMetadata``: a small JSON document of the names each job wants, see :func:`encode_record`),
so any machine's next sync knows it. Several jobs may want metadata on one entity (a shared dataset):
each job's claims are its own, and a sync of job J:

- adds what J wants and the entity lacks (and records J's claim);
- claims what J wants that another job's claim put there (so it stays while either wants it);
- updates what J alone claims and differs (a classification's attributes or ``propagate``, a
  business attribute's value): settings several jobs claim stay as the first one set them;
- drops J's claims J no longer wants, and removes the item only when no other job claims it;
- leaves alone whatever else the entity carries: a classification, label, term or business attribute
  that was there already (even one of a name we want: it stays theirs), and every propagated
  classification (its ``entityGuid`` is another entity: Atlas manages it along lineage).

The desired metadata is part of the entity's digest (reconcile.digest), so an unchanged re-sync
decides all of this from the listing, without a read or a request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.reconcile.plan import Change, _norm

RECORD_VERSION = 2


def read_record(value: Any) -> dict[str, dict[str, Any]]:
    """The record kept in the metadata attribute (a JSON text, or nothing): job key -> that job's
    claims (:func:`owned_of`); one that does not parse (or of another version) counts as nothing
    recorded."""
    doc = _json(value)
    if doc is None or doc.get("v") != RECORD_VERSION:
        return {}
    jobs = doc.get("j")
    if not isinstance(jobs, dict):
        return {}
    return {k: section for k, v in jobs.items() if isinstance(k, str) and (section := owned_of(v))}


def encode_record(sections: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The record as written: compact JSON, ``{"v":2,"j":{job key: claims}}``; ``None`` when no job
    claims anything."""
    jobs = {k: json.loads(text) for k, s in sorted(sections.items()) if k and (text := encode_owned(s))}
    if not jobs:
        return None
    return json.dumps(
        {"j": jobs, "v": RECORD_VERSION}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def union(*claims: Mapping[str, Any]) -> dict[str, Any]:
    """Claims (:func:`owned_of` dicts) merged: every name any of them holds (and an owner one of
    them set, the first's)."""
    out: dict[str, Any] = {"c": [], "l": [], "t": {}, "b": {}}
    for one in claims:
        if one.get("o") is not None and out.get("o") is None:
            out["o"] = one["o"]
        for k in ("c", "l"):
            out[k] = sorted({*out[k], *(one.get(k) or [])})
        out["t"].update(one.get("t") or {})
        for bm, attrs in (one.get("b") or {}).items():
            out["b"][bm] = sorted({*out["b"].get(bm, []), *attrs})
    return out


def claimants(sections: Mapping[str, Mapping[str, Any]], dropped: Mapping[str, Any]) -> set[str]:
    """The jobs (keys of ``sections``) that claim any of ``dropped``."""
    out: set[str] = set()
    for key, s in sections.items():
        if (
            set(s.get("c") or []) & set(dropped.get("c") or [])
            or set(s.get("l") or []) & set(dropped.get("l") or [])
            or set(s.get("t") or {}) & set(dropped.get("t") or {})
            or any(
                set(attrs) & set((dropped.get("b") or {}).get(bm) or [])
                for bm, attrs in (s.get("b") or {}).items()
            )
        ):
            out.add(key)
    return out


def minus(claims: Mapping[str, Any], gone: Mapping[str, Any]) -> dict[str, Any]:
    """``claims`` without the names in ``gone`` (and without the owner when ``gone`` has none)."""
    return {
        **({"o": claims["o"]} if claims.get("o") is not None and gone.get("o") is None else {}),
        "c": sorted(set(claims.get("c") or []) - set(gone.get("c") or [])),
        "l": sorted(set(claims.get("l") or []) - set(gone.get("l") or [])),
        "t": {q: g for q, g in (claims.get("t") or {}).items() if q not in (gone.get("t") or {})},
        "b": {
            bm: left
            for bm, attrs in (claims.get("b") or {}).items()
            if (left := sorted(set(attrs) - set((gone.get("b") or {}).get(bm) or [])))
        },
    }


def _json(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or not value:
        return None
    try:
        doc = json.loads(value)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def owned_of(value: Any) -> dict[str, Any]:
    """One job's claims (or a record written before claims were per job: a JSON text) as a dict:
    ``c`` classification names, ``l`` labels, ``t`` term qualifiedName -> term guid (so a term no longer
    wanted is removed without a lookup), ``b`` business metadata name -> attribute names, ``o`` the
    ``owner`` attribute the job wrote (an attribute, not a request: kept so that it goes when the job
    no longer sets it). A value that does not parse counts as nothing recorded."""
    doc = _json(value)
    if doc is None:
        return {}
    out: dict[str, Any] = {}
    if isinstance(doc.get("o"), str):
        out["o"] = doc["o"]
    for k in ("c", "l"):
        if isinstance(doc.get(k), list):
            out[k] = [x for x in doc[k] if isinstance(x, str)]
    if isinstance(doc.get("t"), dict):
        out["t"] = {q: g for q, g in doc["t"].items() if isinstance(g, str)}
    if isinstance(doc.get("b"), dict):
        out["b"] = {
            bm: [a for a in attrs if isinstance(a, str)]
            for bm, attrs in doc["b"].items()
            if isinstance(attrs, list)
        }
    return out


def encode_owned(owned: Mapping[str, Any]) -> str | None:
    """The record as written: compact JSON with sorted names, ``None`` when nothing is ours."""
    doc: dict[str, Any] = {}
    if isinstance(owned.get("o"), str):
        doc["o"] = owned["o"]
    for k in ("c", "l"):
        if owned.get(k):
            doc[k] = sorted(set(owned[k]))
    if owned.get("t"):
        doc["t"] = dict(sorted(owned["t"].items()))
    b = {bm: sorted(set(a)) for bm, a in sorted((owned.get("b") or {}).items()) if a}
    if b:
        doc["b"] = b
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False) if doc else None


@dataclass
class MetadataOps:
    """The requests one entity needs (its guid is filled in once known)."""

    add_classifications: list[dict[str, Any]] = field(default_factory=list)
    update_classifications: list[dict[str, Any]] = field(default_factory=list)
    remove_classifications: list[str] = field(default_factory=list)
    add_labels: list[str] = field(default_factory=list)
    remove_labels: list[str] = field(default_factory=list)
    set_business: dict[str, dict[str, Any]] = field(default_factory=dict)
    remove_business: dict[str, list[str]] = field(default_factory=dict)
    # term qualifiedName -> its guid; to remove: -> [its guid, the assignment's relationship guid]
    add_terms: dict[str, str] = field(default_factory=dict)
    remove_terms: dict[str, list[str | None]] = field(default_factory=dict)
    # native profiles: the record kept in a business attribute, [business metadata, attribute, text
    # or None], written before the other requests (claims first) and after them (claims let go)
    record_before: list[Any] = field(default_factory=list)
    record_after: list[Any] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any(getattr(self, f) for f in self.__dataclass_fields__)

    def changes(self) -> list[Change]:
        """The plan's lines: ``classifications: +PII ~Sensitive -Old``."""
        out: list[Change] = []

        def line(name: str, add: list[str], upd: list[str], rem: list[str]) -> None:
            text = " ".join([*(f"+{x}" for x in add), *(f"~{x}" for x in upd), *(f"-{x}" for x in rem)])
            if text:
                out.append(Change(name, None, text))

        line(
            "classifications",
            [c["typeName"] for c in self.add_classifications],
            [c["typeName"] for c in self.update_classifications],
            self.remove_classifications,
        )
        line("labels", self.add_labels, [], self.remove_labels)
        line("terms", list(self.add_terms), [], list(self.remove_terms))
        line(
            "businessMetadata",
            [f"{bm}.{a}" for bm, attrs in self.set_business.items() for a in attrs],
            [],
            [f"{bm}.{a}" for bm, attrs in self.remove_business.items() for a in attrs],
        )
        return out

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> MetadataOps:
        return cls(**{k: v for k, v in doc.items() if k in cls.__dataclass_fields__})


def held_metadata(entity: Mapping[str, Any]) -> dict[str, Any]:
    """What an entity read from Atlas carries: its own (not propagated) classifications, labels,
    business attributes, and term assignments (term guid -> relationship guid)."""
    guid = entity.get("guid")
    own = [
        c
        for c in entity.get("classifications") or []
        if isinstance(c, dict) and c.get("entityGuid") in (None, "", guid)
    ]
    meanings = {}
    for m in (entity.get("relationshipAttributes") or {}).get("meanings") or []:
        active = isinstance(m, dict) and str(m.get("relationshipStatus", "ACTIVE")) == "ACTIVE"
        if active and isinstance(m.get("guid"), str):
            meanings[m["guid"]] = m.get("relationshipGuid")
    return {
        "classifications": own,
        "labels": [x for x in entity.get("labels") or [] if isinstance(x, str)],
        "business": {
            bm: dict(attrs)
            for bm, attrs in (entity.get("businessAttributes") or {}).items()
            if isinstance(attrs, dict)
        },
        "meanings": meanings,
    }


def _same_classification(want: Mapping[str, Any], have: Mapping[str, Any]) -> bool:
    return _norm(want.get("attributes") or {}) == _norm(
        {k: v for k, v in (have.get("attributes") or {}).items() if v is not None}
    ) and want.get("propagate", True) == have.get("propagate", True)


def plan_metadata(
    desired: Mapping[str, Any] | None,
    held: Mapping[str, Any] | None,
    owned: Mapping[str, Any],
    term_guids: Mapping[str, str],
    others: Mapping[str, Any] | None = None,
) -> tuple[MetadataOps, dict[str, Any]]:
    """The requests that make an entity carry ``desired`` (render.metadata's document) given what it
    ``held`` (:func:`held_metadata`; ``None`` for an entity about to be created), what the record says
    this job claims (``owned``) and what other jobs claim (``others``, their :func:`union`); and this
    job's claims to record. ``term_guids``: term qualifiedName -> guid."""
    want = desired or {}
    theirs = others or {}
    their_c, their_l = set(theirs.get("c") or []), set(theirs.get("l") or [])
    their_t = set(theirs.get("t") or {})
    their_b = {bm: set(a) for bm, a in (theirs.get("b") or {}).items()}
    held = held or {"classifications": [], "labels": [], "business": {}, "meanings": {}}
    ops = MetadataOps()
    new: dict[str, Any] = {"c": [], "l": [], "t": {}, "b": {}}

    # classifications
    have = {c["typeName"]: c for c in held["classifications"] if isinstance(c.get("typeName"), str)}
    mine = set(owned.get("c") or [])
    wanted = {c["typeName"]: c for c in want.get("classifications") or []}
    for name, c in wanted.items():
        body = {"typeName": name, "attributes": dict(c.get("attributes") or {})}
        if "propagate" in c:
            body["propagate"] = c["propagate"]
        if name not in have:
            ops.add_classifications.append(body)
            new["c"].append(name)
        elif name in mine or name in their_c:
            new["c"].append(name)  # ours (this job's, or another job's it now shares)
            if name not in their_c and not _same_classification(c, have[name]):
                ops.update_classifications.append(body)
        # else: someone else's classification of that name: theirs, left as it is
    ops.remove_classifications = sorted(n for n in mine - set(wanted) - their_c if n in have)

    # labels
    labels, mine_l = set(held["labels"]), set(owned.get("l") or [])
    for label in want.get("labels") or []:
        if label not in labels:
            ops.add_labels.append(label)
            new["l"].append(label)
        elif label in mine_l or label in their_l:
            new["l"].append(label)
    ops.remove_labels = sorted(x for x in mine_l - set(want.get("labels") or []) - their_l if x in labels)

    # business attributes
    mine_b = {bm: set(a) for bm, a in (owned.get("b") or {}).items()}
    for bm, attrs in (want.get("business") or {}).items():
        current = held["business"].get(bm) or {}
        for attr, value in attrs.items():
            shared = attr in their_b.get(bm, set())
            ours = attr in mine_b.get(bm, set()) or shared
            if current.get(attr) is None:
                ops.set_business.setdefault(bm, {})[attr] = value
                new["b"].setdefault(bm, []).append(attr)
            elif ours:
                new["b"].setdefault(bm, []).append(attr)
                if not shared and _norm(current.get(attr)) != _norm(value):
                    ops.set_business.setdefault(bm, {})[attr] = value
    for bm, attrs in mine_b.items():
        gone = sorted(
            a
            for a in attrs - set((want.get("business") or {}).get(bm) or {}) - their_b.get(bm, set())
            if (held["business"].get(bm) or {}).get(a) is not None
        )
        if gone:
            ops.remove_business[bm] = gone

    # glossary terms (assignments are relationships: compared by the term's guid)
    meanings = held["meanings"]
    mine_t: dict[str, str] = dict(owned.get("t") or {})
    for term in want.get("terms") or []:
        guid = term_guids.get(term)
        if guid is None:
            continue  # unknown terms were refused before the sync started (Publisher)
        if guid not in meanings:
            ops.add_terms[term] = guid
            new["t"][term] = guid
        elif mine_t.get(term) == guid or (term in their_t and theirs["t"][term] == guid):
            new["t"][term] = guid
    for term in sorted(set(mine_t) - set(want.get("terms") or []) - their_t):
        guid = mine_t[term]
        if guid in meanings:
            ops.remove_terms[term] = [guid, meanings[guid]]
    return ops, new


def apply_metadata(client: AtlasApi, todo: list[tuple[str, MetadataOps]]) -> int:
    """Send what ``todo`` (entity guid, its ops) needs, fewest requests first: one bulk request per
    distinct classification added (to all its entities at once) and per term assigned or removed;
    one per entity for updated or removed classifications, labels and business attributes.
    Removals go first (a classification re-added with other settings is an update, never both).
    Returns the number of requests."""
    from atlas_sync.atlas import metadata as api

    requests = 0
    for guid, ops in todo:
        if ops.record_before:
            requests += _write_record(client, guid, ops.record_before)
    removals: dict[str, list[tuple[str, str | None]]] = {}
    for guid, ops in todo:
        for name in ops.remove_classifications:
            api.declassify(client, guid, name)
            requests += 1
        if ops.remove_labels:
            api.remove_labels(client, guid, ops.remove_labels)
            requests += 1
        if ops.remove_business:
            api.remove_business(client, guid, ops.remove_business)
            requests += 1
        for term_guid, rel in ops.remove_terms.values():
            if term_guid:
                removals.setdefault(term_guid, []).append((guid, rel))
    for term_guid, pairs in removals.items():
        api.unassign_term(client, term_guid, pairs)
        requests += 1
    adds: dict[str, tuple[dict[str, Any], list[str]]] = {}
    assigns: dict[str, list[str]] = {}
    for guid, ops in todo:
        for c in ops.add_classifications:
            key = json.dumps(c, sort_keys=True, default=str)
            adds.setdefault(key, (c, []))[1].append(guid)
        if ops.update_classifications:
            api.update_classifications(client, guid, ops.update_classifications)
            requests += 1
        if ops.add_labels:
            api.add_labels(client, guid, ops.add_labels)
            requests += 1
        if ops.set_business:
            api.set_business(client, guid, ops.set_business)
            requests += 1
        for term_guid in ops.add_terms.values():
            assigns.setdefault(term_guid, []).append(guid)
    for c, guids in adds.values():
        for part in _parts(guids):
            api.classify(client, c, part)
            requests += 1
    for term_guid, guids in assigns.items():
        for part in _parts(guids):
            api.assign_term(client, term_guid, part)
            requests += 1
    for guid, ops in todo:
        if ops.record_after:
            requests += _write_record(client, guid, ops.record_after)
    return requests


def _write_record(client: AtlasApi, guid: str, record: list[Any]) -> int:
    """Write (or, for ``None``, remove) a native profile's record: one business-metadata request."""
    from atlas_sync.atlas import metadata as api

    bm, attr, text = record
    if text is None:
        api.remove_business(client, guid, {bm: [attr]})
    else:
        api.set_business(client, guid, {bm: {attr: text}})
    return 1


BULK = 500  # entities per bulk classification or term assignment (one transaction each in Atlas)


def _parts(guids: list[str]) -> list[list[str]]:
    return [guids[i : i + BULK] for i in range(0, len(guids), BULK)]


def record_typedef(name: str, attribute: str) -> dict[str, Any]:
    """The business metadata a native profile keeps its record in (Atlas's own types have no attribute
    of ours): one string attribute, on any entity (``Referenceable``), not indexed."""
    return {
        "name": name,
        "description": "What atlas-sync added of the entity's classifications, labels, terms and business "
        "attributes, per job (a re-sync removes only those).",
        "attributeDefs": [
            {
                "name": attribute,
                "typeName": "string",
                "isOptional": True,
                "cardinality": "SINGLE",
                "isUnique": False,
                "isIndexable": False,
                "options": {"applicableEntityTypes": '["Referenceable"]', "maxStrLength": "100000"},
            }
        ],
    }
