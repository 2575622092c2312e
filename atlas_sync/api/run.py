"""The one sync path of the API: metadata rules and names checked, then a :class:`SyncSession`
(reconcile.session) through its phases."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from atlas_sync.api.gc import settled_gc
from atlas_sync.api.options import SyncOptions, check_input, check_job
from atlas_sync.api.results import SyncResult
from atlas_sync.api.rules import MetadataNames, check_input_metadata, check_rules
from atlas_sync.atlas import AtlasError
from atlas_sync.errors import AtlasSyncError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.reconcile.plan import PlanOptions

if TYPE_CHECKING:
    from atlas_sync.api import Publisher


def run(
    pub: Publisher,
    chunks: Iterable[LineageGraph],
    job: str | None,
    options: SyncOptions,
    *,
    dry_run: bool = False,
) -> SyncResult:
    """The one sync path: spool, render, then plan (and unless ``dry_run`` apply) chunk by chunk.
    After an Atlas error everything read from the server is read again by the next sync (a type
    or glossary term someone deleted or created again: :class:`ServerCatalog`)."""
    try:
        return sync_path(pub, chunks, job, options, dry_run=dry_run)
    except AtlasError:
        pub.catalog.invalidate()
        raise


def sync_path(
    pub: Publisher,
    chunks: Iterable[LineageGraph],
    job: str | None,
    options: SyncOptions,
    *,
    dry_run: bool = False,
) -> SyncResult:
    from atlas_sync.reconcile.stream import StreamSync

    streamed = options.stream is not False
    term_guids = check_rules(pub)  # before anything is read back or written
    rules = pub.metadata_rules
    matched: set[int] = set()  # the rules that matched something in this input
    if rules is not None:
        chunks = each(chunks, lambda chunk: rules.apply(chunk, matched))
    named = MetadataNames()
    if pub.profile.metadata_attribute is not None or pub.profile.metadata_record is not None:
        chunks = each(chunks, named.add)
    with StreamSync(pub.client, pub.profile, pub.domain, memory=not streamed) as s, settled_gc():
        for chunk in chunks:
            s.add_chunk(chunk)
            del chunk  # (held while the next one is read, two chunks would be alive at once)
        unmatched = rules.unmatched(matched) if rules is not None else []
        on_read = options.on_read
        if on_read is not None:
            on_read(s.problems)
        if not dry_run:
            check_input(s.problems, not s.is_empty, options.allow_partial)
        job = check_job(job or s.job or "default")
        roots, attrs = pub.catalog.scope_types(), pub.catalog.attributes()
        if named:
            term_guids = {**term_guids, **check_input_metadata(pub, named)}
        # checked once per publisher: a long-running service does not read them for every sync
        ensure = options.ensure_typedefs and not dry_run and not pub.catalog.ensured
        receipt = None if dry_run else job_receipt(pub, s, job, roots, attrs, options, term_guids)
        if receipt is not None and receipt.holds():
            # Atlas holds what the last sync of this very input left there: nothing to render
            writes = pub.ensure_typedefs() if ensure else 0
            held = receipt.unchanged_plan(pub.profile.name)
            held.warnings.extend(unmatched)
            return SyncResult(plan=held, applied=None, typedef_writes=writes)
        known = None
        if receipt is not None:
            receipt.stamp(early=True)  # (where one exists: before anything of the job is read)
            known = receipt.listed()  # (another input: the job's entities as the receipt lists them)
        # The listing runs while the input renders; it is of Atlas before this run writes anything.
        listing = {k: v for k, v in attrs.items() if k != "metadata_attribute"}
        s.start_listing(roots, job=job, **listing, refresh=options.refresh, known=known)
        # Render (and validate) before the first write: a template error leaves no typedefs behind.
        s.render(job)
        writes = 0
        if ensure:  # the types now hold every root and attribute of the profile (nothing read again)
            writes = pub.ensure_typedefs()
            roots, attrs = pub.catalog.scope_types(), pub.catalog.attributes()
            if receipt is None and not dry_run:  # (the keys were just added: a receipt from now on)
                receipt = job_receipt(pub, s, job, roots, attrs, options, term_guids)
        if (
            rules is not None
            and not dry_run
            and pub.profile.metadata_attribute is not None
            and attrs.get("metadata_attribute") is None
        ):
            raise AtlasSyncError(
                f"the server's {pub.profile.name} types lack {pub.profile.metadata_attribute!r}, "
                f"where a sync records what the metadata rules ({rules.file}) added",
                hint="sync once without --no-typedefs (or run `atlas-sync typedefs apply`) to add it",
            )
        if dry_run and attrs.get("metadata_attribute") is None:
            # a plan before the profile's types hold the record: nothing is recorded yet
            attrs = {**attrs, "metadata_attribute": pub.profile.metadata_attribute}
        record = pub.catalog.metadata_record(wanted=rules is not None or bool(named), dry_run=dry_run)
        extra: dict[str, Any] = {"term_guids": term_guids}
        if record is not None:
            writes += record[1]
            extra["metadata_record"] = record[0]
        if receipt is not None:
            receipt.stamp()
        out = apply_run(pub, s, job, roots, {**attrs, **extra}, options, dry_run, streamed)
        out.plan.warnings.extend(unmatched)
        if receipt is not None:
            receipt.finish(s.spool)
            writes += receipt.typedef_writes
        if options.allow_empty and s.is_empty and not dry_run and not pub.native and roots:
            # a job synced to nothing keeps no receipt (a teardown of the job deletes it itself)
            from atlas_sync.reconcile.receipt import delete_receipts

            delete_receipts(pub.client, pub.domain, job=job)
        return SyncResult(plan=out.plan, applied=out.applied, typedef_writes=writes)


def job_receipt(
    pub: Publisher,
    s: Any,
    job: str,
    roots: list[str],
    attrs: Mapping[str, Any],
    options: SyncOptions,
    term_guids: Mapping[str, str],
) -> Any:
    """The job's receipt (reconcile.receipt), for a sync that may use one: a big, whole input
    (not partial, no errors), no ``refresh``, the profile's keys and digest on the server's types,
    writes applied when answered; ``None`` otherwise."""
    from atlas_sync.reconcile.receipt import RECEIPT_MIN, JobReceipt, fingerprint

    key_attr = attrs.get("job_key_attribute")
    if (
        options.refresh
        or s.partial
        or any(p.severity == "error" for p in s.problems)
        or pub.native
        or not roots
        or key_attr is None
        or attrs.get("digest_attribute") is None
        or attrs.get("scope_attribute") is None
        or getattr(pub.client, "writes_are_queued", False)
        or (pub.metadata_rules is not None and pub.metadata_rules.foreign)
        or s.processes + s.spool.dataset_count() < RECEIPT_MIN
    ):
        return None
    context = {
        "profile": pub.profile.fingerprint(),
        "domain": pub.domain,
        "job": job,
        "attributes": dict(attrs),
        "terms": dict(term_guids),
    }
    return JobReceipt(
        pub.client,
        pub.domain,
        job,
        roots,
        key_attr,
        fingerprint(s.spool, context),
        may_register=options.ensure_typedefs,
    )


def apply_run(
    pub: Publisher,
    s: Any,
    job: str,
    roots: list[str],
    attrs: Mapping[str, Any],
    options: SyncOptions,
    dry_run: bool,
    streamed: bool,
) -> Any:
    from atlas_sync.reconcile.stream import SHOWN_ITEMS

    return s.run(
        job=job,
        root_types=roots,
        process_types=pub.process_types,
        options=PlanOptions(
            # a partial input (a dbt selection or run) is part of the job's lineage: it deletes nothing
            allow_delete=options.allow_delete and not s.partial,
            max_delete_percent=pub.max_delete_percent,
            force=options.force,
            input_has_errors=any(p.severity == "error" for p in s.problems),
            allow_empty=options.allow_empty,
            partial=s.partial,
            missing_datasets=pub.missing_datasets,
        ),
        batch_size=pub.batch_size,
        parallel=options.parallel or pub.parallel,
        purge=options.purge,
        progress=options.progress,
        dry_run=dry_run,
        listed=SHOWN_ITEMS if streamed else None,
        digest_attribute=attrs["digest_attribute"],
        scope_attribute=attrs["scope_attribute"],
        job_key_attribute=attrs["job_key_attribute"],
        refresh=options.refresh,
        metadata_attribute=attrs.get("metadata_attribute"),
        metadata_record=attrs.get("metadata_record"),
        term_guids=attrs.get("term_guids") or {},
    )


def without_rules(pub: Publisher) -> Publisher:
    """This publisher without metadata rules: a teardown renders nothing for them to tag."""
    if pub.metadata_rules is None:
        return pub
    other = copy.copy(pub)
    other.metadata_rules = None
    return other


def each(chunks: Iterable[LineageGraph], visit: Callable[[LineageGraph], object]) -> Iterator[LineageGraph]:
    """``chunks``, each visited on its way, none held while the next one is read (at 5,000 processes
    a chunk is ~85 MB of models)."""
    for chunk in chunks:
        visit(chunk)
        yield chunk
        del chunk
