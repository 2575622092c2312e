"""The ``powerbi`` reader: Power BI projects and templates -> BI lineage (docs/bi.md).

``atlas-sync sync --from powerbi path/to/project`` (a PBIP folder, a ``*.SemanticModel`` or ``*.Report``
folder, a ``.pbip`` file, a ``.pbit`` template, a ``.pbix`` through pbixray; ``--from auto`` recognises
them). Tables and their M
expressions resolved to warehouse tables, measures and calculated columns, report pages and visuals.
A file that does not parse is an error naming it; nothing of its model or report is read.

Options: ``connection_map`` (``server/database``, ``database`` or ``server`` of an M source -> namespace;
a dict or a TOML/JSON file, keys may be ``fnmatch`` patterns), ``job`` (default ``powerbi``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage.naming import load_namespace_map
from atlas_sync.lineage.powerbi.content import is_powerbi, load_content


class PowerBiReader:
    name = "powerbi"
    extensions = (".pbit", ".pbix", ".pbip")
    description = (
        "Power BI projects (PBIP: TMDL models, PBIR reports), .pbit and .pbix files: tables' M expressions "
        "resolved to warehouse tables, measures, report pages and visuals"
    )

    def sniff(self, path: str, head: bytes) -> bool:
        return path != "-" and is_powerbi(path)

    def read(
        self, paths: Sequence[str], *, connection_map: Any = None, job: str | None = None, **_options: Any
    ) -> LineageGraph:
        if not paths or "-" in paths:
            raise InputError("give a Power BI project folder, .SemanticModel, .Report or .pbit (not stdin)")
        from atlas_sync.lineage.powerbi.build import PowerBiGraph

        content = load_content(list(paths))
        if not content.models and not content.reports:
            if content.errors:
                file, message, line = content.errors[0]
                raise InputError(message, file=file, line=line)
            raise InputError("no Power BI semantic model or report", file=paths[0])
        graph = PowerBiGraph(
            content, job=job or "powerbi", connection_map=load_namespace_map(connection_map)
        ).build()
        for file, message, line in content.errors:
            graph.problem(message, code="powerbi-invalid", file=file, line=line, severity="error")
        return graph


READER = PowerBiReader()
