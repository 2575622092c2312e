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
from atlas_sync.reconcile.bookkeeping import Bookkeeping
from atlas_sync.reconcile.catalog import ServerAttributes
from atlas_sync.reconcile.plan import PlanOptions
from atlas_sync.reconcile.session import Spooled, SyncSession, SyncTarget
from atlas_sync.reconcile.writer import SHOWN_ITEMS, SyncWriter, WriteSettings

if TYPE_CHECKING:
    from atlas_sync.api import Publisher
    from atlas_sync.reconcile.receipt import JobReceipt


def run(
    pub: Publisher,
    chunks: Iterable[LineageGraph],
    job: str | None,
    options: SyncOptions,
    *,
    writer: type[SyncWriter] = SyncWriter,
) -> SyncResult:
    """The one sync path: spool, render, then plan and write chunk by chunk (``writer``
    :class:`RecordingWriter`: a plan, which records what a sync would write).
    After an Atlas error everything read from the server is read again by the next sync (a type
    or glossary term someone deleted or created again: :class:`ServerCatalog`)."""
    try:
        return sync_path(pub, chunks, job, options, writer=writer)
    except AtlasError:
        pub.catalog.invalidate()
        raise


def sync_path(
    pub: Publisher,
    chunks: Iterable[LineageGraph],
    job: str | None,
    options: SyncOptions,
    *,
    writer: type[SyncWriter] = SyncWriter,
) -> SyncResult:
    """The phases of a :class:`SyncSession`, with the API's checks and the job's receipt between them."""
    dry_run = writer.recording  # (a plan: no input refusal, typedefs, receipt or record registered)
    streamed = options.stream is not False
    catalog = pub.catalog
    term_guids = check_rules(pub)  # before anything is read back or written
    rules = pub.metadata_rules
    matched: set[int] = set()  # the rules that matched something in this input
    if rules is not None:
        chunks = each(chunks, lambda chunk: rules.apply(chunk, matched))
    named = MetadataNames()
    if pub.profile.bookkeeping.metadata is not None or pub.profile.metadata_record is not None:
        chunks = each(chunks, named.add)
    with SyncSession(pub.client, pub.profile, pub.domain, memory=not streamed) as session, settled_gc():
        s = session.stream
        spooled = session.read(chunks)  # 1. the whole input, checked
        unmatched = rules.unmatched(matched) if rules is not None else []
        if options.on_read is not None:
            options.on_read(spooled.problems)
        if not dry_run:
            check_input(spooled.problems, not spooled.is_empty, options.allow_partial)
        job = check_job(job or spooled.job or "default")
        roots, bk = catalog.scope_types(), catalog.bookkeeping()
        if named:
            term_guids = {**term_guids, **check_input_metadata(pub, named)}
        # checked once per publisher: a long-running service does not read them for every sync
        ensure = options.ensure_typedefs and not dry_run and not catalog.ensured
        receipt = None if dry_run else job_receipt(pub, s, job, roots, bk, options, term_guids)
        if receipt is not None and receipt.holds():
            # Atlas holds what the last sync of this very input left there: nothing to render
            writes = catalog.ensure_typedefs() if ensure else 0
            held = receipt.unchanged_plan(pub.profile.name)
            held.warnings.extend(unmatched)
            return SyncResult(plan=held, applied=None, typedef_writes=writes)
        # (another input: the job's entities as the receipt lists them)
        known = receipt.listed() if receipt is not None else None
        target = sync_target(pub, spooled, job, roots, options)
        listed = session.list_job(spooled, target, ServerAttributes(bk), known)  # 2. before any write
        rendered = session.render(listed)  # 3. before the typedefs: a template error leaves none behind

        def register() -> tuple[ServerAttributes, int, list[str]]:
            """4. the typedefs, then what their attributes are on the server now."""
            nonlocal roots, bk, receipt
            writes = 0
            if ensure:  # the types now hold every root and attribute of the profile (nothing read again)
                writes = catalog.ensure_typedefs()
                roots, bk = catalog.scope_types(), catalog.bookkeeping()
                if receipt is None and not dry_run:  # (the keys were just added: a receipt from now on)
                    receipt = job_receipt(pub, s, job, roots, bk, options, term_guids)
            _require_metadata_attribute(pub, bk, dry_run)
            if dry_run and bk.metadata is None:
                # a plan before the profile's types hold the record: nothing is recorded yet
                bk = bk.with_metadata()
            record = catalog.metadata_record(wanted=rules is not None or bool(named), register=not dry_run)
            if record is not None:
                writes += record[1]
            found = ServerAttributes(bk, metadata_record=record[0] if record else None, term_guids=term_guids)
            return found, writes, roots

        typed = session.typedefs(rendered, register)  # 4. the first writes
        settings = WriteSettings(
            batch_size=pub.batch_size,
            parallel=options.parallel or pub.parallel,
            purge=options.purge,
            progress=options.progress,
            listed=SHOWN_ITEMS if streamed else None,
        )
        # the receipt rides with the first entity write: a stamp, or itself where that write is the only one
        checked = session.check(typed, writer, settings, receipt)  # 5.
        written = session.write(checked)  # 6. compared and written, copies settled
        described = session.describe(written)  # 7. metadata requests, then the digests
        deleted = session.delete(described, purge=options.purge)  # 8.
        out = session.finish(deleted)  # 9. hand-over, last
        out.plan.warnings.extend(unmatched)
        writes = typed.typedef_writes
        if receipt is not None:
            receipt.finish(s.spool)
            writes += receipt.typedef_writes
        if options.allow_empty and spooled.is_empty and not dry_run and not pub.native and roots:
            # a job synced to nothing keeps no receipt (a teardown of the job deletes it itself)
            from atlas_sync.reconcile.receipt import delete_receipts

            delete_receipts(pub.client, pub.domain, job=job)
        return SyncResult(plan=out.plan, applied=out.applied, typedef_writes=writes)


