"""The ``superset`` reader: Apache Superset dashboards, charts and datasets -> BI lineage (docs/bi.md).

Two ways in, one graph:

* an **export** -- the ZIP of ``superset export-dashboards`` or of the dashboard list's export
  (``GET /api/v1/dashboard/export/``, format 1.0.0), or its unzipped folder: ``atlas-sync sync --from
  superset export.zip`` (``--from auto`` recognises it);
* a **live Superset** -- ``--superset-url https://superset.example.com`` (no input file); the user from
  ``SUPERSET_USERNAME`` and the password from ``SUPERSET_PASSWORD`` or ``SUPERSET_PASSWORD_FILE`` (never
  the command line); every dashboard, or those ``--select`` names (title, id or uuid).

Options: ``connection_map`` (Superset database name -> namespace; a dict or a TOML/JSON file, keys may be
``fnmatch`` patterns), ``superset_url``, ``select``, ``page_size`` (API, default 100), ``workers`` (API
requests in parallel, default 4), ``job`` (default ``superset``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage.naming import load_namespace_map
from atlas_sync.lineage.readers.options import positive_int
from atlas_sync.lineage.superset.build import SupersetGraph
from atlas_sync.lineage.superset.content import SupersetContent, is_export, read_export


class SupersetReader:
    name = "superset"
    extensions = (".zip",)
    description = (
        "Apache Superset: a dashboard export ZIP (or folder), or a live Superset (--superset-url): "
        "datasets, charts, dashboards, lineage from the warehouse tables"
    )
    needs_files = False  # --superset-url reads a server

    def sniff(self, path: str, head: bytes) -> bool:
        if path == "-" or not (head.startswith(b"PK\x03\x04") or os.path.isdir(path)):
            return False
        return is_export(path)

    def read(
        self,
        paths: Sequence[str],
        *,
        connection_map: Any = None,
        superset_url: str | None = None,
        select: Sequence[str] | str | None = None,
        page_size: Any = None,
        workers: Any = None,
        job: str | None = None,
        progress: Any = None,
        **_options: Any,
    ) -> LineageGraph:
        """Read export ZIPs/folders, or (``superset_url``) a live Superset; see the module docs."""
        cmap = load_namespace_map(connection_map)
        name = job or "superset"
        if superset_url:
            if paths:
                raise InputError("give either input files (exports) or --superset-url, not both")
            from atlas_sync.lineage.superset.api import read_api

            content = read_api(
                superset_url,
                select=[select] if isinstance(select, str) else list(select or []),
                page_size=positive_int(page_size, 100, "page_size"),
                workers=positive_int(workers, 4, "workers"),
                progress=progress is not False,
            )
            graph = SupersetGraph(content, job=name, connection_map=cmap, base_url=superset_url).build()
            graph.partial = bool(select)  # a selection is part of the job: nothing is deleted
            return graph
        if not paths:
            raise InputError(
                "no Superset export given",
                hint="give an export ZIP (superset export-dashboards) or --superset-url URL",
            )
        content = SupersetContent()
        for p in paths:
            if p == "-":
                raise InputError("a Superset export is a ZIP file or folder, not stdin")
            one = read_export(p)
            if not (one.datasets or one.charts or one.dashboards):
                raise InputError("the export holds no dataset, chart or dashboard", file=p)
            for section in ("databases", "datasets", "charts", "dashboards"):
                getattr(content, section).update(getattr(one, section))
            content.origin.update(one.origin)
            content.unreadable.extend(one.unreadable)
        if select:
            content = _selected(content, [select] if isinstance(select, str) else list(select))
        graph = SupersetGraph(content, job=name, connection_map=cmap).build()
        graph.partial = bool(select)  # a selection is part of the job: nothing is deleted
        return graph


def _selected(content: SupersetContent, select: list[str]) -> SupersetContent:
    """Only the dashboards named (title or uuid) and what they use."""
    wanted = {s.strip() for s in select if s.strip()}
    dashes = {
        u: d for u, d in content.dashboards.items() if u in wanted or str(d.get("dashboard_title")) in wanted
    }
    if not dashes:
        raise InputError(f"no dashboard matches --select {', '.join(sorted(wanted))}")
    from atlas_sync.lineage.superset.content import position_chart_uuids

    charts = {
        c: content.charts[c]
        for d in dashes.values()
        for c in position_chart_uuids(d.get("position"))
        if c in content.charts
    }
    datasets = {
        str(c.get("dataset_uuid")): content.datasets[str(c.get("dataset_uuid"))]
        for c in charts.values()
        if str(c.get("dataset_uuid")) in content.datasets
    }
    return SupersetContent(
        databases=content.databases,
        datasets=datasets,
        charts=charts,
        dashboards=dashes,
        origin=content.origin,
        unreadable=content.unreadable,
    )


READER = SupersetReader()
