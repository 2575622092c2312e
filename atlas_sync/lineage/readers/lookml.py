"""The ``lookml`` reader: a LookML project (Looker's modelling language) -> BI lineage (docs/bi.md).

``atlas-sync sync --from lookml path/to/project`` (a folder: ``--from auto`` recognises one with a
``*.model.lkml`` or ``manifest.lkml``; or LookML files). Parsed with ``lkml``: views (``sql_table_name``,
``derived_table: sql``, native derived tables whose explore is in the project), explores and their
joins, ``.dashboard.lookml`` dashboards and their elements; ``@{constants}`` from the manifest and the
common Liquid forms rendered, the rest reported as warnings. A file that does not parse is an error
naming it; the project's other files are still read.

Options: ``connection_map`` (LookML connection name -> namespace; a dict or a TOML/JSON file),
``dialect`` (of the warehouse's SQL; LookML does not say it), ``default_schema`` (of unqualified table
names), ``user_attributes`` (values for ``{{ _user_attributes['name'] }}``: a dict or ``k=v,k2=v2``),
``project`` (the project's name; default the manifest's ``project_name``, else the folder's name),
``job`` (default ``lookml-<project>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.lookml.build import LookmlGraph
from atlas_sync.lineage.lookml.project import is_lookml, load_project
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage.naming import load_namespace_map
from atlas_sync.lineage.readers.seatunnel import parse_variables
from atlas_sync.lineage.sql.dialects import resolve_dialect


class LookmlReader:
    name = "lookml"
    extensions = (".lkml", ".lookml")
    description = (
        "LookML projects (Looker): views, derived tables, explores and joins, dashboards and their "
        "elements; constants and Liquid rendered"
    )

    def sniff(self, path: str, head: bytes) -> bool:
        return path != "-" and is_lookml(path)

    def read(
        self,
        paths: Sequence[str],
        *,
        connection_map: Any = None,
        dialect: str | None = None,
        default_schema: str | None = None,
        user_attributes: Any = None,
        project: str | None = None,
        job: str | None = None,
        **_options: Any,
    ) -> LineageGraph:
        if not paths or "-" in paths:
            raise InputError("give a LookML project folder or its files (not stdin)")
        proj = load_project(paths, name=project)
        if not (proj.views or proj.models or proj.dashboards) and not proj.errors:
            raise InputError("no view, model or dashboard in the LookML files", file=paths[0])
        graph = LookmlGraph(
            proj,
            job=job or f"lookml-{proj.name}",
            connection_map=load_namespace_map(connection_map),
            dialect=resolve_dialect(dialect),
            default_schema=default_schema,
            user_attributes=parse_variables(user_attributes),
        ).build()
        if not graph.datasets and proj.errors:
            file, message, line = proj.errors[0]
            raise InputError(message, file=file, line=line)
        return graph


READER = LookmlReader()