def _require_metadata_attribute(pub: Publisher, bk: Bookkeeping, dry_run: bool) -> None:
    """A sync with metadata rules needs the profile's record attribute on the server's types."""
    rules = pub.metadata_rules
    attr = bk.profile.metadata
    if rules is not None and not dry_run and attr is not None and bk.metadata is None:
        raise AtlasSyncError(
            f"the server's {pub.profile.name} types lack {attr!r}, "
            f"where a sync records what the metadata rules ({rules.file}) added",
            hint="sync once without --no-typedefs (or run `atlas-sync typedefs apply`) to add it",
        )


def sync_target(
    pub: Publisher, spooled: Spooled, job: str, roots: list[str], options: SyncOptions
) -> SyncTarget:
    """What the sync is of, and the plan's options (a partial input deletes nothing)."""
    return SyncTarget(
        job=job,
        root_types=tuple(roots),
        process_types=frozenset(pub.process_types),
        options=PlanOptions(
            # a partial input (a dbt selection or run) is part of the job's lineage: it deletes nothing
            allow_delete=options.allow_delete and not spooled.partial,
            max_delete_percent=pub.max_delete_percent,
            force=options.force,
            input_has_errors=any(p.severity == "error" for p in spooled.problems),
            allow_empty=options.allow_empty,
            partial=spooled.partial,
            missing_datasets=pub.missing_datasets,
        ),
        refresh=options.refresh,
    )


def job_receipt(
    pub: Publisher,
    s: Any,
    job: str,
    roots: list[str],
    bk: Bookkeeping,
    options: SyncOptions,
    term_guids: Mapping[str, str],
) -> JobReceipt | None:
    """The job's receipt (reconcile.receipt), for a sync that may use one: a big, whole input
    (not partial, no errors), no ``refresh``, the profile's keys and digest on the server's types,
    writes applied when answered; ``None`` otherwise."""
    from atlas_sync.reconcile.receipt import RECEIPT_MIN, JobReceipt, fingerprint

    if (
        options.refresh
        or s.partial
        or any(p.severity == "error" for p in s.problems)
        or pub.native
        or not roots
        or bk.key is None
        or bk.digest is None
        or pub.client.capabilities.queued_writes
        or (pub.metadata_rules is not None and pub.metadata_rules.foreign)
        or s.processes + s.spool.dataset_count() < RECEIPT_MIN
    ):
        return None
    context = {
        "profile": pub.profile.fingerprint(),
        "domain": pub.domain,
        "job": job,
        "attributes": bk.names(),
        "terms": dict(term_guids),
    }
    return JobReceipt(
        pub.client,
        pub.domain,
        job,
        roots,
        bk,
        fingerprint(s.spool, context),
        may_register=options.ensure_typedefs,
        spool=s.spool,
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
