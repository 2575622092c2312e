"""``plan``, ``sync``, ``apply``, ``teardown``, ``rebuild`` and ``show``: keep an Atlas domain in step with the input."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from atlas_sync.cli.common import (
    client_from_options,
    connection_options,
    echo_json,
    settings_from_options,
    stderr,
    verbosity,
    write_out,
)
from atlas_sync.cli.lineage import collect_reader_options, reader_options
from atlas_sync.cli.progress import Phases, progress
from atlas_sync.cli.write_path import wait_for_atlas, wrap_client, write_path_options
from atlas_sync.errors import AtlasSyncError, InputError
from atlas_sync.wording import counted

if TYPE_CHECKING:
    from atlas_sync.api import Publisher


def _publisher(domain: str | None, profile: str | None, **extra: Any) -> tuple[Any, Any]:
    from atlas_sync.api import Publisher

    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        extra.setdefault("metadata_namespace", ctx.meta.get("atlas_sync.metadata_namespace"))
        extra.setdefault("missing_datasets", ctx.meta.get("atlas_sync.missing_datasets"))
        extra.setdefault("metadata_rules", ctx.meta.get("atlas_sync.metadata_rules"))
    settings = settings_from_options(domain=domain, profile=profile, **extra)
    if not settings.domain:
        raise click.UsageError(
            "--domain is required (or set ATLAS_SYNC_DOMAIN, or domain in atlas-sync.toml)"
        )
    client = wrap_client(client_from_options(settings=settings))
    return Publisher.from_settings(client, settings), settings


def _reader(reader: str, files: tuple[str, ...], kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The reader's name (``auto`` resolved, and said) and its options."""
    from atlas_sync.lineage import registry

    if reader == "auto" and not files and kwargs.get("superset_url"):
        reader = "superset"  # a live Superset is the input
    if not files and registry.needs_files(reader):
        raise click.UsageError("give at least one input FILE (or - for stdin)")
    options = collect_reader_options(kwargs)
    if verbosity() < 0:
        options.setdefault("progress", False)  # readers with their own progress (query-log) stay silent
    if reader == "auto":
        picked = registry.detect(files[0])
        if verbosity() >= 0:
            click.echo(f"reader: {picked.name} (picked by --from auto)", err=True)
        reader = picked.name
    return reader, options


