"""The Python API: the same operations as the CLI.

>>> from atlas_sync.api import Publisher
>>> from atlas_sync.factory import embedded_client
>>> pub = Publisher(embedded_client(None), profile="lineage", domain="demo")  # doctest: +SKIP
>>> graph = pub.read("sql", ["etl.sql"], dialect="spark")                          # doctest: +SKIP
>>> print(pub.plan(graph).summary())                                               # doctest: +SKIP
>>> pub.sync(graph)                                                                # doctest: +SKIP

:class:`Publisher` is a facade over one module per job: ``run`` (the sync path, over
reconcile.session's phases), ``options`` (:class:`SyncOptions`, input checks), ``inputs``, ``rules``
(metadata names), ``saved_plan``, ``teardown`` (teardown, rebuild, listing), ``gc``; what it knows of
the server is its ``catalog`` (reconcile.catalog's :class:`ServerCatalog`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from atlas_sync.api import saved_plan, teardown
from atlas_sync.api.inputs import Input, open_input, reader_options
from atlas_sync.api.options import STREAM_MIN_ENTITIES, Progress, SyncOptions
from atlas_sync.api.results import SyncResult, TeardownResult
from atlas_sync.api.run import run
from atlas_sync.api.teardown import OTHER_PROFILES
from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.errors import AtlasSyncError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.rules import MetadataRules, load_rules
from atlas_sync.reconcile.actual import ActualHeader
from atlas_sync.reconcile.apply import ApplyResult
from atlas_sync.reconcile.catalog import ServerCatalog
from atlas_sync.reconcile.plan import MISSING_DATASETS, Plan
from atlas_sync.reconcile.teardown import TeardownPlan
from atlas_sync.reconcile.writer import RecordingWriter
from atlas_sync.render.native import DEFAULT_METADATA_NAMESPACE, DOMAIN_HINT, Namespaces, valid_domain
from atlas_sync.render.profile import Profile, load_profile

__all__ = [
    "OTHER_PROFILES",
    "Input",
    "STREAM_MIN_ENTITIES",
    "Progress",
    "Publisher",
    "SyncOptions",
    "SyncResult",
    "TeardownResult",
]


class Publisher:
    """Publishes lineage graphs to one Atlas domain with one profile.

    ``client`` is an :class:`atlas_sync.atlas.AtlasClient` (a real Atlas or the embedded emulator).
    """

    def __init__(
        self,
        client: AtlasApi,
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
        given = metadata_rules if metadata_rules is not None else self.profile.metadata_rules
        self.metadata_rules: MetadataRules | None = (
            given if isinstance(given, MetadataRules) or given is None else load_rules(given)
        )
        # everything read from the server (types, attributes, terms, the metadata record), kept
        self.catalog = ServerCatalog(client, self.profile)

    @classmethod
    def from_settings(cls, client: AtlasApi, settings: Any) -> Publisher:
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
        """A profile on Atlas's own models (ownership by labels, references to what exists)."""
        return self.profile.mapping_file is not None

    @property
    def process_types(self) -> set[str]:
        schema = self.profile.schema
        return {t for t in self.profile.entity_types() if schema.is_a(t, "Process")}

    # ------------------------------------------------------------------ reading
    def read(self, reader: str, paths: Sequence[str], **options: Any) -> LineageGraph:
        """Read lineage with a reader; the profile's reader options (e.g. Spark ``mode``) are defaults."""
        name, opts = reader_options(self, reader, paths, options)
        return registry.read(name, paths, **opts)

    def read_chunks(self, reader: str, paths: Sequence[str], **options: Any) -> Iterator[LineageGraph]:
        """:meth:`read` as a sequence of self-contained chunks (one chunk for readers that do not chunk)."""
        name, opts = reader_options(self, reader, paths, options)
        return registry.read_chunks(name, paths, **opts)

    def open_input(
        self, reader: str, paths: Sequence[str], *, stream: bool | None = None, **options: Any
    ) -> Input:
        """Read an input for :meth:`sync` / :meth:`plan`: whole, or as chunks to stream
        (:func:`atlas_sync.api.inputs.open_input` decides from ``stream`` and the reader's chunks)."""
        return open_input(self, reader, paths, stream, options)

    # ------------------------------------------------------------------ typedefs
    def ensure_typedefs(self) -> int:
        """Register the profile's typedefs if needed; returns the number of write requests made."""
        return self.catalog.ensure_typedefs()

    def forget_types(self) -> None:
        """Read what is known of the server again (:meth:`ServerCatalog.invalidate`; a sync does so
        after an Atlas error: someone deleted or changed a type or a term)."""
        self.catalog.invalidate()

    # ------------------------------------------------------------------ plan / sync / apply
    def plan(
        self, graph: LineageGraph, job: str | None = None, options: SyncOptions | None = None, **changes: Any
    ) -> Plan:
        """Diff what ``graph`` should produce for ``job`` against what Atlas holds; nothing is written.
        ``options`` / keywords: :class:`SyncOptions`.

        Every item is listed (a plan file holds them all), unless the graph is streamed (``stream``,
        or ``None`` and the graph is big): then the counts are complete and the first changes listed.
        """
        return self.plan_chunks([graph], job, SyncOptions.of(options, changes).streamed(graph))

    def plan_chunks(
        self,
        chunks: Iterable[LineageGraph],
        job: str | None = None,
        options: SyncOptions | None = None,
        **changes: Any,
    ) -> Plan:
        """:meth:`plan` of an input given as chunks (:meth:`read_chunks`); streamed unless ``stream=False``."""
        return run(self, chunks, job, SyncOptions.of(options, changes), writer=RecordingWriter).plan

    def sync(
        self, graph: LineageGraph, job: str | None = None, options: SyncOptions | None = None, **changes: Any
    ) -> SyncResult:
        """Plan and apply: after it, Atlas holds exactly what ``graph`` says for this job.
        ``options`` / keywords: :class:`SyncOptions`.

        An input with errors (``graph.problems`` of severity ``error``) publishes nothing, unless
        ``allow_partial``: then what was read is published, and nothing is deleted.

        ``stream``: where entities wait between reading and writing: ``False`` in memory, ``True`` in a
        temporary file; ``None`` (default) in a file only for graphs of more than ``STREAM_MIN_ENTITIES``
        datasets, columns, processes and column edges together. The result in Atlas is the same.
        """
        return run(self, [graph], job, SyncOptions.of(options, changes).streamed(graph))

    def sync_chunks(
        self,
        chunks: Iterable[LineageGraph],
        job: str | None = None,
        options: SyncOptions | None = None,
        **changes: Any,
    ) -> SyncResult:
        """:meth:`sync` for inputs given as chunks (:meth:`read_chunks`), streamed unless ``stream=False``.

        The whole input is read, rendered and checked (into the spool) before the first write, so an
        error anywhere still publishes nothing; then the plan is computed and applied a chunk at a
        time. ``on_read`` gets the input's problems once it has been read (e.g. to print warnings).
        """
        return run(self, chunks, job, SyncOptions.of(options, changes))

    def apply(
        self, plan: Plan, *, purge: bool = False, progress: Progress | None = None, check: bool = True
    ) -> ApplyResult:
        """Apply a plan (a saved one, or one from :meth:`plan`): refused when Atlas changed since planning
        (``check``: kept for compatibility, a plan is always checked)."""
        return saved_plan.apply_saved(self, plan, purge=purge, progress=progress)

    # ------------------------------------------------------------------ teardown / rebuild / listing
    def plan_teardown(self, *, purge: bool = False, batch_size: int | None = None) -> TeardownPlan:
        """What :meth:`teardown` would delete and purge, from one listing of Atlas; nothing is written."""
        return teardown.plan_teardown(self, purge=purge, batch_size=batch_size)

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
        """Delete every entity of the domain (:mod:`atlas_sync.reconcile.teardown`); ``purge`` them too,
        ``typedefs``: the profile's, when nothing else uses them. Run again, it finishes the job."""
        return teardown.teardown(
            self,
            purge=purge,
            typedefs=typedefs,
            progress=progress,
            plan=plan,
            parallel=parallel,
            batch_size=batch_size,
        )

    def plan_teardown_job(self, job: str) -> Plan:
        """What :meth:`teardown_job` would delete: the plan of syncing ``job`` to nothing (nothing is
        written). Its deletes are the job's own entities; a dataset (or column) the job created that
        another entity still refers to stays, and the plan's warnings say how many."""
        return teardown.plan_teardown_job(self, job)

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
        says (:mod:`atlas_sync.api.teardown`); stopped at any point, the same call finishes the job."""
        return teardown.teardown_job(
            self, job, purge=purge, progress=progress, parallel=parallel, batch_size=batch_size, plan=plan
        )

    def list_domain(self) -> dict[tuple[str, str], ActualHeader]:
        """Every ACTIVE entity of the domain, as headers by (type, qualifiedName): what ``show`` draws
        and ``teardown`` deletes (by the domain's key on Atlas's index); a job's sync never needs this."""
        return teardown.list_domain(self)

    def held_under_other_profiles(self) -> dict[str, int]:
        """Other built-in profiles the domain holds ACTIVE entities under, and how many."""
        return teardown.held_under_other_profiles(self)

    def rebuild(
        self,
        graph: LineageGraph,
        job: str | None = None,
        *,
        progress: Progress | None = None,
        parallel: int | None = None,
        teardown_progress: Progress | None = None,
        plan: TeardownPlan | Plan | None = None,
        batch_size: int | None = None,
        only_job: bool = False,
    ) -> SyncResult:
        """Teardown (with purge) + typedefs + sync: a fresh copy of the domain (with ``only_job``, of
        ``job`` alone: :meth:`teardown_job`) from the input; stopped at any point and run again, it
        finishes. ``teardown_progress`` / ``progress``: the two phases'; ``plan``: the teardown's,
        from :meth:`plan_teardown` ``(purge=True)`` (or :meth:`plan_teardown_job`), when shown.
        The result's ``teardown``: what the teardown of the job did."""
        return teardown.rebuild(
            self,
            graph,
            job if only_job else None,
            progress=(teardown_progress, progress),
            parallel=parallel,
            plan=plan,
            batch=batch_size,
            sync_job=job,
        )
