"""What Atlas holds for a sync scope: the profile's entities of one domain.

One paged basic search over the profile's root types (with subtypes) lists the domain; full entities
are then read in bulk only for what the plan needs (desired entities that exist, and this job's
entities that may be deleted). DELETED entities are ignored.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import logging
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.atlas.errors import BadRequestError
from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.reconcile.bookkeeping import OWNER_ATTRIBUTE, Bookkeeping
from atlas_sync.reconcile.interleave import interleave
from atlas_sync.render.native import DOMAIN_LABEL, JOB_LABEL, label_for

Key = tuple[str, str]

log = logging.getLogger(__name__)

UNKNOWN_TYPE = "ATLAS-400-00-014"  # "Type ENTITY with name ... does not exist"
SCOPE_PAGE = 10_000  # atlas.search.maxlimit's default: the largest page Atlas gives


ScopeClient = AtlasApi  # (the listing's client)


@dataclass
class ActualHeader:
    guid: str
    type_name: str
    qualified_name: str
    owner: str | None
    # what the profile's digest attribute holds (reconcile.digest), when it has one
    digest: str | None = None

    @property
    def key(self) -> Key:
        return (self.type_name, self.qualified_name)


@dataclass
class ActualEntity:
    """A full entity as read back, with references resolved to keys and filtered to ACTIVE ones."""

    guid: str
    type_name: str
    qualified_name: str
    owner: str | None
    attributes: dict[str, Any]
    refs: dict[str, list[Key] | Key | None]
    # guids of ACTIVE entities pointing at this one through any relationship (for safe dataset deletes)
    referrers: set[str] = field(default_factory=set)
    # what the entity carries beside attributes, as read: classifications, labels, businessAttributes,
    # relationshipAttributes.meanings (reconcile.metadata.held_metadata reads it)
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> Key:
        return (self.type_name, self.qualified_name)


@dataclass
class ActualState:
    domain: str
    headers: dict[Key, ActualHeader] = field(default_factory=dict)
    entities: dict[Key, ActualEntity] = field(default_factory=dict)
    # native profiles: shared entities that exist outside the scope (not ours) -> guid
    foreign: dict[Key, str] = field(default_factory=dict)

    def guid_of(self, key: Key) -> str | None:
        h = self.headers.get(key)
        return h.guid if h else None


def search_roots(client: ScopeClient, root_types: list[str], **search: Any) -> Iterator[dict[str, Any]]:
    """Basic search over several root types (with subtypes): one search with the names joined by
    commas, or, on servers before Atlas 2.2 that refuse that (``ATLAS-400-00-00A`` for the joined
    name), one search per type, those read at once (:func:`~atlas_sync.reconcile.interleave.interleave`:
    headers of different types then come interleaved). Root types are not subtypes of one another, so
    nothing repeats.

    Pages hold ``SCOPE_PAGE`` headers: a domain filter Atlas cannot run on its index (``@`` in the
    value) is checked in memory from the first entity of the type again for every page, so small pages
    make a listing quadratic (a real Atlas 2.1.0 listed 12,500 entities in 10.3 s with pages of
    1,000, in 3.8 s with pages of 10,000)."""
    search.setdefault("page_size", SCOPE_PAGE)
    if len(root_types) > 1 and client.capabilities.joined_type_search:
        given = False
        try:
            for h in client.search_basic(",".join(root_types), **search):
                given = True
                yield h
            return
        except BadRequestError as exc:
            if given or exc.error_code != "ATLAS-400-00-00A":
                raise
        client.note_one_type_per_search()
    # one search per type, several at once (the server answers them faster together)
    yield from interleave([functools.partial(client.search_basic, t, **search) for t in root_types])


def list_scope(
    client: ScopeClient,
    root_types: list[str],
    domain: str,
    *,
    labels: bool = False,
    bookkeeping: Bookkeeping | None = None,
) -> dict[Key, ActualHeader]:
    """Every ACTIVE entity of the given types (and subtypes) whose qualifiedName ends with ``@domain``;
    with ``labels`` (native profiles), every one labelled ``atlas-sync-d_<domain>``; with the
    server's key attribute (``bookkeeping``), listed by the domain's key as :func:`iter_scope` does."""
    return {h.key: h for h in iter_scope(client, root_types, domain, labels=labels, bookkeeping=bookkeeping)}


def iter_scope(
    client: ScopeClient,
    root_types: list[str],
    domain: str,
    *,
    labels: bool = False,
    bookkeeping: Bookkeeping | None = None,
    **search: Any,
) -> Iterator[ActualHeader]:
    """:func:`list_scope` one header at a time, as the search pages arrive (``search``: more
    arguments for ``client.search_basic``), each with its stored digest where the server has the
    digest attribute. With the server's key attribute, the domain is listed by the key's first part
    (the domain's, :func:`~atlas_sync.reconcile.bookkeeping.scope_key`) on Atlas's index; without it,
    by the qualifiedName suffix (checked in memory by Atlas)."""
    if not root_types:
        return
    if labels:
        yield from _iter_labelled(client, root_types, domain, **search)
        return
    bk = bookkeeping or Bookkeeping()
    suffix = "@" + domain
    by_key = bk.domain_filter(domain)
    by_suffix = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": suffix}
    yield from _headers(client, root_types, by_key or by_suffix, suffix, bk, **search)


def iter_job(
    client: ScopeClient,
    root_types: list[str],
    domain: str,
    job: str,
    *,
    bookkeeping: Bookkeeping,
    labels: bool = False,
    **search: Any,
) -> Iterator[ActualHeader]:
    """The entities ``job`` owns in ``domain`` (what its sync may update or delete), listed on Atlas's
    index by the job's whole key: the listing costs what the job holds, not what the domain holds.
    Native profiles (``labels``) list by the job's label and keep those with the domain's label.
    Without the key on the server's types (a server whose types an older bundle registered), by
    owner and qualifiedName suffix."""
    if not root_types:
        return
    suffix = "@" + domain
    if labels:
        yield from _iter_labelled(client, root_types, domain, job=job, **search)
        return
    by_key = bookkeeping.job_filter(domain, job)
    if by_key is not None:
        yield from _headers(client, root_types, by_key, suffix, bookkeeping, **search)
        return
    owner = {"attributeName": OWNER_ATTRIBUTE, "operator": "eq", "attributeValue": job}
    by_suffix = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": suffix}
    for h in _headers(
        client,
        root_types,
        {"condition": "AND", "criterion": [by_suffix, owner]},
        suffix,
        bookkeeping,
        **search,
    ):
        if h.owner == job:
            yield h


LOOKUP_THREADS = 4


def lookup_headers(
    client: AtlasApi,
    keys: Iterable[Key],
    domain: str,
    *,
    labels: bool = False,
    bookkeeping: Bookkeeping | None = None,
    outside: dict[Key, str] | None = None,
) -> list[ActualHeader]:
    """Headers of the ACTIVE entities of ``domain`` among ``keys``, read by unique attribute (bulk GETs
    per type, on Atlas's unique index, a few types at once): what a job's sync needs of the entities
    it wants but does not own (their guid, owner and stored digest), at a cost that follows ``keys``.
    Under a native profile (``labels``) only entities with the domain's label count; the guids of the
    others (a hook made them) go to ``outside``."""
    by_type: dict[str, list[str]] = {}
    for t, qn in keys:
        by_type.setdefault(t, []).append(qn)
    if not by_type:
        return []
    mark = label_for(DOMAIN_LABEL, domain)
    suffix = "@" + domain
    digest_name = bookkeeping.digest if bookkeeping else None

    def read(item: tuple[str, list[str]]) -> list[ActualHeader]:
        t, names = item
        out: list[ActualHeader] = []
        try:
            found = client.get_entities_by_unique(t, names, min_ext_info=True, ignore_relationships=True)
        except BadRequestError as exc:
            if exc.error_code == UNKNOWN_TYPE:
                return out  # a type the server lacks has no entities (a plan before typedefs are applied)
            # names too long for a URL: the same by a search, whose criteria travel in the body
            found = [
                dict(h, typeName=h.get("typeName", t))
                for qn in names
                for h in client.search_basic(
                    t,
                    entity_filters={"attributeName": "qualifiedName", "operator": "eq", "attributeValue": qn},
                    attributes=["qualifiedName", OWNER_ATTRIBUTE, *filter(None, [digest_name])],
                    include_subtypes=False,
                )
            ]
        for ent in found:
            attrs = ent.get("attributes") or {}
            qn = attrs.get("qualifiedName")
            if ent.get("status", "ACTIVE") != "ACTIVE" or not isinstance(qn, str) or ent.get("typeName") != t:
                continue
            if labels:
                if mark not in (ent.get("labels") or []):
                    if outside is not None:
                        outside[(t, qn)] = ent["guid"]
                    continue
                owner = job_label(ent.get("labels"))
            else:
                if not qn.endswith(suffix):
                    continue
                value = attrs.get(OWNER_ATTRIBUTE)
                owner = value if isinstance(value, str) and value else None
            digest = attrs.get(digest_name) if digest_name else None
            out.append(ActualHeader(ent["guid"], t, qn, owner, digest if isinstance(digest, str) else None))
        return out

    items = sorted(by_type.items())
    if len(items) == 1:
        return read(items[0])
    with ThreadPoolExecutor(min(LOOKUP_THREADS, len(items)), thread_name_prefix="atlas-sync-lookup") as pool:
        return [h for part in pool.map(read, items) for h in part]


# short names OR-ed into one search of other jobs' recent copies (Solr's clause limit is 1,024)
NAMES_PER_SEARCH = 100
# a name Atlas matches on its index: none of SearchProcessor's special characters (or a space)
_INDEX_SAFE = re.compile(r"[A-Za-z0-9_.]+")


def index_safe(name: object) -> bool:
    """Whether Atlas's basic search runs an ``=`` filter on this value on its index (on Solr): a
    value with one of its special characters (``@``, ``:``, ``-``, ...) is checked in memory, and
    inside an OR it would be left out of the index query."""
    return isinstance(name, str) and _INDEX_SAFE.fullmatch(name) is not None


def created_by_others(
    client: ScopeClient,
    types: list[str],
    domain: str,
    job: str,
    *,
    since_ms: int,
    bookkeeping: Bookkeeping,
    names: Collection[str] | None = None,
    limit: int | None = None,
) -> dict[Key, list[ActualHeader]] | None:
    """The ACTIVE entities of ``types`` in ``domain`` that Atlas created at or after ``since_ms``
    (its clock) and that ``job`` does not own, by name: the copies another sync may have created of
    what ``job`` created meanwhile. Atlas's index answers the domain key, the creation time and the
    job key, so the cost follows what the domain's other jobs created in that window, not the
    domain's size or this job's.

    ``names``: only entities whose ``name`` is one of these (index-safe short names, see
    :func:`index_safe`; OR-ed on the index, ``NAMES_PER_SEARCH`` a search), so that a job synced
    right after a big one of its domain does not read what that one created. ``limit``: None when
    the window holds more than this many entities (one page read)."""
    criteria = [
        *bookkeeping.others_filter(domain, job),
        {"attributeName": "__timestamp", "operator": "gte", "attributeValue": str(since_ms)},
    ]
    filters: list[dict[str, Any]] = []
    if names is None:
        filters.append({"condition": "AND", "criterion": criteria})
    else:
        ordered = sorted(set(names))
        for i in range(0, len(ordered), NAMES_PER_SEARCH):
            either = [
                {"attributeName": "name", "operator": "eq", "attributeValue": n}
                for n in ordered[i : i + NAMES_PER_SEARCH]
            ]
            by_name = either[0] if len(either) == 1 else {"condition": "OR", "criterion": either}
            filters.append({"condition": "AND", "criterion": [*criteria, by_name]})
    out: dict[Key, list[ActualHeader]] = {}
    for entity_filters in filters:
        search: dict[str, Any] = {} if limit is None else {"page_size": limit + 1}
        found = _headers(client, types, entity_filters, "@" + domain, Bookkeeping(), **search)
        if limit is not None:
            seen = list(itertools.islice(found, limit + 1))
            if len(seen) > limit:
                return None
            found = iter(seen)
        for h in found:
            if h.owner != job:
                out.setdefault(h.key, []).append(h)
    return out


def count_scope(
    client: AtlasApi,
    root_types: list[str],
    domain: str,
    *,
    labels: bool = False,
    bookkeeping: Bookkeeping | None = None,
) -> int:
    """How many entities the domain holds (the delete fail-safe's denominator): Atlas's count of a
    search by the domain's key, one request per root type; a listing where it gives no count."""
    by_key = None if labels or bookkeeping is None else bookkeeping.domain_filter(domain)
    if by_key is not None:
        counts = [client.search_count(t, entity_filters=by_key) for t in root_types]
        if all(c is not None for c in counts):
            return sum(c for c in counts if c is not None)
    return sum(1 for _ in iter_scope(client, root_types, domain, labels=labels, bookkeeping=bookkeeping))


def _headers(
    client: ScopeClient,
    root_types: list[str],
    entity_filters: dict[str, Any],
    suffix: str,
    bookkeeping: Bookkeeping,
    **search: Any,
) -> Iterator[ActualHeader]:
    digest_name = bookkeeping.digest
    headers = search_roots(
        client,
        root_types,
        entity_filters=entity_filters,
        exclude_deleted=True,
        attributes=["qualifiedName", *bookkeeping.read_attributes()],
        **search,
    )
    for h in headers:
        if h.get("status", "ACTIVE") != "ACTIVE":
            continue
        attrs = h.get("attributes") or {}
        qn = attrs.get("qualifiedName")
        if not isinstance(qn, str) or not qn.endswith(suffix):
            continue  # the index may match loosely: re-check the suffix here
        owner = attrs.get(OWNER_ATTRIBUTE) or None
        digest = attrs.get(digest_name) if digest_name else None
        yield ActualHeader(
            h["guid"],
            h["typeName"],
            qn,
            owner if isinstance(owner, str) else None,
            digest if isinstance(digest, str) else None,
        )


def domain_is_empty(
    client: ScopeClient, root_types: list[str], domain: str, bookkeeping: Bookkeeping
) -> bool:
    """Whether ``domain`` holds no entity at all (one header of a search by the domain's key, on
    Atlas's index). Every entity of a (non-native) domain carries the key, so a job's first sync into
    an empty domain has nothing to look up by name (a sync into the domain at the same moment is what
    the settle is for)."""
    by_key = bookkeeping.domain_filter(domain)
    assert by_key is not None
    one = search_roots(
        client,
        root_types,
        entity_filters=by_key,
        exclude_deleted=True,
        attributes=["qualifiedName"],
        page_size=1,
    )
    return next(iter(one), None) is None


def _iter_labelled(
    client: ScopeClient, root_types: list[str], domain: str, *, job: str | None = None, **search: Any
) -> Iterator[ActualHeader]:
    # Atlas keeps labels as the text "|a|b|": `contains` may match a longer label, so the header's
    # labels are checked here; the owner is the job label. With ``job``, that job's entities only.
    mark = label_for(DOMAIN_LABEL, domain)
    wanted = mark if job is None else label_for(JOB_LABEL, job)
    headers = search_roots(
        client,
        root_types,
        entity_filters={"attributeName": "__labels", "operator": "contains", "attributeValue": wanted},
        exclude_deleted=True,
        attributes=["qualifiedName"],
        **search,
    )
    for h in headers:
        labels = h.get("labels") or []
        qn = (h.get("attributes") or {}).get("qualifiedName")
        if h.get("status", "ACTIVE") != "ACTIVE" or not isinstance(qn, str):
            continue
        if mark not in labels or wanted not in labels:
            continue
        yield ActualHeader(h["guid"], h["typeName"], qn, job_label(labels))


def job_label(labels: Any) -> str | None:
    """The ``atlas-sync-j_<job>`` label among an entity's labels (its owner under a native profile)."""
    for label in labels or []:
        if isinstance(label, str) and label.startswith(JOB_LABEL):
            return label
    return None


def _is_active(ref: dict[str, Any]) -> bool:
    return (
        ref.get("relationshipStatus", "ACTIVE") == "ACTIVE" and ref.get("entityStatus", "ACTIVE") == "ACTIVE"
    )


def _ref_key(ref: dict[str, Any], by_guid: Mapping[str, Key]) -> Key | None:
    g = ref.get("guid")
    if isinstance(g, str) and g in by_guid:
        return by_guid[g]
    qn = (ref.get("uniqueAttributes") or {}).get("qualifiedName") or ref.get("qualifiedName")
    t = ref.get("typeName")
    if isinstance(qn, str) and isinstance(t, str):
        return (t, qn)
    return None


def to_actual(entity: dict[str, Any], by_guid: Mapping[str, Key], ref_attrs: set[str]) -> ActualEntity:
    """Normalise an entity as Atlas returns it: ACTIVE relationships only, references as keys."""
    attrs = dict(entity.get("attributes") or {})
    rels = entity.get("relationshipAttributes") or {}
    refs: dict[str, list[Key] | Key | None] = {}
    referrers: set[str] = set()
    for name, value in rels.items():
        if isinstance(value, list):
            active = [v for v in value if isinstance(v, dict) and _is_active(v)]
            referrers.update(v["guid"] for v in active if isinstance(v.get("guid"), str))
            keys = [k for k in (_ref_key(v, by_guid) for v in active) if k is not None]
            refs[name] = keys
        elif isinstance(value, dict):
            if _is_active(value):
                if isinstance(value.get("guid"), str):
                    referrers.add(value["guid"])
                refs[name] = _ref_key(value, by_guid)
            else:
                refs[name] = None
        attrs.pop(name, None)  # attributes.inputs keeps deleted references: the truth is above
    for name in ref_attrs:
        if name not in refs and name in attrs:
            v = attrs.pop(name)
            if isinstance(v, list):
                refs[name] = [k for k in (_ref_key(x, by_guid) for x in v if isinstance(x, dict)) if k]
            elif isinstance(v, dict):
                refs[name] = _ref_key(v, by_guid)
    owner = attrs.get(OWNER_ATTRIBUTE) or job_label(entity.get("labels"))
    return ActualEntity(
        guid=entity["guid"],
        type_name=entity["typeName"],
        qualified_name=attrs.get("qualifiedName", ""),
        owner=owner if isinstance(owner, str) and owner else None,
        attributes=attrs,
        refs=refs,
        referrers=referrers,
        extras={
            "guid": entity["guid"],
            "classifications": entity.get("classifications") or [],
            "labels": entity.get("labels") or [],
            "businessAttributes": entity.get("businessAttributes") or {},
            "relationshipAttributes": {"meanings": rels.get("meanings") or []},
        },
    )


def reference_attributes(desired_refs: Iterable[Iterable[str]]) -> set[str]:
    """Names of the reference attributes to read back: the profile's, plus Process inputs/outputs."""
    return {name for refs in desired_refs for name in refs} | {"inputs", "outputs"}


def read_entities(
    client: AtlasApi, guids: list[str], by_guid: Mapping[str, Key], ref_attrs: set[str]
) -> dict[Key, ActualEntity]:
    """Read ACTIVE entities in bulk, normalised; the one read path of plans and plan checks.

    Atlas 2.4.0 returns an entity that an earlier one in the same bulk GET owns (a dataset's column)
    in a minimal form with ``minExtInfo``: qualifiedName and name only, no relationshipAttributes.
    Those are read again in full, or their other attributes would look unset
    (docs/real-atlas-differences.md RA-06).
    """
    if not guids:
        return {}
    ents = client.get_entities(guids, min_ext_info=True)
    partial = [e["guid"] for e in ents if not e.get("relationshipAttributes")]
    if partial:
        full = {e["guid"]: e for e in client.get_entities(partial)}
        ents = [full.get(e["guid"], e) for e in ents]
    out: dict[Key, ActualEntity] = {}
    for ent in ents:
        if ent.get("status", "ACTIVE") == "ACTIVE":
            a = to_actual(ent, by_guid, ref_attrs)
            out[a.key] = a
    return out


def fingerprint(entity: ActualEntity | None) -> str:
    """A stable digest of what the plan compared, so a saved plan can tell whether Atlas moved on."""
    if entity is None:
        return "absent"
    payload = {
        "guid": entity.guid,
        "attributes": entity.attributes,
        "refs": {k: (sorted(v) if isinstance(v, list) else v) for k, v in entity.refs.items()},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]