def _report(problems: list[Any], has_content: bool, allow_partial: bool) -> None:
    """Print the input's problems; refuse (before any write) when it has errors. The warnings are kept
    for the summary (its count) and ``--json`` (``input_warnings``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta.setdefault("atlas_sync.input_warnings", []).extend(
            str(p) for p in problems if p.severity != "error"
        )
    from atlas_sync.api.options import check_input

    for p in problems:
        if p.severity == "error":
            click.echo(f"error: {p}", err=True)
    check_input(problems, has_content, allow_partial, shown=True)
    if verbosity() >= 0:
        for p in problems:
            if p.severity != "error":
                click.echo(f"warning: {p}", err=True)


def _read_maybe_chunks(
    pub: Publisher, target: Target, stream: bool | None, allow_partial: bool = False
) -> tuple[Any, Any]:
    """(graph, None) for a whole read, or (None, chunks) when the input streams: asked with
    ``--stream``, or by default when the reader gives more than one chunk."""
    if target.graph is not None:  # one job of the input, read already (_each_input_job)
        return target.graph, None
    name, options = _reader(target.reader, target.files, target.reader_flags)
    read = pub.open_input(name, list(target.files), stream=stream, **options)  # (the API decides)
    _note_partial(target, read.partial)
    if read.graph is None:
        return None, read.chunks
    graph = read.graph
    _report(graph.problems, bool(graph.datasets or graph.processes), allow_partial)
    return _one_job(target, graph), None


def _note_partial(target: Target, partial: bool) -> None:
    """Say that a graph that is part of its job's lineage (a dbt selection or run) deletes nothing
    (the publisher's rule)."""
    if partial and not target.no_delete and verbosity() >= 0:
        stderr("note: the input is part of the job's lineage (a selection or a run): nothing is deleted")


def _read(pub: Publisher, target: Target, allow_partial: bool = False) -> Any:
    name, options = _reader(target.reader, target.files, target.reader_flags)
    graph = pub.read(name, list(target.files), **options)
    _report(graph.problems, bool(graph.datasets or graph.processes), allow_partial)
    return _one_job(target, graph)


def _one_job(target: Target, graph: Any) -> Any:
    """``graph``, unless the command runs once per job of the input (_each_input_job) and it holds several."""
    if target.each_job and target.job is None and graph.process_jobs and len(graph.processes) > 1:
        from atlas_sync.lineage.model import split_process_jobs

        raise _SeveralJobs(split_process_jobs(graph))
    return graph


def _confirm(command: str, question: str) -> None:
    """Ask on a terminal; refuse in a pipe (scripts must say --yes)."""
    if not sys.stdin.isatty():
        raise AtlasSyncError(
            f"{command} deletes entities of the domain and needs confirmation", hint="re-run with --yes"
        )
    click.confirm(question, abort=True, err=True)


def _remember_metadata_namespace(ctx: click.Context, _param: Any, value: str | None) -> None:
    if value is not None:
        ctx.meta["atlas_sync.metadata_namespace"] = value


def _remember_missing_datasets(ctx: click.Context, _param: Any, value: str | None) -> None:
    if value is not None:
        ctx.meta["atlas_sync.missing_datasets"] = value


def _remember_metadata_rules(ctx: click.Context, _param: Any, value: str | None) -> None:
    if value is not None:
        ctx.meta["atlas_sync.metadata_rules"] = value


def _common(func: Any) -> Any:
    opts = [
        click.option(
            "--domain",
            "-d",
            metavar="DOMAIN",
            help="domain: every qualified name ends with @DOMAIN [env ATLAS_SYNC_DOMAIN]",
        ),
        click.option(
            "--profile",
            "-p",
            metavar="NAME|DIR",
            help="profile: lineage (default), pico, atlas, or a profile folder [env ATLAS_SYNC_PROFILE]",
        ),
        click.option(
            "--metadata-namespace",
            metavar="NS",
            expose_value=False,
            callback=_remember_metadata_namespace,
            help="atlas profile: Atlas's metadata namespace (atlas.metadata.namespace) that names end with; "
            "per source: metadata_namespaces in atlas-sync.toml [env ATLAS_SYNC_METADATA_NAMESPACE; "
            "default: primary]",
        ),
        click.option(
            "--missing-datasets",
            type=click.Choice(["create", "skip", "fail"]),
            expose_value=False,
            callback=_remember_missing_datasets,
            help="atlas profile: a dataset missing from Atlas is created (owned by the job), left out, or "
            "refuses the plan [env ATLAS_SYNC_MISSING_DATASETS; default: create]",
        ),
    ]
    for o in reversed(opts):
        func = o(func)
    return connection_options(func)


@dataclass
class Target:
    """What the domain/profile, input and safety flags of a command say (one object, so adding a
    flag to these groups is one change, not one per command)."""

    domain: str | None = None
    profile: str | None = None
    files: tuple[str, ...] = ()
    reader: str = "auto"
    job: str | None = None
    reader_flags: dict[str, Any] = field(default_factory=dict)  # for collect_reader_options
    no_delete: bool = False
    max_delete_percent: float | None = None
    force: bool = False
    refresh: bool = False
    allow_empty: bool = False
    # one job of an input whose processes are jobs of their own, read already (_each_input_job)
    graph: Any = None
    each_job: bool = False


class _SeveralJobs(Exception):
    """The input holds several jobs of their own and no --job names one scope: run once per job."""

    def __init__(self, parts: list[Any]) -> None:
        super().__init__("several jobs")
        self.parts = parts


def _each_input_job(func: Any) -> Any:
    """Run the command once per job when the input's processes are jobs of their own (several
    OpenLineage jobs in one input, no --job): each is planned or synced under its own job scope, as
    `openlineage serve` does, so another job added to the file changes nothing of the others."""

    @functools.wraps(func)
    def wrapper(target: Target, **own: Any) -> Any:
        try:
            return func(target=dataclasses.replace(target, each_job=True), **own)
        except _SeveralJobs as several:
            parts = several.parts
        if own.get("out"):
            raise click.UsageError(
                f"the input holds {len(parts)} OpenLineage jobs, each planned under its own job scope: "
                "a saved plan holds one; give --job JOB to plan them under one scope"
            ) from None
        codes: list[Any] = []
        docs: list[Any] = []
        for part in parts:
            t = dataclasses.replace(target, job=part.job, graph=part)
            if own.get("as_json"):
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    codes.append(func(target=t, **own))
                docs.append(json.loads(buf.getvalue()))
            else:
                click.echo(f"job {part.job}:")
                codes.append(func(target=t, **own))
        if docs:
            echo_json({"jobs": docs})
        return max((c for c in codes if isinstance(c, int)), default=None)

    return wrapper


_TARGET_FIELDS = (
    "domain",
    "profile",
    "files",
    "reader",
    "job",
    "no_delete",
    "max_delete_percent",
    "force",
    "refresh",
    "allow_empty",
)


def _pass_target(func: Any) -> Any:
    """Collect the group flags into ``target: Target``; what is left are the command's own options
    (reader flags go to ``target.reader_flags``)."""
    params = set(inspect.signature(func).parameters)

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        target = Target(**{k: kwargs.pop(k) for k in _TARGET_FIELDS if k in kwargs})
        own = {k: kwargs.pop(k) for k in list(kwargs) if k in params}
        target.reader_flags = kwargs
        return func(target=target, **own)

    return wrapper


def _input(func: Any) -> Any:
    opts = [
        click.argument("files", nargs=-1),
        click.option(
            "--from",
            "reader",
            default="auto",
            show_default=True,
            metavar="READER",
            help="reader of the input (see `atlas-sync lineage --list-readers`)",
        ),
        click.option(
            "--job", "-j", metavar="JOB", help="job scope [default: derived from the input, e.g. file stem]"
        ),
    ]
    for o in reversed(opts):
        func = o(func)
    return reader_options(func)


def _safety(func: Any) -> Any:
    opts = [
        click.option("--no-delete", is_flag=True, help="never delete; only create and update"),
        click.option(
            "--max-delete-percent",
            type=click.FloatRange(0, 100),
            metavar="PCT",
            help="refuse to delete more than PCT% of the domain's entities in one sync [default 50]",
        ),
        click.option("--force", is_flag=True, help="allow deletes above --max-delete-percent"),
        click.option(
            "--allow-empty",
            is_flag=True,
            help="an input that produces nothing deletes the job's entities (syncs the job to nothing; "
            "--max-delete-percent still applies) [default: such an input deletes nothing]",
        ),
        click.option(
            "--metadata-rules",
            type=click.Path(dir_okay=False),
            metavar="FILE",
            expose_value=False,
            callback=_remember_metadata_rules,
            help="add classifications, glossary terms, owners, labels and business attributes by name "
            "pattern (TOML, docs/metadata.md); only what they added is ever removed "
            "[env ATLAS_SYNC_METADATA_RULES; default: the profile's metadata_rules]",
        ),
        click.option(
            "--refresh",
            is_flag=True,
            help="compare every entity with what Atlas holds, not only those whose stored digest "
            "differs (and never stop at the job's receipt): finds and undoes edits made in Atlas "
            "(e.g. in its UI) since the last sync (docs/resync.md)",
        ),
    ]
    for o in reversed(opts):
        func = o(func)
    return func


@click.command("plan")
@_common
@_input
@_safety
@click.option("--json", "as_json", is_flag=True, help="print the plan as JSON")
@click.option("--out", type=click.Path(dir_okay=False), help="save the plan to FILE for `atlas-sync apply`")
@click.option("--show-unchanged", is_flag=True, help="list unchanged entities too")
@click.option("--detailed-exitcode", is_flag=True, help="exit 0 = no changes, 2 = changes, 1 = error")
@click.option(
    "--stream/--no-stream",
    default=None,
    help="keep the entities in a temporary spool file instead of memory, for big inputs (lists the "
    "first 2,000 changes, counts all; no --out) [default: as `sync` decides, never with --out]",
)
@_pass_target
@_each_input_job
def plan_cmd(
    target: Target,
    as_json: bool,
    out: str | None,
    show_unchanged: bool,
    detailed_exitcode: bool,
    stream: bool | None,
) -> int:
    """Show what `sync` would change in Atlas for FILE... (Terraform style: + create, ~ update, - delete).

    Reads the input, renders the profile's entities and compares them with what Atlas holds for the
    domain and job. Nothing is written (typedefs neither).

    \b
    Examples:
      atlas-sync plan --domain demo etl.sql
      atlas-sync plan --domain demo etl.sql --out etl.plan.json   # then: atlas-sync apply etl.plan.json
      atlas-sync plan --domain demo etl.sql --detailed-exitcode    # in CI: exit 2 when Atlas differs
    """
    from atlas_sync.reconcile import PlanRefused, plan_text

    t = target
    pub, _ = _publisher(t.domain, t.profile, max_delete_percent=t.max_delete_percent)
    if out and stream:
        raise click.UsageError(
            "a streamed plan cannot be saved (the file would hold every entity): "
            "drop --stream to save a plan, or run `atlas-sync sync`"
        )
    # a plan file holds every entity: never streamed
    graph, chunks = _read_maybe_chunks(pub, t, False if out else stream)
    refused: PlanRefused | None = None
    try:
        if chunks is not None:
            plan = pub.plan_chunks(
                chunks,
                t.job,
                allow_delete=not t.no_delete,
                force=t.force,
                refresh=t.refresh,
                allow_empty=t.allow_empty,
                on_read=lambda problems: _report(problems, True, False),
            )
        else:
            plan = pub.plan(
                graph,
                t.job,
                allow_delete=not t.no_delete,
                force=t.force,
                refresh=t.refresh,
                allow_empty=t.allow_empty,
                stream=False if out else stream,
            )
    except PlanRefused as exc:
        if exc.plan is None:
            raise
        # the delete fail-safe tripped: the plan is shown all the same (never saved), then the refusal
        refused, plan = exc, exc.plan
    if out and refused is None:
        write_out(out, json.dumps(plan.to_json(), indent=1, ensure_ascii=False))
    if as_json:
        extra = {"refused": {"error": refused.message, "hint": refused.hint}} if refused else {}
        echo_json(plan.to_json() | {"entities": None} | extra)
    else:
        click.echo(plan_text(plan, show_unchanged=show_unchanged))
    if refused is not None:
        if out:
            refused.hint = f"{refused.hint}; {out} was not written"
        raise refused
    return 2 if detailed_exitcode and plan.has_changes else 0


_PARALLEL = click.option(
    "--parallel",
    type=click.IntRange(min=1),
    metavar="N",
    help="requests in flight against Atlas at most, reads and writes, to overlap Atlas's latency; of the "
    "write batches, a batch waits for every batch in flight "
    "or before it that writes or refers to one of its entities (Atlas on JanusGraph times out on locks "
    "otherwise), and one at a time runs once Atlas signals lock contention. The default 2 was measured "
    "without a lock timeout on a real Atlas 2.1 [env ATLAS_SYNC_PARALLEL; default 2]",
)


_DELETE_BATCH = click.option(
    "--delete-batch",
    type=click.IntRange(min=1, max=300),
    metavar="N",
    help="guids per delete request (at most 300: they go in the URL) [default 25, the fastest soft delete "
    "measured on Atlas 2.1 (bench/README.md); with --purge on a server that hard-deletes on request, 300 "
    "after the first request]",
)


@click.command("sync")
@_common
@_input
@_safety
@click.option("--purge", is_flag=True, help="purge deleted entities too (hard delete)")
@click.option("--no-typedefs", is_flag=True, help="do not check/register the profile's typedefs first")
@click.option(
    "--allow-partial",
    is_flag=True,
    help="publish what could be read when some statements/events failed (never deletes then)",
)
@click.option(
    "--stream/--no-stream",
    default=None,
    help="keep the entities between reading and writing in a temporary spool file instead of "
    "memory (same plan and result, bounded memory) [default: when the reader gives the input in "
    "several chunks (query logs over "
    "-o chunk_statements=5000 statements, graph documents over -o chunk_processes=5000 processes) or it "
    "renders to over 50,000 entities]",
)
@_PARALLEL
@click.option("--json", "as_json", is_flag=True, help="print a JSON summary")
@_pass_target
@write_path_options
@_each_input_job
def sync_cmd(
    target: Target,
    purge: bool,
    no_typedefs: bool,
    allow_partial: bool,
    stream: bool | None,
    parallel: int | None,
    as_json: bool,
) -> None:
    """Publish FILE...'s lineage to Atlas: plan + apply.

    Makes sure the profile's typedefs exist, then creates, updates and deletes exactly what differs for
    this domain and job. A second run with the same input writes nothing. Deletes only entities this job
    created that the input no longer has; never anything outside the domain.

    \b
    Example (embedded emulator, no server needed):
      atlas-sync sync --domain demo --from sql --dialect spark examples/sql/etl.sql
    """
    from atlas_sync.reconcile import plan_text

    t = target
    pub, _ = _publisher(t.domain, t.profile, max_delete_percent=t.max_delete_percent, parallel=parallel)
    quiet = verbosity() < 0
    graph, chunks = _read_maybe_chunks(pub, t, stream, allow_partial)
    common = {
        "allow_delete": not t.no_delete,
        "force": t.force,
        "purge": purge,
        "ensure_typedefs": not no_typedefs,
        "allow_partial": allow_partial,
        "refresh": t.refresh,
        "allow_empty": t.allow_empty,
    }
    with progress("applying", quiet=quiet or as_json) as update:
        if chunks is None:
            result = pub.sync(graph, t.job, progress=update, stream=stream, **common)
        else:
            result = pub.sync_chunks(
                chunks,
                t.job,
                progress=update,
                # the same refusal as a whole read (emptiness is the publisher's to judge)
                on_read=lambda problems: _report(problems, True, allow_partial),
                **common,
            )
    from atlas_sync.atlas.hook import AtlasHookClient

    queued = pub.client.queued if isinstance(pub.client, AtlasHookClient) else None
    left = None
    if queued is not None and result.applied:
        if graph is None:
            stderr("note: --wait is not done for a streamed sync (the input is not kept to plan again)")
        else:
            left = wait_for_atlas(
                pub.client,
                lambda: sum(
                    1
                    for i in pub.plan(
                        graph, t.job, allow_delete=not t.no_delete, force=True, allow_empty=t.allow_empty
                    ).items
                    if i.action != "unchanged"
                ),
                quiet=quiet or as_json,
            )
    input_warnings = click.get_current_context().meta.get("atlas_sync.input_warnings", [])
    if as_json:
        extra = {"queued": queued.to_json(), "not_visible": left} if queued is not None else {}
        echo_json(result.to_json() | extra | {"input_warnings": input_warnings})
        return
    if not quiet:
        changed = plan_text(result.plan)
        click.echo(changed)
        if input_warnings:
            click.echo(f"Input: {len(input_warnings)} warning(s), listed above (what could not be resolved).")
        if result.applied and queued is not None:
            click.echo(
                f"Queued: {queued.created} created, {queued.updated} updated, {queued.deleted} deleted in "
                f"{counted(queued.messages, 'hook message')} to Kafka topic {pub.client.producer.config.topic}; "
                "Atlas applies them when it consumes them."
            )
            if left == 0:
                click.echo("Atlas shows every change.")
            elif left is not None:
                click.echo(
                    f"Atlas does not show {counted(left, 'change')} yet (see its application log if it stays so)."
                )
        elif result.applied:
            a = result.applied
            click.echo(
                f"Applied: {a.created} created, {a.updated} updated, {a.deleted} deleted"
                f"{f', {a.purged} purged' if a.purged else ''} in {counted(a.requests, 'request')}."
            )
        elif getattr(result.plan, "by_receipt", False):
            click.echo(
                "Nothing to do: Atlas holds what the last sync of this input wrote, unchanged since "
                "(the job's receipt; --refresh compares every entity)."
            )
        elif result.plan.deletes_blocked:
            # (the plan's warning says which and why): Atlas still holds what the input no longer has
            click.echo(f"Nothing written: {result.plan.deletes_blocked}.")
        elif result.plan.left_out:
            click.echo(
                f"Nothing written: Atlas holds the input but for the {result.plan.left_out} entities left "
                "out (--missing-datasets skip)."
            )
        else:
            click.echo("Nothing to do: Atlas already matches the input.")
    if left:
        raise SystemExit(3)


@click.command("apply")
@click.argument("planfile", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--profile", "-p", metavar="NAME|DIR", help="profile the plan was made with [default: recorded]"
)
@click.option("--purge", is_flag=True, help="purge deleted entities too")
@_PARALLEL
@click.option("--json", "as_json", is_flag=True, help="print a JSON summary")
@connection_options
def apply_cmd(planfile: str, profile: str | None, purge: bool, parallel: int | None, as_json: bool) -> None:
    """Apply a plan saved with `atlas-sync plan --out PLANFILE`.

    Refuses when Atlas changed since the plan was made (re-plan instead). The plan file holds no
    credentials: pass the connection flags (or ATLAS_* variables) again.
    """
    from atlas_sync.reconcile import Plan

    try:
        doc = json.loads(Path(planfile).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not a plan file: {exc}", file=planfile) from None
    plan = Plan.from_json(doc)
    pub, _ = _publisher(plan.domain, profile or plan.profile, parallel=parallel)
    with progress("applying", quiet=verbosity() < 0 or as_json) as update:
        result = pub.apply(plan, purge=purge, progress=update, check=True)
    if as_json:
        echo_json(result.to_json())
    else:
        click.echo(
            f"Applied: {result.created} created, {result.updated} updated, {result.deleted} deleted "
            f"in {counted(result.requests, 'request')}."
        )


@click.command("teardown")
@_common
@click.option(
    "--job",
    "-j",
    metavar="JOB",
    help="delete only what job JOB created (a dataset another job still uses stays), not the whole domain",
)
@click.option("--purge", is_flag=True, help="purge the deleted entities (hard delete, frees the typedefs)")
@click.option("--typedefs", is_flag=True, help="also delete the profile's typedefs if nothing else uses them")
@click.option(
    "--plan",
    "plan_only",
    is_flag=True,
    help="only show what would be deleted and purged (nothing is written; no confirmation needed)",
)
@_DELETE_BATCH
@_PARALLEL
@click.option("--yes", "-y", is_flag=True, help="do not ask for confirmation")
@click.option("--json", "as_json", is_flag=True, help="print a JSON summary (with --plan: the plan)")
def teardown_cmd(
    domain: str | None,
    profile: str | None,
    job: str | None,
    purge: bool,
    typedefs: bool,
    plan_only: bool,
    delete_batch: int | None,
    parallel: int | None,
    yes: bool,
    as_json: bool,
) -> None:
    """Delete every entity of the domain (or, with --job, of one job); --purge to hard-delete them (and what was deleted before).

    Asks for confirmation on a terminal; in scripts and pipes pass --yes. Only entities of the
    domain (qualified name ending with @DOMAIN) are named; Atlas deletes what they own with them
    (a dataset's columns). With --job, only what that job created: its processes, and its datasets
    and columns nothing else refers to (one another job reads stays). Stopped at any point, the same
    command run again finishes the job.

    \b
    Examples:
      atlas-sync teardown --domain demo --purge --plan      # what would go
      atlas-sync teardown --domain demo --purge --yes
      atlas-sync teardown --domain demo --job etl --yes     # one job
    """
    pub, _ = _publisher(domain, profile, parallel=parallel)
    if job is not None:
        if typedefs:
            raise click.UsageError("--typedefs is for a teardown of the whole domain, not with --job")
        _teardown_job(
            pub,
            job,
            purge=purge,
            plan_only=plan_only,
            yes=yes,
            as_json=as_json,
            parallel=parallel,
            batch=delete_batch,
        )
        return
    others = pub.held_under_other_profiles()  # (a few counts on Atlas's index: nothing beside a teardown)
    elsewhere = _elsewhere(others, "teardown")
    plan = pub.plan_teardown(purge=purge, batch_size=delete_batch)
    if plan_only:
        if as_json:
            echo_json(plan.to_json() | {"other_profiles": others})
        else:
            click.echo(plan.text())
            if elsewhere:
                click.echo(f"note: {elsewhere}")
        return
    if not yes:
        _confirm(
            "teardown",
            f"Delete {counted(plan.counts['delete'], pub.profile.name + ' entity')} of domain {pub.domain!r}"
            + (f" and purge {plan.counts['purge']}?" if purge else "?"),
        )
    with progress("teardown", quiet=verbosity() < 0 or as_json) as update:
        result = pub.teardown(purge=purge, typedefs=typedefs, progress=update, plan=plan)
    if as_json:
        echo_json(result.to_json())
    else:
        click.echo(
            f"Teardown of {pub.domain}: {result.deleted} deleted, {result.purged} purged"
            + (f", typedefs deleted: {', '.join(result.typedefs_deleted)}" if result.typedefs_deleted else "")
            + f" ({counted(result.requests, 'request')})."
        )
        if elsewhere:
            click.echo(f"note: {elsewhere}")


def _elsewhere(held: dict[str, int], command: str = "show") -> str | None:
    """What the domain holds under the other built-in profiles (``held``: profile -> entities), as a
    user reads it ("the domain holds 15 entities under profile pico (...: add --profile pico)"), or
    ``None``."""
    if not held:
        return None
    parts = [f"{counted(n, 'entity')} under profile {p}" for p, n in sorted(held.items())]
    hints = " or ".join(f"--profile {p}" for p in sorted(held))
    what = "they stay; to remove them too" if command == "teardown" else "to see them"
    return f"the domain holds {' and '.join(parts)} ({what}: add {hints})"


def _job_plan_text(pub: Publisher, plan: Any, purge: bool) -> str:
    """What a teardown of ``plan.job`` deletes (``teardown --job --plan``)."""
    gone = plan.by_action("delete")
    head = f"Teardown of job {plan.job} in domain {pub.domain} (profile {pub.profile.name})"
    if not gone:
        lines = [f"{head}: nothing to delete (the job holds no entity there that nothing else uses)."]
    else:
        lines = [f"{head}:"]
        mark = "delete+purge" if purge else "delete"
        lines += [f"  - {i.type_name} {i.qualified_name} ({mark})" for i in gone]
    lines += [f"warning: {w}" for w in plan.warnings]
    if gone:
        lines.append(
            f"Plan: {len(gone)} to delete" + (", purged too." if purge else ", nothing purged (no --purge).")
        )
    return "\n".join(lines)


def _teardown_job(
    pub: Publisher,
    job: str,
    *,
    purge: bool,
    plan_only: bool,
    yes: bool,
    as_json: bool,
    parallel: int | None,
    batch: int | None,
) -> None:
    plan = pub.plan_teardown_job(job)
    n = plan.counts["delete"]
    elsewhere = None if n else _elsewhere(pub.held_under_other_profiles(), "teardown")
    if plan_only:
        if as_json:
            echo_json(plan.to_json() | {"entities": None, "purge": purge})
        else:
            click.echo(_job_plan_text(pub, plan, purge))
            if elsewhere:
                click.echo(f"note: {elsewhere}")
        return
    if n and not yes:
        _confirm(
            "teardown",
            f"Delete {counted(n, pub.profile.name + ' entity')} of job {job!r} in domain {pub.domain!r}"
            + (" and purge them?" if purge else "?"),
        )
    with progress("teardown", quiet=verbosity() < 0 or as_json) as update:
        result = pub.teardown_job(
            job, purge=purge, progress=update, parallel=parallel, batch_size=batch, plan=plan
        )
    a = result.applied
    deleted, purged, requests = (a.deleted, a.purged, a.requests) if a else (0, 0, 0)
    if as_json:
        echo_json(result.to_json())
        return
    for w in result.plan.warnings:
        click.echo(f"warning: {w}")
    click.echo(
        f"Teardown of job {job} in {pub.domain}: {deleted} deleted, {purged} purged ({counted(requests, 'request')})."
    )
    if elsewhere:
        click.echo(f"note: {elsewhere}")


@click.command("rebuild")
@_common
@_input
@click.option(
    "--plan",
    "plan_only",
    is_flag=True,
    help="only show what the teardown would delete and purge, and what the input holds (nothing is written)",
)
@click.option("--yes", "-y", is_flag=True, help="do not ask for confirmation")
@_DELETE_BATCH
@_PARALLEL
@click.option("--json", "as_json", is_flag=True, help="print a JSON summary (with --plan: the plan)")
@_pass_target
def rebuild_cmd(
    target: Target, plan_only: bool, yes: bool, delete_batch: int | None, parallel: int | None, as_json: bool
) -> None:
    """Teardown (with purge) + typedefs + sync: rebuild a demo domain (or, with --job, one job) from FILE....

    For demo domains, e.g. after an incompatible profile change; asks for confirmation (--yes in
    scripts). Without --job the whole domain is torn down, every job's entities; with --job only
    what that job created (as `teardown --job`), then the job is synced. The input is read and
    checked first: a bad input deletes nothing. Stopped at any point, the same command run again
    finishes the job.

    \b
    Examples:
      atlas-sync rebuild --domain demo --profile pico cars.plan.txt --yes
      atlas-sync rebuild --domain shared --job etl etl.sql --yes   # job etl only
    """
    pub, _ = _publisher(target.domain, target.profile, parallel=parallel)
    graph = _read(pub, target)
    if target.job is not None:
        _rebuild_job(
            pub,
            graph,
            target.job,
            plan_only=plan_only,
            yes=yes,
            as_json=as_json,
            parallel=parallel,
            batch=delete_batch,
        )
        return
    plan = pub.plan_teardown(purge=True, batch_size=delete_batch)
    if plan_only:
        held = {
            "datasets": len(graph.datasets),
            "processes": len(graph.processes),
            "column_edges": len(graph.edges),
        }
        if as_json:
            echo_json({"teardown": plan.to_json(), "input": held})
        else:
            click.echo(plan.text())
            click.echo(
                f"Then: sync of the input ({counted(held['datasets'], 'dataset')}, "
                f"{counted(held['processes'], 'process')}, {counted(held['column_edges'], 'column edge')}); "
                "`atlas-sync plan` lists its entities."
            )
        return
    if not yes:
        _confirm(
            "rebuild", f"Delete {counted(plan.counts['delete'], 'entity')} and rebuild domain {pub.domain!r}?"
        )
    # Publisher.rebuild's two steps, each with its own progress display (one live bar at a time)
    with Phases(quiet=verbosity() < 0 or as_json) as shown:
        result = pub.rebuild(
            graph,
            progress=shown.of("applying"),
            teardown_progress=shown.of("teardown"),
            plan=plan,
            parallel=parallel,
        )
    if as_json:
        echo_json(result.to_json())
    else:
        a = result.applied
        click.echo(f"Rebuilt {pub.domain}: {plan.counts['delete']} deleted, {a.created if a else 0} created.")


def _rebuild_job(
    pub: Publisher,
    graph: Any,
    job: str,
    *,
    plan_only: bool,
    yes: bool,
    as_json: bool,
    parallel: int | None,
    batch: int | None,
) -> None:
    plan = pub.plan_teardown_job(job)
    n = plan.counts["delete"]
    if plan_only:
        held = {
            "datasets": len(graph.datasets),
            "processes": len(graph.processes),
            "column_edges": len(graph.edges),
        }
        if as_json:
            echo_json({"teardown": plan.to_json() | {"entities": None, "purge": True}, "input": held})
        else:
            click.echo(_job_plan_text(pub, plan, True))
            click.echo(
                f"Then: sync of job {job} ({counted(held['datasets'], 'dataset')}, "
                f"{counted(held['processes'], 'process')}, {counted(held['column_edges'], 'column edge')}); "
                "`atlas-sync plan` lists its entities."
            )
        return
    if n and not yes:
        _confirm(
            "rebuild",
            f"Delete {counted(n, 'entity')} of job {job!r} and rebuild it in domain {pub.domain!r}?",
        )
    with Phases(quiet=verbosity() < 0 or as_json) as shown:
        result = pub.rebuild(
            graph,
            job,
            only_job=True,
            progress=shown.of("applying"),
            teardown_progress=shown.of("teardown"),
            plan=plan,
            parallel=parallel,
            batch_size=batch,
        )
    gone = result.teardown
    assert gone is not None
    if as_json:
        echo_json(result.to_json() | {"teardown": gone.to_json()})
        return
    deleted = gone.applied.deleted if gone.applied else 0
    a = result.applied
    click.echo(
        f"Rebuilt job {job} in {pub.domain}: {deleted} deleted, {a.created if a else 0} created"
        f"{f', {a.updated} updated' if a and a.updated else ''}."
    )


@click.command("show")
@_common
@click.argument("qualified_name", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "dot", "svg", "html"]),
    default="text",
    show_default=True,
    help="text: operator tree or process blocks with column lineage, then the classified datasets and "
    "columns (own and propagated classifications, glossary terms); json: the lineage document; "
    "dot: Graphviz source; svg/html: a picture (classifications and terms marked on their columns, "
    "own and propagated apart; html adds hover highlight and zoom)",
)
@click.option("--depth", type=int, default=0, show_default=True, help="lineage depth (0 = unlimited)")
@click.option("--out", type=click.Path(dir_okay=False), help="write to FILE instead of stdout")
@click.option(
    "--columns", is_flag=True, help="dot/svg/html: draw the columns and the column lineage between them"
)
def show_cmd(
    domain: str | None,
    profile: str | None,
    qualified_name: str | None,
    fmt: str,
    depth: int,
    out: str | None,
    columns: bool,
) -> None:
    """Show what Atlas holds for the domain (or the lineage of QUALIFIED_NAME), read back through Atlas's lineage API.

    QUALIFIED_NAME may leave out the @DOMAIN suffix.

    \b
    Examples:
      atlas-sync show --domain demo
      atlas-sync show --domain demo --format html --columns --out demo.html
      atlas-sync show --domain demo tab3 --depth 2
    """
    from atlas_sync.view.atlas_graph import domain_graph

    pub, _ = _publisher(domain, profile)
    graph = domain_graph(pub, qualified_name, depth=depth)
    from atlas_sync.cli.lineage import render_graph

    text = render_graph(graph, fmt, columns=columns)
    if qualified_name is None and not (graph.datasets or graph.processes):
        elsewhere = _elsewhere(pub.held_under_other_profiles())  # (only for an empty answer)
        if elsewhere and fmt == "text":
            text = f"(no lineage under profile {pub.profile.name}; {elsewhere})"
        elif elsewhere:
            stderr(f"note: no lineage under profile {pub.profile.name}; {elsewhere}")
    if out:
        write_out(out, text)
    else:
        click.echo(text)


COMMANDS = [plan_cmd, sync_cmd, apply_cmd, teardown_cmd, rebuild_cmd, show_cmd]
