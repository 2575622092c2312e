"""The Python API: the same operations as the CLI.

>>> from atlas_sync.api import Publisher
>>> from atlas_sync.factory import embedded_client
>>> pub = Publisher(embedded_client(None), profile="lineage", domain="demo")  # doctest: +SKIP
>>> graph = pub.read("sql", ["etl.sql"], dialect="spark")                          # doctest: +SKIP
>>> print(pub.plan(graph).summary())                                               # doctest: +SKIP
>>> pub.sync(graph)                                                                # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from typing_extensions import Unpack

from atlas_sync.atlas import AtlasError
from atlas_sync.errors import AtlasSyncError, InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import LineageGraph, Problem
from atlas_sync.lineage.rules import MetadataRules, load_rules
from atlas_sync.reconcile.actual import ActualHeader, list_scope
from atlas_sync.reconcile.apply import ApplyResult, apply_plan
from atlas_sync.reconcile.plan import MISSING_DATASETS, Plan, PlanOptions
from atlas_sync.reconcile.teardown import TeardownPlan
from atlas_sync.render.native import DEFAULT_METADATA_NAMESPACE, DOMAIN_HINT, Namespaces, valid_domain
from atlas_sync.render.profile import Profile, load_profile
from atlas_sync.wording import counted

_JOB_RE = re.compile(r"^[^@\s][^@]*$")

# The built-in profiles whose entities carry the domain's key: `show` and `teardown` say what a domain
# holds under them when the profile in use finds nothing there.
OTHER_PROFILES = ("lineage", "pico")

# A sync of a graph bigger than this (datasets + columns + processes + column edges) plans and
# applies through a disk spool.
STREAM_MIN_ENTITIES = 50_000

Progress = Callable[[int, int], None]

# What a sync publishes by default, per reader: OpenLineage jobs are published from completed runs
# (RUNNING/START only when asked, e.g. ``-o event_types=COMPLETE,RUNNING``).
_SYNC_READER_DEFAULTS: dict[str, dict[str, Any]] = {"openlineage": {"event_types": ["COMPLETE"]}}


class PlanKwargs(TypedDict, total=False):
    """Options of :meth:`Publisher.plan` / :meth:`Publisher.plan_chunks` (one definition for all)."""

    allow_delete: bool  # False: never delete (--no-delete)
    force: bool  # delete more than max_delete_percent of the domain's entities
    stream: bool | None  # where entities wait: False memory, True a temporary file, None by size
    on_read: Callable[[list[Problem]], None] | None  # the input's problems, once it has been read
    refresh: bool  # compare every entity in full, not only those whose stored digest differs (no receipt)
    allow_empty: bool  # an input that produced nothing deletes the job's entities (sync --allow-empty)


class SyncKwargs(PlanKwargs, total=False):
    """Options of :meth:`Publisher.sync` / :meth:`Publisher.sync_chunks`."""

    purge: bool  # hard-delete what is deleted
    ensure_typedefs: bool  # register the profile's typedefs first (default True)
    allow_partial: bool  # publish what could be read from an input with errors (never deletes)
    progress: Progress | None  # update(done, total) while applying
    parallel: int | None  # write batches in flight at most (default: the publisher's ``parallel``, 2)


def _streamed(options: Mapping[str, Any], graph: LineageGraph) -> dict[str, Any]:
    """``options`` with ``stream`` decided for one graph: a file spool past ``STREAM_MIN_ENTITIES``."""
    if options.get("stream") is None:
        return {**options, "stream": _size(graph) > STREAM_MIN_ENTITIES}
    return dict(options)


@dataclass
class SyncResult:
    plan: Plan
    applied: ApplyResult | None
    typedef_writes: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "domain": self.plan.domain,
            "job": self.plan.job,
            "profile": self.plan.profile,
            "plan": self.plan.counts,
            "applied": self.applied.to_json() if self.applied else None,
            "warnings": self.plan.warnings,
            # answered by the job's receipt (reconcile.receipt): nothing rendered, listed or compared
            "by_receipt": bool(getattr(self.plan, "by_receipt", False)),
        }


@dataclass
class TeardownResult:
    domain: str
    deleted: int = 0
    purged: int = 0
    typedefs_deleted: list[str] = field(default_factory=list)
    requests: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "deleted": self.deleted,
            "purged": self.purged,
            "typedefs_deleted": self.typedefs_deleted,
            "requests": self.requests,
        }


def _size(graph: LineageGraph) -> int:
    """About the number of entities ``graph`` renders to, without rendering it."""
    return (
        len(graph.datasets)
        + sum(len(d.columns) for d in graph.datasets)
        + len(graph.processes)
        + len(graph.edges)
    )


def _check_input(problems: list[Problem], has_content: bool, allow_partial: bool) -> None:
    errors = [p for p in problems if p.severity == "error"]
    if errors and (not allow_partial or not has_content):
        raise InputError(
            f"the input has {counted(len(errors), 'error')}; nothing was published. First: {errors[0]}",
            hint="fix the input"
            + ("" if not has_content else ", or publish the rest with allow_partial (--allow-partial)"),
        )


def _check_job(job: str) -> str:
    if not _JOB_RE.match(job):
        raise AtlasSyncError(f"invalid job name {job!r}", hint="a job name is non-empty and has no '@'")
    return job


class Publisher:
    """Publishes lineage graphs to one Atlas domain with one profile.

    ``client`` is an :class:`atlas_sync.atlas.AtlasClient` (a real Atlas or the embedded emulator).
    """

    def __init__(
        self,
        client: Any,
        *,
        profile: str | Path | Profile = "lineage",
        domain: str,
        batch_size: int = 500,
        parallel: int = 2,
        max_delete_percent: float = 50.0,
        metadata_namespace: str | None = None,
        metadata_namespaces: Mapping[str, str] | None = None,
        missing_datasets: str = "create",
        metadata_rules: str | Path | MetadataRules | None = None,
    ) -> None:
        if not valid_domain(domain):
            raise AtlasSyncError(f"invalid domain {domain!r}", hint=DOMAIN_HINT)
        self.client = client
        self.profile = profile if isinstance(profile, Profile) else load_profile(profile)
        if metadata_namespace or metadata_namespaces:
            # a native profile's names end with Atlas's metadata namespace (docs/existing-atlas.md)
            ns = Namespaces(metadata_namespace or DEFAULT_METADATA_NAMESPACE, dict(metadata_namespaces or {}))
            self.profile = dataclasses.replace(self.profile, namespaces=ns)
        self.domain = domain
        self.batch_size = batch_size
        self.parallel = parallel
        self.max_delete_percent = max_delete_percent
        if missing_datasets not in MISSING_DATASETS:
            raise AtlasSyncError(
                f"invalid missing_datasets {missing_datasets!r}", hint="one of " + ", ".join(MISSING_DATASETS)
            )
        self.missing_datasets = missing_datasets
        self._typedefs_ensured = False  # set by ensure_typedefs(): the scope types exist then
        given = metadata_rules if metadata_rules is not None else self.profile.metadata_rules
        self.metadata_rules: MetadataRules | None = (
            given if isinstance(given, MetadataRules) or given is None else load_rules(given)
        )
        self._term_guids: dict[str, str] | None = None  # the rules' terms, looked up once
        self._server_types: Any = None  # what the server held of the profile's types, read once

    @classmethod
    def from_settings(cls, client: Any, settings: Any) -> Publisher:
        """A publisher with the profile, domain and batching of :class:`atlas_sync.config.Settings`."""
        if not settings.domain:
            raise AtlasSyncError(
                "no domain", hint="set --domain, ATLAS_SYNC_DOMAIN or domain in atlas-sync.toml"
            )
        return cls(
            client,
            profile=settings.profile,
            domain=settings.domain,
            batch_size=settings.batch_size,
            parallel=settings.parallel,
            max_delete_percent=settings.max_delete_percent,
            metadata_namespace=settings.metadata_namespace,
            metadata_namespaces=settings.metadata_namespaces,
            missing_datasets=settings.missing_datasets,
            metadata_rules=getattr(settings, "metadata_rules", None),
        )

    @property
    def native(self) -> bool:
        """True for a profile on Atlas's own models (ownership by labels, references to what exists)."""
        return self.profile.mapping_file is not None

    # ------------------------------------------------------------------ reading
    def read(self, reader: str, paths: Sequence[str], **options: Any) -> LineageGraph:
        """Read lineage with a reader; the profile's reader options (e.g. Spark ``mode``) are defaults."""
        name, opts = self._reader_options(reader, paths, options)
        return registry.read(name, paths, **opts)

    def _reader_options(
        self, reader: str, paths: Sequence[str], options: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        name = registry.detect(paths[0]).name if reader == "auto" else reader
        # the profile's defaults go to the readers that take them (Spark's mode); the caller's are checked
        defaults = {**self.profile.reader_options, **_SYNC_READER_DEFAULTS.get(name, {})}
        taken = registry.accepted(registry.get(name), defaults)
        return name, {
            **{k: defaults[k] for k in taken},
            **{k: v for k, v in options.items() if v is not None},
        }

    # ------------------------------------------------------------------ typedefs
    def ensure_typedefs(self) -> int:
        """Register the profile's typedefs if needed; returns the number of write requests made."""
        from atlas_sync.typedefs import ensure_typedefs, load_bundle

        if not self.profile.typedef_sources:  # a native profile registers nothing
            self._typedefs_ensured = True
            return 0
        bundle = load_bundle(*self.profile.typedef_sources)
        result = ensure_typedefs(self.client, bundle, self._types())
        self._typedefs_ensured = True
        writes = int(getattr(result, "writes", 0) or 0)
        if writes:
            self._server_types = None  # what was read is out of date now
        return writes

    def _types(self) -> Any:
        """The server's defs of the profile's types and of those they refer to, read by name once per
        publisher (a few KiB; Atlas's whole type system is about 450 KiB): what the typedef check,
        the root types and the bookkeeping attributes are decided from."""
        if self._server_types is None:
            from atlas_sync.typedefs import load_bundle
            from atlas_sync.typedefs.engine import read_bundle_types, read_types_by_name

            if self.profile.typedef_sources and self.profile.mapping_file is None:
                bundle = load_bundle(*self.profile.typedef_sources)
                self._server_types = read_bundle_types(self.client, bundle)
            else:
                # (and a native profile's metadata record, read beside them: whether it is registered;
                # and what it registers of its own, the atlas profile's BI types)
                record = [self.profile.metadata_record[0]] if self.profile.metadata_record else []
                own: list[str] = []
                if self.profile.typedef_sources:
                    bundle = load_bundle(*self.profile.typedef_sources)
                    own = [*bundle.entries, *bundle.external_references()]
                names = dict.fromkeys([*self.profile.root_types(), *record, *own])
                self._server_types = read_types_by_name(self.client, list(names))
        return self._server_types

    def forget_types(self) -> None:
        """Read the server's types again before the next sync (e.g. after Atlas answered a type error:
        someone deleted or changed them); a long-running service calls this instead of reading every
        typedef for every sync."""
        self._server_types = None
        self._typedefs_ensured = False

    # ------------------------------------------------------------------ plan / apply
    @property
    def process_types(self) -> set[str]:
        schema = self.profile.schema
        return {t for t in self.profile.entity_types() if schema.is_a(t, "Process")}

    def plan(self, graph: LineageGraph, job: str | None = None, **options: Unpack[PlanKwargs]) -> Plan:
        """Diff what ``graph`` should produce for ``job`` against what Atlas holds; nothing is written.

        Every item is listed (a plan file holds them all), unless the graph is streamed (``stream``,
        or ``None`` and the graph is big): then the counts are complete and the first changes listed.
        """
        return self.plan_chunks([graph], job, **_streamed(options, graph))

    def plan_chunks(
        self, chunks: Iterable[LineageGraph], job: str | None = None, **options: Unpack[PlanKwargs]
    ) -> Plan:
        """:meth:`plan` of an input given as chunks (:meth:`read_chunks`); streamed unless ``stream=False``."""
        return self._run(chunks, job, options, dry_run=True).plan

    def apply(
        self, plan: Plan, *, purge: bool = False, progress: Progress | None = None, check: bool = True
    ) -> ApplyResult:
        """Apply a plan (a saved one, or one from :meth:`plan`): refused when Atlas changed since planning.
        ``check`` is kept for compatibility: a plan is always checked against Atlas before it is applied."""
        known = self._verify(plan)
        result = apply_plan(
            self.client,
            plan,
            known_guids=known,
            batch_size=self.batch_size,
            parallel=self.parallel,
            purge=purge,
            progress=progress,
        )
        # then the classification, label, term and business-metadata requests the plan lists
        from atlas_sync.reconcile.metadata import MetadataOps, apply_metadata

        todo = [
            (guid, MetadataOps.from_json(i.metadata))
            for i in plan.items
            if i.metadata and (guid := i.guid or result.guids.get(i.key) or known.get(i.key))
        ]
        if todo:
            result.requests += apply_metadata(self.client, todo)
            result.metadata += len(todo)
        return result

    def _verify(self, plan: Plan) -> dict[tuple[str, str], str]:
        from atlas_sync.reconcile.actual import fingerprint, job_key, read_entities, reference_attributes
        from atlas_sync.reconcile.digest import DIGEST_MARK, for_job

        if plan.domain != self.domain:
            raise AtlasSyncError(f"the plan is for domain {plan.domain!r}, not {self.domain!r}")
        headers = self.list_domain()  # (the root types the server has: a native profile names more)
        # (other tools' entities: referenced, or given metadata only)
        by_guid = {i.guid: i.key for i in plan.items if i.guid and _theirs(i, plan)}
        by_guid.update({h.guid: k for k, h in headers.items()})
        guids = [headers[i.key].guid for i in plan.items if i.action != "create" and i.key in headers]
        ref_attrs = reference_attributes(e.refs for e in plan.desired.values())
        current = read_entities(self.client, guids, by_guid, ref_attrs)
        stale: list[str] = []
        for i in plan.items:
            if _theirs(i, plan):
                continue  # not ours: never written (only its metadata requests), so nothing to protect
            if i.action == "create":
                if i.key in headers:
                    stale.append(f"{i.type_name} {i.qualified_name} now exists")
            elif i.fingerprint.startswith(DIGEST_MARK):
                # decided by the stored digest: Atlas moved on if it holds another one now
                now = current.get(i.key)
                attr = self.profile.digest_attribute
                if (
                    now is None
                    or attr is None
                    # (as the plan's job compared it: the entity's digest and that job's part)
                    or for_job(now.attributes.get(attr), job_key(plan.domain, plan.job))
                    != i.fingerprint[len(DIGEST_MARK) :]
                ):
                    stale.append(f"{i.type_name} {i.qualified_name} changed")
            elif fingerprint(current.get(i.key)) != i.fingerprint:
                stale.append(f"{i.type_name} {i.qualified_name} changed")
        if stale:
            raise AtlasSyncError(
                f"the saved plan no longer matches Atlas ({counted(len(stale), 'entity')} "
                f"{'differs' if len(stale) == 1 else 'differ'}, e.g. {stale[0]})",
                hint="re-run `atlas-sync plan` and apply the new plan",
            )
        return {k: h.guid for k, h in headers.items()}

    def sync(self, graph: LineageGraph, job: str | None = None, **options: Unpack[SyncKwargs]) -> SyncResult:
        """Plan and apply: after it, Atlas holds exactly what ``graph`` says for this job.

        An input with errors (``graph.problems`` of severity ``error``) publishes nothing, unless
        ``allow_partial``: then what was read is published, and nothing is deleted.

        ``stream``: where entities wait between reading and writing: ``False`` in memory, ``True`` in a
        temporary file; ``None`` (default) in a file only for graphs of more than ``STREAM_MIN_ENTITIES``
        datasets, columns, processes and column edges together. The result in Atlas is the same.
        """
        return self.sync_chunks([graph], job, **_streamed(options, graph))

    def sync_chunks(
        self, chunks: Iterable[LineageGraph], job: str | None = None, **options: Unpack[SyncKwargs]
    ) -> SyncResult:
        """:meth:`sync` for inputs given as chunks (:meth:`read_chunks`), streamed unless ``stream=False``.

        The whole input is read, rendered and checked (into the spool) before the first write, so an
        error anywhere still publishes nothing; then the plan is computed and applied a chunk at a
        time. ``on_read`` gets the input's problems once it has been read (e.g. to print warnings).
        """
        return self._run(chunks, job, options)

    def _run(
        self,
        chunks: Iterable[LineageGraph],
        job: str | None,
        options: Mapping[str, Any],
        *,
        dry_run: bool = False,
    ) -> SyncResult:
        """The one sync path: spool, render, then plan (and unless ``dry_run`` apply) chunk by chunk."""
        from atlas_sync.reconcile.stream import StreamSync

        streamed = options.get("stream") is not False
        term_guids = self._check_rules()  # before anything is read back or written
        rules = self.metadata_rules
        matched: set[int] = set()  # the rules that matched something in this input
        if rules is not None:
            chunks = _each(chunks, lambda chunk: rules.apply(chunk, matched))
        named = _MetadataNames()
        if self.profile.metadata_attribute is not None or self.profile.metadata_record is not None:
            chunks = _each(chunks, named.add)
        with StreamSync(self.client, self.profile, self.domain, memory=not streamed) as s, _settled_gc():
            for chunk in chunks:
                s.add_chunk(chunk)
                del chunk  # (held while the next one is read, two chunks would be alive at once)
            unmatched = rules.unmatched(matched) if rules is not None else []
            on_read = options.get("on_read")
            if on_read is not None:
                on_read(s.problems)
            if not dry_run:
                _check_input(s.problems, not s.is_empty, options.get("allow_partial", False))
            job = _check_job(job or s.job or "default")
            roots, attrs = self._scope_types(), self._server_attributes()
            if named:
                term_guids = {**term_guids, **self._check_input_metadata(named)}
            # checked once per publisher: a long-running service does not read them for every sync
            ensure = options.get("ensure_typedefs", True) and not dry_run and not self._typedefs_ensured
            receipt = None if dry_run else self._receipt(s, job, roots, attrs, options, term_guids)
            if receipt is not None and receipt.holds():
                # Atlas holds what the last sync of this very input left there: nothing to render
                writes = self.ensure_typedefs() if ensure else 0
                held = receipt.unchanged_plan(self.profile.name)
                held.warnings.extend(unmatched)
                return SyncResult(plan=held, applied=None, typedef_writes=writes)
            known = None
            if receipt is not None:
                receipt.stamp(early=True)  # (where one exists: before anything of the job is read)
                known = receipt.listed()  # (another input: the job's entities as the receipt lists them)
            # The listing runs while the input renders; it is of Atlas before this run writes anything.
            listing = {k: v for k, v in attrs.items() if k != "metadata_attribute"}
            s.start_listing(roots, job=job, **listing, refresh=options.get("refresh", False), known=known)
            # Render (and validate) before the first write: a template error leaves no typedefs behind.
            s.render(job)
            writes = 0
            if ensure:  # the types now hold every root and attribute of the profile (nothing read again)
                writes = self.ensure_typedefs()
                roots, attrs = self._scope_types(), self._server_attributes()
                if receipt is None and not dry_run:  # (the keys were just added: a receipt from now on)
                    receipt = self._receipt(s, job, roots, attrs, options, term_guids)
            try:
                if (
                    rules is not None
                    and not dry_run
                    and self.profile.metadata_attribute is not None
                    and attrs.get("metadata_attribute") is None
                ):
                    raise AtlasSyncError(
                        f"the server's {self.profile.name} types lack {self.profile.metadata_attribute!r}, "
                        f"where a sync records what the metadata rules ({rules.file}) added",
                        hint="sync once without --no-typedefs (or run `atlas-sync typedefs apply`) to add it",
                    )
                if dry_run and attrs.get("metadata_attribute") is None:
                    # a plan before the profile's types hold the record: nothing is recorded yet
                    attrs = {**attrs, "metadata_attribute": self.profile.metadata_attribute}
                record = self._metadata_record(wanted=rules is not None or bool(named), dry_run=dry_run)
                extra: dict[str, Any] = {"term_guids": term_guids}
                if record is not None:
                    writes += record[1]
                    extra["metadata_record"] = record[0]
                if receipt is not None:
                    receipt.stamp()
                out = self._apply_run(s, job, roots, {**attrs, **extra}, options, dry_run, streamed)
                out.plan.warnings.extend(unmatched)
                if receipt is not None:
                    receipt.finish(s.spool)
                    writes += receipt.typedef_writes
                if options.get("allow_empty") and s.is_empty and not dry_run and not self.native and roots:
                    # a job synced to nothing keeps no receipt (a teardown of the job deletes it itself)
                    from atlas_sync.reconcile.receipt import delete_receipts

                    delete_receipts(self.client, self.domain, job=job)
            except AtlasError:
                self.forget_types()  # e.g. a type error: someone changed the types; check them next time
                raise
            return SyncResult(plan=out.plan, applied=out.applied, typedef_writes=writes)

    def _receipt(
        self,
        s: Any,
        job: str,
        roots: list[str],
        attrs: Mapping[str, Any],
        options: Mapping[str, Any],
        term_guids: Mapping[str, str],
    ) -> Any:
        """The job's receipt (reconcile.receipt), for a sync that may use one: a big, whole input
        (not partial, no errors), no ``refresh``, the profile's keys and digest on the server's types,
        writes applied when answered; ``None`` otherwise."""
        from atlas_sync.reconcile.receipt import RECEIPT_MIN, JobReceipt, fingerprint

        key_attr = attrs.get("job_key_attribute")
        if (
            options.get("refresh")
            or s.partial
            or any(p.severity == "error" for p in s.problems)
            or self.native
            or not roots
            or key_attr is None
            or attrs.get("digest_attribute") is None
            or attrs.get("scope_attribute") is None
            or getattr(self.client, "writes_are_queued", False)
            or (self.metadata_rules is not None and self.metadata_rules.foreign)
            or s.processes + s.spool.dataset_count() < RECEIPT_MIN
        ):
            return None
        context = {
            "profile": self.profile.fingerprint(),
            "domain": self.domain,
            "job": job,
            "attributes": dict(attrs),
            "terms": dict(term_guids),
        }
        return JobReceipt(
            self.client,
            self.domain,
            job,
            roots,
            key_attr,
            fingerprint(s.spool, context),
            may_register=options.get("ensure_typedefs", True),
        )

    def _apply_run(
        self,
        s: Any,
        job: str,
        roots: list[str],
        attrs: Mapping[str, Any],
        options: Mapping[str, Any],
        dry_run: bool,
        streamed: bool,
    ) -> Any:
        from atlas_sync.reconcile.stream import SHOWN_ITEMS

        return s.run(
            job=job,
            root_types=roots,
            process_types=self.process_types,
            options=PlanOptions(
                # a partial input (a dbt selection or run) is part of the job's lineage: it deletes nothing
                allow_delete=options.get("allow_delete", True) and not s.partial,
                max_delete_percent=self.max_delete_percent,
                force=options.get("force", False),
                input_has_errors=any(p.severity == "error" for p in s.problems),
                allow_empty=options.get("allow_empty", False),
                partial=s.partial,
                missing_datasets=self.missing_datasets,
            ),
            batch_size=self.batch_size,
            parallel=options.get("parallel") or self.parallel,
            purge=options.get("purge", False),
            progress=options.get("progress"),
            dry_run=dry_run,
            listed=SHOWN_ITEMS if streamed else None,
            digest_attribute=attrs["digest_attribute"],
            scope_attribute=attrs["scope_attribute"],
            job_key_attribute=attrs["job_key_attribute"],
            refresh=options.get("refresh", False),
            metadata_attribute=attrs.get("metadata_attribute"),
            metadata_record=attrs.get("metadata_record"),
            term_guids=attrs.get("term_guids") or {},
        )

    def _metadata_record(self, *, wanted: bool, dry_run: bool) -> tuple[tuple[str, str], int] | None:
        """A native profile's record of what atlas-sync added (a business attribute on any entity,
        ``metadata_record``) and the typedef writes made for it: registered (one write, once) by the
        first sync that publishes metadata; ``None`` while it is not and the sync publishes none (or
        for a profile with an attribute of its own)."""
        record = self.profile.metadata_record
        if record is None or self.profile.metadata_attribute is not None:
            return None
        bm, attr = record
        held = self._types().get(bm)
        if held is not None and any(a.get("name") == attr for a in held.get("attributeDefs") or []):
            return record, 0
        if not wanted:
            return None  # nothing was ever recorded: nothing to reconcile
        if dry_run:
            return record, 0  # (a plan: nothing recorded yet)
        from atlas_sync.reconcile.metadata import record_typedef

        self.client.create_typedefs({"businessMetadataDefs": [record_typedef(bm, attr)]})
        self.forget_types()
        self._typedefs_ensured = True
        return record, 1

    def _check_rules(self) -> dict[str, str]:
        """Check the metadata rules' names against the profile's typedef bundles and Atlas (one read
        of the type headers; a def read only for a classification given attributes) and look up their
        glossary terms (one read): an unknown name is an error naming the rule, before anything is
        written. Returns the terms' guids. Done once per publisher."""
        rules = self.metadata_rules
        if rules is None:
            return {}
        if self._term_guids is not None:
            return self._term_guids
        if self.profile.metadata_attribute is None and self.profile.metadata_record is None:
            raise AtlasSyncError(
                f"profile {self.profile.name!r} cannot publish metadata rules ({rules.file}): it has no "
                "metadata_attribute (or, with Atlas's own types, metadata_record) to record what "
                "atlas-sync adds",
                hint="add metadata_attribute or metadata_record to the profile (docs/metadata.md)",
            )
        if not self.native and rules.foreign:
            raise rules.foreign[0].error(
                rules.file,
                f"foreign = true: the {self.profile.name} profile's entities are all atlas-sync's "
                "(it applies under the atlas profile, to tables a hook created)",
            )
        from atlas_sync.atlas.metadata import term_guids
        from atlas_sync.lineage.rules import check_names

        def lookup(name: str) -> Mapping[str, Any] | None:
            full = any(
                (c.name == name and c.attributes) for r in rules.rules for c in r.classifications
            ) or any(name in r.business for r in rules.rules)
            return self._lookup_type(name, full=full)

        check_names(rules, lookup)
        wanted = {t for r in rules.rules for t in r.terms}
        found = term_guids(self.client, wanted) if wanted else {}
        for r in rules.rules:
            for t in r.terms:
                if t not in found:
                    raise r.error(
                        rules.file,
                        f"unknown glossary term {t!r} (no AtlasGlossaryTerm of that qualifiedName)",
                    )
        self._term_guids = found
        return found

    def read_chunks(self, reader: str, paths: Sequence[str], **options: Any) -> Iterator[LineageGraph]:
        """:meth:`read` as a sequence of self-contained chunks (one chunk for readers that do not chunk)."""
        name, opts = self._reader_options(reader, paths, options)
        return registry.read_chunks(name, paths, **opts)

    # ------------------------------------------------------------------ teardown / rebuild
    def plan_teardown(self, *, purge: bool = False, batch_size: int | None = None) -> TeardownPlan:
        """What :meth:`teardown` would delete and purge, from one listing of Atlas; nothing is written."""
        from atlas_sync.reconcile.teardown import DELETE_BATCH, TeardownPlan, list_domain

        roots = self._existing_root_types()
        scope = self._server_attributes()["scope_attribute"] if roots else None
        entities = list_domain(self.client, roots, self.domain, labels=self.native, scope_attribute=scope)
        owned = self._owned_types()
        return TeardownPlan(
            domain=self.domain,
            profile=self.profile.name,
            purge=purge,
            entities=entities,
            owned_types=owned,
            process_types=frozenset(self.process_types),
            batch_size=batch_size or DELETE_BATCH,
        )

    def teardown(
        self,
        *,
        purge: bool = False,
        typedefs: bool = False,
        progress: Progress | None = None,
        plan: TeardownPlan | None = None,
        parallel: int | None = None,
        batch_size: int | None = None,
    ) -> TeardownResult:
        """Delete every entity of the domain; optionally purge them and delete the profile's typedefs
        when nothing else uses them. A teardown stopped at any point and run again finishes the job.
        How it deletes: :mod:`atlas_sync.reconcile.teardown`."""
        from atlas_sync.reconcile.teardown import run_teardown

        result = TeardownResult(domain=self.domain)
        if plan is None or plan.purge != purge:
            plan = self.plan_teardown(purge=purge, batch_size=batch_size)
        out = run_teardown(self.client, plan, parallel=parallel or self.parallel, progress=progress)
        result.deleted, result.purged, result.requests = out.deleted, out.purged, out.requests
        if not self.native:  # the jobs' receipts (reconcile.receipt) go with the domain
            from atlas_sync.reconcile.receipt import delete_receipts

            result.requests += delete_receipts(self.client, self.domain, purge=purge)
        if typedefs and self.profile.typedef_sources:
            from atlas_sync.typedefs import delete_typedefs, load_bundle

            bundle = load_bundle(*self.profile.typedef_sources)
            res = delete_typedefs(self.client, bundle)
            result.typedefs_deleted = list(getattr(res, "deleted", []) or [])
        return result

    def plan_teardown_job(self, job: str) -> Plan:
        """What :meth:`teardown_job` would delete: the plan of syncing ``job`` to nothing (nothing is
        written). Its deletes are the job's own entities; a dataset (or column) the job created that
        another entity still refers to stays, and the plan's warnings say how many."""
        return (
            self._without_rules()
            ._run([LineageGraph(job=job)], _check_job(job), self._empty_options(), dry_run=True)
            .plan
        )

    def teardown_job(
        self,
        job: str,
        *,
        purge: bool = False,
        progress: Progress | None = None,
        parallel: int | None = None,
        batch_size: int | None = None,
        plan: Plan | None = None,
    ) -> SyncResult:
        """Delete what ``job`` owns in the domain, as :meth:`plan_teardown_job` (or ``plan``, from it)
        says, the way a teardown deletes (:mod:`atlas_sync.reconcile.teardown`: owned entities first,
        ``batch_size`` guids a request, ``purge``: hard-deleted and purged too); what other jobs still
        use passes to one of them; then the job's receipt goes. Other jobs' entities are never
        named. Stopped at any point, the same call finishes the job (with ``purge``, what an earlier
        run deleted is purged)."""
        from atlas_sync.reconcile import failsafes
        from atlas_sync.reconcile.actual import job_key, search_roots
        from atlas_sync.reconcile.teardown import DELETE_BATCH, DomainEntity, TeardownPlan, run_teardown

        job = _check_job(job)
        if plan is None or plan.job != job:
            plan = self.plan_teardown_job(job)
        gone = [
            DomainEntity(i.guid, i.type_name, i.qualified_name, "ACTIVE")
            for i in plan.by_action("delete")
            if i.guid
        ]
        todo = TeardownPlan(
            domain=self.domain,
            profile=self.profile.name,
            purge=purge,
            entities=gone,
            owned_types=self._owned_types(),
            process_types=frozenset(self.process_types),
            batch_size=batch_size or DELETE_BATCH,
        )
        out = run_teardown(self.client, todo, parallel=parallel or self.parallel, progress=progress)
        applied = ApplyResult(deleted=out.deleted, purged=out.purged, requests=out.requests)
        roots = self._existing_root_types()
        key_attr = self._server_attributes()["job_key_attribute"] if roots else None
        if plan.handover:  # (after the deletes: a run stopped before finds them again)
            applied.requests += failsafes.hand_over(self.client, plan.handover, self.domain, key_attr)
        if purge and key_attr is not None:
            # what an earlier teardown (or sync) of the job deleted without purging: purged now
            flt = {"attributeName": key_attr, "operator": "eq", "attributeValue": job_key(self.domain, job)}
            hits = search_roots(
                self.client, roots, entity_filters=flt, exclude_deleted=False, attributes=["qualifiedName"]
            )
            deleted = [str(h["guid"]) for h in hits if h.get("status") == "DELETED"]
            for lo in range(0, len(deleted), 1000):
                applied.requests += self.client.purge_entities(deleted[lo : lo + 1000]).requests
            applied.purged += len(deleted)
        if not self.native and roots:
            from atlas_sync.reconcile.receipt import delete_receipts

            applied.requests += delete_receipts(self.client, self.domain, purge=purge, job=job)
        done = applied.deleted or applied.purged or plan.handover
        return SyncResult(plan=plan, applied=applied if done else None)

    def _owned_types(self) -> frozenset[str]:
        """Entity types of the profile Atlas deletes with their owner (a dataset's columns)."""
        if not self.profile.typedef_sources:
            return frozenset()
        from atlas_sync.reconcile.teardown import owned_types
        from atlas_sync.typedefs import load_bundle

        bundle = load_bundle(*self.profile.typedef_sources)
        return owned_types(e.atlas() for e in bundle if e.category == "RELATIONSHIP")

    def _empty_options(self) -> dict[str, Any]:
        return {"allow_empty": True, "force": True, "stream": False, "ensure_typedefs": False}

    def _without_rules(self) -> Publisher:
        """This publisher without metadata rules: a teardown renders nothing for them to tag."""
        if self.metadata_rules is None:
            return self
        other = copy.copy(self)
        other.metadata_rules = None
        return other

    def _scope_types(self) -> list[str]:
        """The root types to list the domain by: all of the profile's once its typedefs are ensured;
        before that only those the server has (a plan against a fresh Atlas lists nothing, not a 400)."""
        if self._typedefs_ensured:
            return self.profile.root_types()
        return self._existing_root_types()

    def list_domain(self) -> dict[tuple[str, str], ActualHeader]:
        """Every ACTIVE entity of the domain, as headers (guid, type, qualifiedName, owner) by
        (type, qualifiedName): what ``show`` draws and ``teardown`` deletes. Lists the whole domain
        (by its key on Atlas's index); a job's sync never needs this."""
        return self._list_domain(self._existing_root_types())

    def held_under_other_profiles(self) -> dict[str, int]:
        """The built-in profiles other than this publisher's under which the domain holds ACTIVE
        entities, and how many: counted by the domain's key on Atlas's index (one header of a search
        per root type the server has; a type it lacks counts nothing). Under the ``atlas`` profile
        the domain is a label, which Atlas's index cannot match (a scan of every dataset and process):
        that profile is not counted. What ``show`` and ``teardown`` say when this profile finds
        nothing, or leaves something."""
        from atlas_sync.atlas.errors import BadRequestError, NotFoundError
        from atlas_sync.reconcile.actual import scope_key

        out: dict[str, int] = {}
        for name in OTHER_PROFILES:
            if name == self.profile.name:
                continue
            other = load_profile(name)
            if other.scope_attribute is None or set(other.root_types()) & set(self.profile.root_types()):
                continue
            flt = {
                "attributeName": other.scope_attribute,
                "operator": "eq",
                "attributeValue": scope_key(self.domain),
            }
            total = 0
            for t in other.root_types():
                try:
                    total += self.client.search_count(t, entity_filters=flt) or 0
                except (BadRequestError, NotFoundError):
                    continue  # the server lacks the type (or its key): nothing of it there
            if total:
                out[name] = total
        return out

    def _list_domain(self, roots: list[str]) -> dict[tuple[str, str], ActualHeader]:
        """The domain's entities of ``roots`` (by the domain's key when the server's types have it)."""
        scope = self._server_attributes()["scope_attribute"] if roots else None
        return list_scope(self.client, roots, self.domain, labels=self.native, scope_attribute=scope)

    def _lookup_type(self, name: str, *, full: bool = False) -> Mapping[str, Any] | None:
        """A classification's or business metadata's def (with ``category``) from the profile's bundles,
        else Atlas: its type headers read once per publisher, a full def only when ``full``."""
        cache = self.__dict__.setdefault("_type_cache", {})
        if "bundle" not in cache:
            from atlas_sync.typedefs import load_bundle

            sources = self.profile.typedef_sources
            cache["bundle"] = load_bundle(*sources) if sources else None
        bundle = cache["bundle"]
        if bundle is not None and name in bundle:
            entry = bundle.entries[name]
            return {**entry.atlas(), "category": entry.category}
        if "headers" not in cache:
            cache["headers"] = {
                h["name"]: h.get("category", "")
                for h in self.client.get_typedef_headers()
                if isinstance(h, dict) and isinstance(h.get("name"), str)
            }
        category = cache["headers"].get(name)
        defs = cache.setdefault("defs", {})
        if category is None:
            # not among the headers: asked by name before it counts as unknown (a real Atlas 2.1.0 left
            # a business metadata created a moment before out of its headers, yet answered it by name)
            if name not in defs:
                found = self.client.get_typedef_by_name(name)
                defs[name] = {**found, "category": found.get("category", "")} if found else None
            return defs[name]
        if full and name not in defs:
            defs[name] = {**(self.client.get_typedef_by_name(name) or {}), "category": category}
        return defs.get(name) or {"name": name, "category": category}

    def _check_input_metadata(self, named: _MetadataNames) -> dict[str, str]:
        """The classifications, business metadata and terms the input itself names (a graph document
        may carry them), checked as a rules file's are, before anything is written; the terms' guids."""
        from atlas_sync.atlas.metadata import term_guids

        for name in sorted(named.classifications):
            d = self._lookup_type(name)
            if d is None or d.get("category") != "CLASSIFICATION":
                raise InputError(
                    f"the input names classification {name!r}, which neither Atlas nor the profile's "
                    "typedef bundles define",
                    hint="define it (a typedef bundle of the profile) or remove it from the input",
                )
        for name in sorted(named.business):
            d = self._lookup_type(name)
            if d is None or d.get("category") != "BUSINESS_METADATA":
                raise InputError(
                    f"the input names business metadata {name!r}, which neither Atlas nor the profile's "
                    "typedef bundles define"
                )
        wanted = named.terms - set(self._term_guids or {})
        found = term_guids(self.client, wanted) if wanted else {}
        missing = sorted(wanted - set(found))
        if missing:
            raise InputError(f"the input names glossary term {missing[0]!r}, which Atlas lacks")
        return found

    def _server_attributes(self) -> dict[str, str | None]:
        """The profile's ``digest_attribute``, ``scope_attribute`` and ``job_key_attribute``, each when the server's types have
        it (an older bundle registered without it: a search naming it is a 400, and Atlas would drop
        it from writes); ``None`` otherwise. Typedefs are read only when not ensured in this run."""
        wanted = {
            k: getattr(self.profile, k)
            for k in ("digest_attribute", "scope_attribute", "job_key_attribute", "metadata_attribute")
        }
        roots = self.profile.root_types()
        for key, attr in wanted.items():
            missing = [t for t in roots if attr and attr not in self.profile.schema.own_attributes.get(t, {})]
            if missing:
                raise AtlasSyncError(
                    f"profile {self.profile.name!r}: {key} {attr!r} is not an attribute of {', '.join(missing)}",
                    hint=f"declare it (a string) in the profile's typedefs, or remove {key}",
                )
        if self._typedefs_ensured or not any(wanted.values()):
            return wanted
        types = self._types()
        for t in roots:
            d = types.get(t)
            held = {a.get("name") for a in (d or {}).get("attributeDefs") or []}
            wanted = {k: a if a in held else None for k, a in wanted.items()}
        return wanted

    def _existing_root_types(self) -> list[str]:
        """Root types that exist on the server (a search on an unknown type is a 400)."""
        types = self._types()
        return [t for t in self.profile.root_types() if t in types]

    def rebuild(
        self,
        graph: LineageGraph,
        job: str | None = None,
        *,
        progress: Progress | None = None,
        parallel: int | None = None,
        teardown_progress: Progress | None = None,
        plan: TeardownPlan | None = None,
    ) -> SyncResult:
        """Teardown (with purge) + typedefs + sync: a fresh copy of the domain from the input. Stopped
        at any point and run again, it finishes the job (the teardown takes what the first run wrote).
        ``teardown_progress`` / ``progress``: the two phases' progress; ``plan``: from
        :meth:`plan_teardown` ``(purge=True)``, when the caller has shown it."""
        self.teardown(purge=True, progress=teardown_progress, plan=plan, parallel=parallel)
        return self.sync(graph, job, progress=progress, parallel=parallel)


def _theirs(item: Any, plan: Plan) -> bool:
    """A saved plan's item for another tool's entity: referenced, or given metadata requests only."""
    return bool(item.action == "referenced" or (item.metadata and item.key not in plan.desired))


@dataclass
class _MetadataNames:
    """The classification, business-metadata and term names a graph's items carry."""

    classifications: set[str] = field(default_factory=set)
    business: set[str] = field(default_factory=set)
    terms: set[str] = field(default_factory=set)

    def add(self, graph: LineageGraph) -> None:
        items: list[Any] = [*graph.datasets, *graph.processes]
        items += [c for d in graph.datasets for c in d.columns]
        for item in items:
            self.classifications.update(c.name for c in item.classifications)
            self.business.update(item.business or {})
            self.terms.update(item.terms)

    def __bool__(self) -> bool:
        return bool(self.classifications or self.business or self.terms)


def _each(chunks: Iterable[LineageGraph], visit: Callable[[LineageGraph], object]) -> Iterator[LineageGraph]:
    """``chunks``, each visited on its way, none held while the next one is read (at 5,000 processes
    a chunk is ~85 MB of models)."""
    for chunk in chunks:
        visit(chunk)
        yield chunk
        del chunk


@contextlib.contextmanager
def _settled_gc() -> Iterator[None]:
    """Keep what exists before a sync (the input graph, the caller's objects) out of the garbage
    collector's full passes while it runs: rendering allocates millions of short-lived objects, and
    each full pass walked the whole input again (a third of the client's CPU at 125,000 entities).
    Objects made during the sync are collected as usual; ``gc.unfreeze`` gives the rest back. A
    process that froze objects itself (a pre-forking server) is left as it is: unfreezing would undo
    its own freeze."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
