"""The ``openlineage`` reader: OpenLineage RunEvents (one event, a JSON array, or JSON lines)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from atlas_sync.inputs import read_text
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage.convert import NamespaceMapLike, events_to_graph
from atlas_sync.lineage.openlineage.naming import load_namespace_map
from atlas_sync.lineage.openlineage.parse import RawEvent, parse_events


class OpenLineageReader:
    name = "openlineage"
    extensions = (".ol.json", ".openlineage.json", ".ol.jsonl", ".jsonl", ".ndjson")
    description = (
        "OpenLineage RunEvents (spec 2.x; one event, a JSON array or JSON lines): one process per job, "
        "schema and columnLineage facets, symlinks, sql job facet; a malformed facet is dropped with a warning"
    )

    def sniff(self, path: str, head: bytes) -> bool:
        text = head.lstrip()[:4096]
        if text[:1] not in (b"{", b"["):
            return False
        # RunEvents always carry these keys near the top, in any key order.
        return b'"eventType"' in text or (b'"run"' in text and b'"job"' in text and b'"runId"' in text)

    def read(
        self,
        paths: Sequence[str],
        *,
        namespace_map: NamespaceMapLike = None,
        event_types: Collection[str] | str | None = None,
        prefer_symlinks: bool | str = True,
        strict: bool | str = False,
        lenient_events: bool | str = False,
        **options: Any,
    ) -> LineageGraph:
        """Read events from ``paths``.

        Options: ``namespace_map`` (dict, or a TOML/JSON file) mapping OpenLineage namespaces to
        metadata namespaces; ``event_types`` (e.g. ``["COMPLETE"]``, or ``"COMPLETE,RUNNING"``; default
        all); ``prefer_symlinks`` (name a dataset by its TABLE symlink, default true); ``strict``
        (reject a whole event for one malformed facet, default false: the facet is dropped with a
        warning); ``lenient_events`` (accept events without ``eventTime`` and ``runId``s that are not
        UUIDs, which the spec requires; default false).
        """
        nsmap = load_namespace_map(namespace_map)
        prefer_symlinks = _flag(prefer_symlinks)  # from `-o prefer_symlinks=false`
        strict = _flag(strict)
        if isinstance(event_types, str):
            event_types = [t.strip() for t in event_types.split(",") if t.strip()]
        events: list[RawEvent] = []
        for p in paths:
            events.extend(parse_events(read_text(p), file=p))
        return events_to_graph(
            events,
            namespace_map=nsmap,
            event_types=event_types,
            prefer_symlinks=prefer_symlinks,
            strict=strict,
            lenient_events=_flag(lenient_events),
        )


def _flag(value: bool | str) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("0", "false", "no", "off", "")
    return bool(value)


READER = OpenLineageReader()
