"""A dbt project's lineage from its artifacts: one dataset per model, seed, snapshot and source
relation, one process per model, snapshot and seed, column lineage from each compiled query.

Table lineage is dbt's own graph (``depends_on.nodes``, ephemeral models followed to the relations
they read), plus any table the compiled SQL names directly; column lineage is the SQL reader's, of
``CREATE TABLE|VIEW <relation> AS <compiled SQL>`` with the relations' columns (catalog first, then
what earlier models' SQL gave, then the YAML) as its schema, models taken in dependency order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.dbt.artifacts import Artifacts
from atlas_sync.lineage.dbt.naming import Namer, adapter_dialect
from atlas_sync.lineage.dbt.select import select_nodes
from atlas_sync.lineage.model import Column, Dataset, LineageGraph, Process, dotted, split_dotted
from atlas_sync.lineage.sql.analyze import Context, TableRef
from atlas_sync.lineage.sql.build import GraphIndex, add_statement
from atlas_sync.lineage.sql.schema import SchemaStore
from atlas_sync.lineage.sql.script import analyze_text
from atlas_sync.wording import counted

#: Node types that are relations; those with a process of their own.
RELATION_TYPES = ("model", "seed", "snapshot", "source")
PROCESS_TYPES = ("model", "seed", "snapshot")
_VIEWS = ("view", "materialized_view", "materializedview")
# The columns dbt adds to a snapshot (renamed by snapshot_meta_column_names, dbt 1.9+).
SNAPSHOT_COLUMNS = ("dbt_scd_id", "dbt_updated_at", "dbt_valid_from", "dbt_valid_to")
# Statuses of a run result for which the node's relation was (re)built.
RAN = ("success", "pass", "warn")


def project_name(manifest: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> str:
    """The root project: ``metadata.project_name`` (dbt 1.6+), else the package most nodes are of."""
    name = (manifest.get("metadata") or {}).get("project_name")
    if isinstance(name, str) and name:
        return name
    counts = Counter(
        str(n.get("package_name")) for n in nodes.values() if n.get("resource_type") in PROCESS_TYPES
    )
    return counts.most_common(1)[0][0] if counts else "dbt"


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _owners(*metas: Any) -> list[str]:
    """``meta.owner`` / ``meta.owners`` (a name or a list of names) of the first meta that has one."""
    for meta in metas:
        if not isinstance(meta, dict):
            continue
        for key in ("owner", "owners"):
            value = meta.get(key)
            items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            names = [str(x).strip() for x in items if isinstance(x, (str, int)) and str(x).strip()]
            if names:
                return list(dict.fromkeys(names))
    return []


def _materialized(node: dict[str, Any]) -> str:
    return str((node.get("config") or {}).get("materialized") or node.get("resource_type") or "")


def _code(node: dict[str, Any]) -> str | None:
    """The compiled SQL (``compiled_code``, ``compiled_sql`` before dbt 1.3), without a final ``;``."""
    code = node.get("compiled_code", node.get("compiled_sql"))
    if not isinstance(code, str) or not code.strip():
        return None
    return code.strip().rstrip(";").rstrip()


class ProjectReader:
    """Builds the graph of one project's artifacts (see the module docstring)."""

    def __init__(
        self,
        art: Artifacts,
        *,
        dialect: str | None = None,
        select: str | Sequence[str] | None = None,
        only_ran: bool = False,
        job: str | None = None,
    ) -> None:
        self.art = art
        meta = art.manifest.get("metadata") or {}
        self.adapter = str(meta.get("adapter_type") or "")
        picked = dialect if dialect else adapter_dialect(self.adapter)
        self.graph = LineageGraph(job=job or project_name(art.manifest, art.nodes), source="dbt")
        if picked is None:
            self.graph.problem(
                f"dbt adapter {self.adapter or '(none)'!r} has no known SQL dialect: the compiled SQL is "
                "parsed as generic SQL (give --dialect)",
                code="dbt-dialect",
                file=art.manifest_path,
            )
            picked = ""
        from atlas_sync.lineage.sql.dialects import resolve_dialect

        self.dialect = resolve_dialect(picked) if dialect else picked
        self.namer = Namer(self.dialect)
        quoting = meta.get("quoting")
        self.quoting: dict[str, Any] = quoting if isinstance(quoting, dict) else {}
        self.index = GraphIndex(self.graph)
        self.relations: dict[str, TableRef] = {}
        self.catalog_columns: dict[str, list[Column]] = {}
        self.results = {
            r["unique_id"]: r for r in (art.run_results or {}).get("results", []) if isinstance(r, dict)
        }
        self.select = select
        self.only_ran = only_ran
        self.known: dict[str, list[str]] = {}

    # ------------------------------------------------------------------ graph of dbt
    def parents(self, uid: str) -> list[str]:
        node = self.art.nodes.get(uid) or {}
        deps = (node.get("depends_on") or {}).get("nodes") or []
        return [d for d in deps if isinstance(d, str)]

    def is_ephemeral(self, uid: str) -> bool:
        node = self.art.nodes.get(uid)
        return (
            node is not None and node.get("resource_type") == "model" and _materialized(node) == "ephemeral"
        )

    def upstream(self, uid: str) -> list[str]:
        """The relations a node reads: its parents, ephemeral models followed to theirs."""
        out: list[str] = []
        seen: set[str] = set()
        stack = list(reversed(self.parents(uid)))
        while stack:
            dep = stack.pop()
            if dep in seen:
                continue
            seen.add(dep)
            if self.is_ephemeral(dep):
                stack.extend(reversed(self.parents(dep)))
            elif dep in self.relations:
                out.append(dep)
        return out

    def _order(self, uids: Iterable[str]) -> list[str]:
        """``uids`` parents first (dbt's DAG; a cycle, which dbt refuses, keeps file order)."""
        wanted = list(uids)
        order: list[str] = []
        state: dict[str, int] = {}
        for start in wanted:
            stack: list[tuple[str, bool]] = [(start, False)]
            while stack:
                uid, done = stack.pop()
                if done:
                    state[uid] = 2
                    order.append(uid)
                    continue
                if state.get(uid):
                    continue
                state[uid] = 1
                stack.append((uid, True))
                stack.extend((p, False) for p in reversed(self.parents(uid)) if not state.get(p))
        keep = set(wanted)
        return [u for u in order if u in keep]

    # ------------------------------------------------------------------ reading
    def read(self) -> LineageGraph:
        art = self.art
        for uid, node in art.nodes.items():
            if node.get("resource_type") in RELATION_TYPES and not self.is_ephemeral(uid):
                ref = self.namer.relation_of(node, self.quoting)
                if ref is not None:
                    self.relations[uid] = ref
                else:
                    self.graph.problem(
                        f"{uid}: its relation {node.get('relation_name')!r} is no table name: left out",
                        code="dbt-relation",
                        file=art.manifest_path,
                    )
        self._load_catalog()
        chosen = self._chosen()
        # Columns of each relation for the SQL reader's schema: the warehouse's, else the YAML's,
        # else (set as models are read, parents first) what the model's SQL outputs.
        for uid in self.relations:
            cols = self.catalog_columns.get(uid) or self._yaml_columns(art.nodes[uid])
            if cols:
                self.known[uid] = [c.name for c in cols]
        if chosen is None:
            datasets = set(self.relations)
        else:  # the chosen relations and those they read
            datasets = {u for u in chosen if u in self.relations}
            datasets |= {u for c in list(datasets) for u in self.upstream(c)}
        for uid in self._order(datasets):
            self._dataset(uid)
        missing_sql: list[str] = []
        for uid in self._order(u for u in datasets if chosen is None or u in chosen):
            node = art.nodes[uid]
            if node.get("resource_type") not in PROCESS_TYPES:
                continue
            if self.only_ran and str((self.results.get(uid) or {}).get("status")) not in RAN:
                continue
            if not self._process(uid, node) and node.get("resource_type") != "seed":
                missing_sql.append(uid)
        if missing_sql:
            self.graph.problem(
                f"{counted(len(missing_sql), 'node')} {'has' if len(missing_sql) == 1 else 'have'} no compiled "
                f"SQL (e.g. {missing_sql[0]}): table lineage "
                "only; run dbt compile, run or build to write it into the manifest",
                code="dbt-not-compiled",
                file=art.manifest_path,
            )
        if chosen is not None or self.only_ran:
            self.graph.partial = True
        return self.graph

    def _chosen(self) -> set[str] | None:
        children: dict[str, list[str]] = {}
        parents = {uid: self.parents(uid) for uid in self.art.nodes}
        for uid, ps in parents.items():
            for p in ps:
                children.setdefault(p, []).append(uid)
        chosen = select_nodes(self.select, self.art.nodes, parents, children, file=None)
        if chosen is not None and not (chosen & set(self.relations)):
            raise InputError(
                f"the selection {self.select!r} names no model, seed, snapshot or source",
                file=self.art.manifest_path,
            )
        if self.only_ran:
            ran = {u for u, r in self.results.items() if str(r.get("status")) in RAN}
            chosen = ran if chosen is None else chosen & ran
        return chosen

    def _load_catalog(self) -> None:
        cat = self.art.catalog or {}
        for key in ("nodes", "sources"):
            entries = cat.get(key) or {}
            if not isinstance(entries, dict):
                continue
            for uid, entry in entries.items():
                cols = entry.get("columns") if isinstance(entry, dict) else None
                if uid not in self.relations or not isinstance(cols, dict):
                    continue
                rows = sorted(
                    (c for c in cols.values() if isinstance(c, dict) and isinstance(c.get("name"), str)),
                    key=lambda c: int(c["index"]) if isinstance(c.get("index"), int) else 0,
                )
                self.catalog_columns[uid] = [
                    Column(
                        name=self.namer.column(c["name"]),
                        type=_text(c.get("type")),
                        description=_text(c.get("comment")),
                    )
                    for c in rows
                ]

    def _yaml_columns(self, node: dict[str, Any]) -> list[Column]:
        cols = node.get("columns") or {}
        out: list[Column] = []
        if isinstance(cols, dict):
            for key, c in cols.items():
                c = c if isinstance(c, dict) else {}
                name = str(c.get("name") or key)
                given = c.get("config")
                config: dict[str, Any] = given if isinstance(given, dict) else {}
                out.append(
                    Column(
                        name=self.namer.column(name, quoted=c.get("quote") is True),
                        type=_text(c.get("data_type")),
                        description=_text(c.get("description")),
                        # a column's tags and meta owner (dbt 1.x: `tags`, `meta`; 1.10+: under `config`)
                        tags=tuple(
                            sorted({str(t) for t in [*(c.get("tags") or []), *(config.get("tags") or [])]})
                        ),
                        owners=tuple(_owners(c.get("meta"), config.get("meta"))),
                    )
                )
        return out

    def _dataset(self, uid: str) -> None:
        node, ref = self.art.nodes[uid], self.relations[uid]
        yaml = self._yaml_columns(node)
        docs = {c.name: c for c in yaml}
        columns = [
            c.model_copy(
                update={
                    "description": (docs[c.name].description if c.name in docs else None) or c.description,
                    "tags": docs[c.name].tags if c.name in docs else (),
                    "owners": docs[c.name].owners if c.name in docs else (),
                }
            )
            for c in self.catalog_columns.get(uid, [])
        ]
        have = {c.name for c in columns}
        columns += [c for c in yaml if c.name not in have]  # documented, not (yet) in the warehouse
        config = node.get("config") or {}
        kind = "view" if _materialized(node) in _VIEWS else "table"
        group = self._group(node)
        self.index.add_dataset(
            Dataset(
                id=ref.id,
                namespace=ref.namespace,
                name=ref.name,
                kind=kind,
                columns=columns,
                facets={
                    "connection": self.adapter,
                    "dbt": {"uniqueId": uid, "resourceType": node.get("resource_type")},
                },
                description=_text(node.get("description")) or _text(node.get("source_description")),
                owners=_owners(node.get("meta"), config.get("meta"), node.get("source_meta")) or group,
                tags=sorted({str(t) for t in [*(node.get("tags") or []), *(config.get("tags") or [])]}),
            )
        )

    def _group(self, node: dict[str, Any]) -> list[str]:
        """The owner of the node's group (dbt 1.5+ ``groups``), as its email or name."""
        name = node.get("group") or (node.get("config") or {}).get("group")
        group = (self.art.manifest.get("groups") or {}).get(f"group.{node.get('package_name')}.{name}")
        owner = (group or {}).get("owner") if isinstance(group, dict) else None
        if isinstance(owner, dict):
            who = _text(owner.get("email")) or _text(owner.get("name"))
            return [who] if who else []
        return []

    def _process(self, uid: str, node: dict[str, Any]) -> bool:
        """Add the node's process; False when it has no compiled SQL (table lineage only)."""
        ref = self.relations[uid]
        config = node.get("config") or {}
        attrs: dict[str, Any] = {
            "dbtUniqueId": uid,
            "resourceType": node.get("resource_type"),
            "materialized": _materialized(node),
            "sourceFile": node.get("original_file_path"),
        }
        result = self.results.get(uid)
        if result is not None:
            attrs["status"] = result.get("status")
            if isinstance(result.get("execution_time"), (int, float)):
                attrs["executionTime"] = result["execution_time"]
        code = _code(node) if node.get("resource_type") != "seed" else None
        language = str(node.get("language") or "sql")
        process: Process | None = None
        if code is not None and language == "sql":
            process = self._sql_process(uid, node, ref, code, attrs)
        inputs = [self.relations[u].id for u in self.upstream(uid)]
        if process is None:
            if code is not None:
                attrs["queryText"] = code
            process = self.index.add_process(
                Process(
                    id=uid,
                    name=str(node.get("name") or uid),
                    kind="job",
                    inputs=[],
                    outputs=[],
                    attributes=attrs,
                )
            )
        # dbt's graph first; tables the SQL names directly (not through ref/source) after them.
        process.inputs = list(dict.fromkeys([*inputs, *(i for i in process.inputs if i != ref.id)]))
        process.outputs = [ref.id]
        process.name = str(node.get("name") or uid)
        process.description = _text(node.get("description"))
        process.owners = _owners(node.get("meta"), config.get("meta")) or self._group(node)
        process.tags = sorted({str(t) for t in [*(node.get("tags") or []), *(config.get("tags") or [])]})
        return code is not None

    def _sql_process(
        self, uid: str, node: dict[str, Any], ref: TableRef, code: str, attrs: dict[str, Any]
    ) -> Process | None:
        view = _materialized(node) in _VIEWS
        text = f"CREATE {'VIEW' if view else 'TABLE'} {dotted(*split_dotted(ref.id))} AS\n{code}"
        # A schema of the relations this node reads (and its own, for an incremental model reading
        # itself): sqlglot rebuilds a schema whenever it changes, so one of the whole project,
        # growing model by model, would make the reader quadratic.
        tables = {
            self.relations[u].id: self.known[u] for u in [*self.upstream(uid), uid] if self.known.get(u)
        }
        ctx = Context.create(self.dialect, SchemaStore(tables, dialect=self.dialect), None)
        st = analyze_text(text, 1, 1, 1, ctx)
        if st.error or not st.lineage_bearing:
            why = next((p["message"] for p in st.problems if p.get("severity") == "error"), "no lineage")
            self.graph.problem(
                f"{uid}: column lineage skipped, the compiled SQL could not be analysed ({why})",
                code="dbt-sql",
                file=self.art.manifest_path,
            )
            return None
        for p in st.problems:
            p["message"] = f"{uid}: {p['message']}"
            p["line"] = max(1, int(p["line"]) - 1) if isinstance(p.get("line"), int) else None
        if uid not in self.catalog_columns:  # the warehouse has the final word on columns
            written = next((w for w in st.writes if w.id == ref.id), None)
            if written is not None and node.get("resource_type") == "snapshot":
                names = (node.get("config") or {}).get("snapshot_meta_column_names") or {}
                extra = [str(names.get(c) or c) for c in SNAPSHOT_COLUMNS]
                written.columns += [c for c in extra if c not in written.columns]
            if written is not None and written.columns:
                self.known[uid] = list(written.columns)
        attrs = {**attrs, "queryText": code, "statementType": st.type}
        process = add_statement(
            self.graph,
            st,
            process_id=uid,
            file=self.art.manifest_path,
            dialect=self.dialect,
            attributes=attrs,
            statement_doc=False,
            index=self.index,
        )
        if process is not None:
            process.attributes.pop("line", None)  # of the wrapped statement, not of a file
        return process
