"""SeaTunnel configs and WhaleTunnel exports -> steps, then the graph (one builder for both)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.seatunnel.build import Builder
from atlas_sync.lineage.seatunnel.connectors import DEFAULT_TABLE, NONE, naming_of, upstream_table
from atlas_sync.lineage.seatunnel.hocon import JobConfig
from atlas_sync.lineage.seatunnel.steps import (
    SINK,
    SOURCE,
    TRANSFORM,
    Step,
    TableRef,
    declared_fields,
    insert_target,
    registry_query,
    registry_tables,
    tables_from_options,
)


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def _known_connector(step: Step, o: Mapping[str, Any]) -> str | None:
    """Fill a known connector's datasets (a sink's are named later, per upstream table); its query."""
    naming = step.naming
    assert naming is not None
    if naming.kind == NONE:
        step.identities = _identities(o)
        return None
    if step.kind == SOURCE:
        step.tables, problems = registry_tables(step.plugin, naming, o)
        step.problems += [("seatunnel-no-table", f"{step.id} ({step.plugin}): {p}") for p in problems]
        query, step.query_scope, step.query_schemas = registry_query(naming, o)
        declared = upstream_table(o)
        if declared is not None:
            step.identities = [declared]
        return query
    q = o.get(naming.query) if naming.query else None
    return q if isinstance(q, str) else None


def _identities(o: Mapping[str, Any]) -> list[list[str]]:
    """Table names a data generator declares (``schema.table``, per entry of ``tables_configs``)."""
    entries = o.get("tables_configs")
    if isinstance(entries, list):
        out = [upstream_table(e) or DEFAULT_TABLE for e in entries if isinstance(e, Mapping)]
        if out:
            return out
    return [upstream_table(o) or DEFAULT_TABLE]


def seatunnel_steps(job: JobConfig, *, file: str | None) -> list[Step]:
    """Normalise a SeaTunnel job config into steps linked by plugin_input / plugin_output."""
    steps: list[Step] = []
    produced: dict[str, str] = {}
    for plugin in job.plugins:
        o = plugin.options
        kind = {"source": SOURCE, "transform": TRANSFORM, "sink": SINK}[plugin.section]
        output = o.get("plugin_output", o.get("result_table_name"))
        step = Step(
            id=plugin.id,
            kind=kind,
            plugin=plugin.name,
            options=o,
            output_name=str(output) if output is not None else None,
        )
        query = o.get("query", o.get("sql"))
        if kind in (SOURCE, SINK):
            step.fields, step.field_types = declared_fields(o)
            step.naming = naming_of(plugin.name, "source" if kind == SOURCE else "sink")
            if step.naming is not None:
                query = _known_connector(step, o)
            else:
                step.tables = tables_from_options(plugin.name, o, step.output_name)
                step.problems.append(
                    (
                        "seatunnel-unknown-connector",
                        f"{step.id}: connector {plugin.name!r} is not in atlas-sync's connector table "
                        "(docs/seatunnel.md); its dataset is guessed from common options (table_path, "
                        "table, table_list, database, path, topic)",
                    )
                )
        if isinstance(query, str) and query.strip():
            step.query = query
            if kind == SINK:
                parts, cols = insert_target(query)
                if parts and not step.tables and step.naming is None:
                    step.tables = [TableRef(parts=parts)]
                if cols and step.fields is None:
                    step.fields = cols
        steps.append(step)
        if step.output_name:
            produced[step.output_name] = step.id
    # Links: named inputs, or (SeaTunnel's default) the plugin before it.
    for i, step in enumerate(steps):
        if step.kind == SOURCE:
            continue
        names = _names(step.options.get("plugin_input", step.options.get("source_table_name")))
        if names:
            for n in names:
                if n not in produced:
                    raise InputError(
                        f"{step.id}: plugin_input {n!r} is not the plugin_output of any plugin",
                        file=file,
                        hint="known outputs: " + (", ".join(sorted(produced)) or "none"),
                    )
                step.inputs.append(produced[n])
        elif step.kind == TRANSFORM:
            if i == 0 or steps[i - 1].kind == SINK:
                raise InputError(f"{step.id}: no input", file=file)
            prev = [s for s in steps[:i] if s.kind == TRANSFORM]
            step.inputs = [prev[-1].id] if prev else [s.id for s in steps[:i] if s.kind == SOURCE]
        else:
            transforms = [s for s in steps if s.kind == TRANSFORM]
            step.inputs = [transforms[-1].id] if transforms else [s.id for s in steps if s.kind == SOURCE]
    return steps


def _json_field(value: Any, *, file: str | None, path: str) -> dict[str, Any]:
    """WhaleTunnel stores options as JSON strings; accept objects too."""
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            data = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON inside the string: {exc.msg}", file=file, path=path) from None
        if isinstance(data, Mapping):
            return dict(data)
    raise InputError("expected a JSON object (or a string holding one)", file=file, path=path)


def whaletunnel_steps(definition: Mapping[str, Any], *, file: str | None, path: str) -> list[Step]:
    """Normalise one WhaleTunnel job definition (jobTasks + jobLines) into steps."""
    tasks = definition.get("jobTasks")
    if not isinstance(tasks, list):
        raise InputError("'jobTasks' must be a list", file=file, path=f"{path}.jobTasks")
    steps: dict[str, Step] = {}
    for i, task in enumerate(tasks):
        where = f"{path}.jobTasks[{i}]"
        if not isinstance(task, Mapping):
            raise InputError("a job task must be an object", file=file, path=where)
        pid = task.get("pluginId")
        if not isinstance(pid, str | int) or pid == "":
            raise InputError("a job task needs a 'pluginId'", file=file, path=where)
        pid = str(pid)
        if pid in steps:
            raise InputError(f"duplicate pluginId {pid!r}", file=file, path=where)
        kind = str(task.get("type") or "").upper()
        plugin = str(task.get("connectorType") or task.get("pluginName") or "")
        if kind not in (SOURCE, TRANSFORM, SINK):
            raise InputError(
                f"task {pid!r} ({plugin or 'no connectorType'}) has type {task.get('type')!r}, "
                "which is not supported (SOURCE, TRANSFORM or SINK)",
                file=file,
                path=f"{where}.type",
            )
        opts = _json_field(task.get("dataSourceOption"), file=file, path=f"{where}.dataSourceOption")
        for key in ("transformOptions", "pluginConfig", "config"):
            opts.update(_json_field(task.get(key), file=file, path=f"{where}.{key}"))
        if task.get("dataSourceName"):
            opts.setdefault("datasource_name", str(task["dataSourceName"]))
        select = _json_field(task.get("selectTableFields"), file=file, path=f"{where}.selectTableFields")
        step = Step(id=pid, kind=kind, plugin=plugin or kind.title(), options=opts, output_name=pid)
        if kind in (SOURCE, SINK):
            step.tables = tables_from_options(step.plugin, opts, pid)
            step.fields, step.field_types = declared_fields(select or opts)
        q = opts.get("query", opts.get("sql"))
        if isinstance(q, str) and q.strip():
            step.query = q
        steps[pid] = step
    lines = definition.get("jobLines") or []
    if not isinstance(lines, list):
        raise InputError("'jobLines' must be a list", file=file, path=f"{path}.jobLines")
    for i, line in enumerate(lines):
        where = f"{path}.jobLines[{i}]"
        if not isinstance(line, Mapping):
            raise InputError("a job line must be an object", file=file, path=where)
        src, dst = str(line.get("inputPluginId")), str(line.get("targetPluginId"))
        for key, ident in (("inputPluginId", src), ("targetPluginId", dst)):
            if ident not in steps:
                raise InputError(
                    f"{key} {line.get(key)!r} is not the pluginId of any job task",
                    file=file,
                    path=f"{where}.{key}",
                    hint="known pluginIds: " + ", ".join(sorted(steps)),
                )
        if steps[dst].kind == SOURCE:
            raise InputError(f"a line cannot lead into the source {dst!r}", file=file, path=where)
        if src not in steps[dst].inputs:
            steps[dst].inputs.append(src)
    for s in steps.values():
        if s.kind != SOURCE and not s.inputs:
            raise InputError(
                f"task {s.id!r} ({s.plugin}) has no incoming jobLines", file=file, path=f"{path}.jobLines"
            )
    return list(steps.values())


def build_graph(
    steps: list[Step],
    *,
    job: str,
    file: str | None,
    graph: LineageGraph | None = None,
    connection_map: Mapping[str, str] | None = None,
    default_schema: str | None = None,
    dialect: str | None = None,
    source: str = "seatunnel",
) -> LineageGraph:
    g = graph if graph is not None else LineageGraph(source=source, job=job)
    Builder(
        g,
        steps,
        job=job,
        file=file,
        connection_map=connection_map or {},
        default_schema=default_schema,
        dialect=dialect,
    ).build()
    return g
