"""The ``tableau`` reader: Tableau workbooks and data sources -> BI lineage (docs/bi.md).

``atlas-sync sync --from tableau book.twbx sales.tds`` (``--from auto`` recognises the files by their
extension; a folder is searched for them). Reads ``.twb`` / ``.tds`` (XML) and the packaged ``.twbx`` /
``.tdsx`` (zip): data sources, their connections and relations, custom SQL through the SQL reader,
worksheets and dashboards. A file that is truncated or a corrupt zip is an error naming it, and nothing
of it is read.

Options: ``connection_map`` (``server/dbname``, ``dbname`` or ``server`` of a connection -> namespace; a
dict or a TOML/JSON file, keys may be ``fnmatch`` patterns), ``job`` (default ``tableau``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage.naming import load_namespace_map
from atlas_sync.lineage.tableau.document import TABLEAU_EXTENSIONS, TableauFileError, load, tableau_files


class TableauReader:
    name = "tableau"
    extensions = TABLEAU_EXTENSIONS
    description = (
        "Tableau workbooks and data sources (.twb, .twbx, .tds, .tdsx): connections, tables, joins, custom "
        "SQL, worksheets and dashboards"
    )

    def sniff(self, path: str, head: bytes) -> bool:
        return path != "-" and path.lower().endswith(TABLEAU_EXTENSIONS)

    def read(
        self, paths: Sequence[str], *, connection_map: Any = None, job: str | None = None, **_options: Any
    ) -> LineageGraph:
        if not paths or "-" in paths:
            raise InputError("give Tableau files (.twb, .twbx, .tds, .tdsx) or a folder of them (not stdin)")
        from atlas_sync.lineage.tableau.build import TableauGraph

        files = tableau_files(list(paths))
        if not files:
            raise InputError("no .twb, .twbx, .tds or .tdsx file", file=paths[0])
        docs, errors = [], []
        for f in files:
            try:
                docs.append(load(f))
            except TableauFileError as exc:
                errors.append(exc)
        if not docs:
            e = errors[0]
            raise InputError(e.message, file=e.file, line=e.line)
        graph = TableauGraph(
            docs, job=job or "tableau", connection_map=load_namespace_map(connection_map)
        ).build()
        for e in errors:
            graph.problem(e.message, code="tableau-invalid", file=e.file, line=e.line, severity="error")
        return graph


READER = TableauReader()
