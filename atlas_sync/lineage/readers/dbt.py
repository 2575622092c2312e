"""The ``dbt`` reader: a dbt project's lineage from the artifacts dbt writes in ``target/``.

``read([path])`` takes the ``target/`` folder or its ``manifest.json``; ``catalog.json`` and
``run_results.json`` next to it are read when present. Options (keyword arguments, ``-o name=value``):

* ``select`` -- dbt node selection (names, ``tag:``, ``path:``, ``source:``, ``+`` operators; space =
  union, comma = intersection): only those nodes' processes (and the datasets they touch);
* ``run_results`` -- a ``run_results.json``: only the nodes that ran successfully in that invocation;
* ``catalog`` -- another ``catalog.json`` (``false``: none);
* ``dialect`` -- the SQL dialect of the compiled SQL (default: the manifest's adapter type);
* ``job`` -- the job scope (default: the dbt project's name).

A selection or run results give a ``partial`` graph: a sync of it deletes nothing. See docs/dbt.md.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.dbt.artifacts import load
from atlas_sync.lineage.dbt.build import ProjectReader
from atlas_sync.lineage.model import LineageGraph


class DbtReader:
    name = "dbt"
    extensions = ()
    description = (
        "dbt artifacts (target/ or manifest.json, v4-v12 = dbt 1.0+; catalog.json, run_results.json): "
        "models, seeds, snapshots, sources, column lineage of the compiled SQL, descriptions, owners"
    )

    def sniff(self, path: str, head: bytes) -> bool:
        if os.path.isdir(path):
            return os.path.isfile(os.path.join(path, "manifest.json"))
        return b'"dbt_schema_version"' in head and b"/dbt/manifest/" in head

    def read(
        self,
        paths: Sequence[str],
        *,
        select: str | Sequence[str] | None = None,
        run_results: str | None = None,
        catalog: str | bool | None = None,
        dialect: str | None = None,
        job: str | None = None,
        **_options: Any,
    ) -> LineageGraph:
        """Read one project's artifacts; see the module docstring for the options."""
        if len(paths) != 1:
            raise InputError(
                f"the dbt reader reads one project's target/ folder or manifest.json, not {len(paths)} paths",
                hint="sync each project on its own (each is a job)",
            )
        if paths[0] == "-":
            raise InputError("the dbt reader needs the manifest's folder, not stdin")
        only_ran = run_results is not None and str(run_results).strip() != ""
        art = load(paths[0], catalog=catalog, run_results=run_results if only_ran else None)
        graph = ProjectReader(art, dialect=dialect, select=select, only_ran=only_ran, job=job).read()
        graph.add_edge_inputs()  # an incremental model reads itself ({{ this }}): an input too
        return graph


READER = DbtReader()
