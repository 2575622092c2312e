"""SeaTunnel configs and WhaleTunnel exports -> steps, then the graph (one builder for both)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.seatunnel.build import Builder
from atlas_sync.lineage.seatunnel.hocon import JobConfig
from atlas_sync.lineage.seatunnel.steps import (
    SINK,
    SOURCE,
    TRANSFORM,
    Step,
    TableRef,
    declared_fields,
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


def _insert_target(query: str) -> tuple[list[str] | None, list[str] | None]:
    """(table parts, column list) of a sink's ``INSERT INTO t (a, b) VALUES (?, ?)``."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(query.replace("?", "NULL"))
    except Exception:  # noqa: BLE001 - the sink SQL is informative only
        return None, None
    if not isinstance(tree, exp.Insert):
        return None, None
    target = tree.this
    cols = None
    if isinstance(target, exp.Schema):
        cols = [c.name for c in target.expressions]
        target = target.this
    if isinstance(target, exp.Table):
        return [p for p in (target.catalog, target.db, target.name) if p], cols
    return None, cols


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
        if kind in (SOURCE, SINK):
            step.tables = tables_from_options(plugin.name, o, step.output_name)
            step.fields, step.field_types = declared_fields(o)
        query = o.get("query", o.get("sql"))
        if isinstance(query, str) and query.strip():
            step.query = query
            if kind == SINK:
                parts, cols = _insert_target(query)
                if parts and not step.tables:
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
