"""A digest of what atlas-sync wrote, kept in Atlas with each entity (the profile's digest attribute, reconcile.bookkeeping).

A re-sync lists the domain with that one attribute and reads in full only the entities whose stored
digest differs from the digest of what it would write now (or that refer to an entity it is about to
create): an unchanged domain is decided from the listing alone. The digest covers what a full compare
compares (attributes and references, normalised the same way), so equal digests mean a full compare
would find nothing to write, unless someone changed the entity in Atlas since (drift: ``refresh``).

Metadata (classifications, labels, terms, business attributes) is wanted per job: two jobs that share
a dataset may want different tags on it. So the stored value is the digest of the entity itself,
followed by one part per job that attached metadata, the digest of what that job wants
(``1:<11 chars> j<job key>=<11 chars> ...``); a job compares the entity's digest and its own part
(:func:`for_job`), never another job's, and writes its part without touching the others
(:func:`merged`). A job's wanted digest is ``1:<entity>+<its metadata>``, or ``1:<entity>`` without.
A job that completes an entity another job owns (reconcile.compare) keeps the owner's digest and,
when it sees the entity otherwise, keeps its whole wanted digest as its part (``j<key>=:<11>+<11>``:
:func:`completed`, :func:`for_other_job`).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Collection
from typing import Any

from atlas_sync.reconcile.plan import _norm, _ref_norm
from atlas_sync.render.renderer import DesiredEntity

# Bumped whenever what the digest covers changes: every entity is then compared in full once.
VERSION = "1"
# A plan item decided by digest carries this fingerprint prefix and the stored digest.
DIGEST_MARK = "digest:"


# json.dumps with these arguments builds an encoder per call; one made once writes the same text
# (without the check for cycles: what is digested was parsed from JSON or checked as JSON by render)
_ENCODE = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str, check_circular=False
).encode


def _hash(doc: Any) -> str:
    text = _ENCODE(doc)
    raw = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def entity_digest(e: DesiredEntity, attribute: str) -> str:
    """``<VERSION>:<11 characters>`` (64 bits of BLAKE2b, base64url) over ``e``'s type, name, attributes
    (but the digest's own) and references, then ``+<11 characters>`` over its metadata when it has
    any: short, since every write carries it."""
    attrs = {k: _norm(v) for k, v in e.attributes.items() if k != attribute}
    refs = {k: _ref_norm(v) for k, v in e.refs.items()}
    base = f"{VERSION}:{_hash([e.type_name, e.qualified_name, attrs, refs])}"
    return f"{base}+{_hash(_norm(e.metadata))}" if e.metadata else base


def _parts(stored: str | None) -> tuple[str | None, dict[str, str]]:
    """The entity's digest and each job's part (job key -> metadata digest) of a stored value."""
    if not isinstance(stored, str) or not stored:
        return None, {}
    head, *rest = stored.split(" ")
    jobs = dict(p.split("=", 1) for p in rest if "=" in p)
    return head, jobs


def for_job(stored: str | None, job_key: str) -> str | None:
    """What ``job_key``'s sync compares its wanted digest with: the entity's digest, with the job's
    part when it has one."""
    head, jobs = _parts(stored)
    if head is None:
        return None
    mine = jobs.get(job_key)
    return f"{head}+{mine}" if mine else head


def without_metadata(wanted: str) -> str:
    """``wanted`` without the job's metadata part: written before the metadata requests, so that a
    sync killed before they are all sent reads the entity in full next time."""
    return wanted.partition("+")[0]


def merged(stored: str | None, job_key: str, wanted: str | None, *, drop: Collection[str] = ()) -> str | None:
    """The value to write: the entity's digest and ``job_key``'s part from ``wanted`` (a digest as
    :func:`entity_digest` gives; ``None``: none), the other jobs' parts as ``stored`` holds them (but
    those in ``drop``: jobs whose next sync must read the entity in full)."""
    if wanted is None:
        return None
    if "+" not in wanted and (not isinstance(stored, str) or " " not in stored):
        return wanted  # no job's part on either side (most entities: one per sync's write)
    _, jobs = _parts(stored)
    jobs = {k: v for k, v in jobs.items() if k != job_key and k not in drop}
    head, _, mine = wanted.partition("+")
    if mine:
        jobs[job_key] = mine
    return " ".join([head, *(f"{k}={v}" for k, v in sorted(jobs.items()))])


def completed(stored: str | None, wanted: str) -> str | None:
    """What a job wants of the digest of an entity another job owns (reconcile.compare completes it,
    never rewrites it): the owner's entity digest as ``stored`` holds it, and the job's part, which
    is its whole ``wanted`` digest (``:<entity>+<metadata>``, the version left out) unless the job
    sees the entity as the owner wrote it (then ``wanted`` as it is); ``None`` when ``stored`` holds
    no digest (the owner's next sync reads the entity in full)."""
    head, _ = _parts(stored)
    if head is None:
        return None
    if without_metadata(wanted) == head:
        return wanted
    return f"{head}+{wanted[len(VERSION) :]}"


def for_other_job(stored: str | None, job_key: str) -> str | None:
    """What ``job_key``'s sync compares its wanted digest with on an entity another job owns: the
    whole digest it wanted when it last completed the entity (:func:`completed`), else as
    :func:`for_job`."""
    _, jobs = _parts(stored)
    mine = jobs.get(job_key)
    if mine and mine.startswith(":"):
        return VERSION + mine
    return for_job(stored, job_key)
