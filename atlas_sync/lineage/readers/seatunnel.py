"""The ``seatunnel`` and ``whaletunnel`` readers: data-integration job definitions -> lineage."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.inputs import read_text
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage.naming import load_namespace_map
from atlas_sync.lineage.seatunnel.hocon import load_hocon, load_json_config
from atlas_sync.lineage.seatunnel.jobs import build_graph, seatunnel_steps, whaletunnel_steps


def parse_variables(value: Mapping[str, Any] | Sequence[str] | str | None) -> dict[str, str]:
    """``{"k": "v"}``, ``["k=v", ...]`` (SeaTunnel's ``-i k=v``) or ``"k=v,k2=v2"``."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    items = value.split(",") if isinstance(value, str) else list(value)
    out: dict[str, str] = {}
    for item in items:
        key, sep, val = str(item).partition("=")
        if not sep or not key.strip():
            raise InputError(f"a variable must be key=value, not {item!r}", hint="e.g. -i table=orders")
        out[key.strip()] = val
    return out


def _connection_map(value: Any) -> dict[str, str]:
    return load_namespace_map(value).entries if value is not None else {}


def _stem(path: str) -> str:
    return "stdin" if path == "-" else Path(path).name.split(".")[0]


def _name_sinks(graphs: list[LineageGraph], job: str | None, by_input: list[bool]) -> None:
    """Of several jobs, a sink whose job is only its file's name (``by_input[i]`` false), or any sink
    under the ``job`` option, is named ``<target>`` (``<job>:<target>``) without the file's name;
    sinks with the same name are ``:2``, ... in the order of their content, not of the files."""
    edges: dict[tuple[int, str | None], list[str]] = {}
    for gi, g in enumerate(graphs):
        for e in g.edges:
            edges.setdefault((gi, e.process), []).append(repr((e.source, e.target, e.kind, e.expression)))
    # (name without the job, then content: the sink's statement, inputs, outputs and column lineage)
    sinks = [
        (
            p.id[len(g.job) + 1 :],
            str(p.attributes.get("sql") or ""),
            tuple(p.inputs),
            tuple(p.outputs),
            tuple(sorted(edges.get((gi, p.id), []))),
            gi,
            p.id,
        )
        for gi, g in enumerate(graphs)
        if g.job and (job or not by_input[gi])
        for p in g.processes
        if p.id.startswith(g.job + ":")
    ]
    renamed = {(gi, pid) for *_, gi, pid in sinks}
    taken = {p.id for gi, g in enumerate(graphs) for p in g.processes if (gi, p.id) not in renamed}
    new_ids: list[dict[str, str]] = [{} for _ in graphs]
    for key, *_, gi, pid in sorted(sinks, key=lambda s: s[:5]):
        new = base = f"{job}:{key}" if job else key
        n = 1
        while new in taken:
            n += 1
            new = f"{base}:{n}"
        taken.add(new)
        new_ids[gi][pid] = new
    for g, ids in zip(graphs, new_ids, strict=True):
        g.rename_processes(ids)


def _merge_jobs(graphs: list[LineageGraph], job: str | None, by_input: list[bool]) -> LineageGraph:
    """The files' graphs as one; several jobs of their own sync under the first job by name, whatever
    the files' order."""
    if not graphs:
        raise InputError("no input file given")
    if len(graphs) > 1:
        _name_sinks(graphs, job, by_input)
    graph = graphs[0]
    for g in graphs[1:]:
        graph = graph.merge_into(g)
    names = [g.job for g in graphs if g.job]
    if not job and len(set(names)) > 1:
        graph.job = min(names)
    return graph


class SeaTunnelReader:
    name = "seatunnel"
    extensions = (".conf", ".hocon")
    description = (
        "Apache SeaTunnel job configs (HOCON .conf or JSON): sources, transforms (Sql, Filter, "
        "FieldRename, FieldMapper, Copy, TableRename, ...), sinks; table and field lineage"
    )

    _BLOCK = re.compile(rb"^\s*(source|sink)\s*[={]", re.MULTILINE)

    def sniff(self, path: str, head: bytes) -> bool:
        if b'"syncJobDefinitionDtoList"' in head:
            return False
        return bool(self._BLOCK.search(head)) or (b'"plugin_name"' in head and b'"sink"' in head)

    def read(
        self,
        paths: Sequence[str],
        *,
        variables: Mapping[str, Any] | Sequence[str] | str | None = None,
        connection_map: Any = None,
        default_schema: str | None = None,
        dialect: str | None = None,
        job: str | None = None,
        **options: Any,
    ) -> LineageGraph:
        """Options: ``variables`` (``${var}`` values, like ``-i key=value``), ``connection_map``
        (connection identity -> metadata namespace; dict or TOML/JSON file), ``default_schema``
        (for tables named without one; default ``default``), ``dialect`` (of Sql transforms)."""
        vars_ = parse_variables(variables)
        cmap = _connection_map(connection_map)
        graphs: list[LineageGraph] = []
        by_input: list[bool] = []  # each graph's job named by its input, not by its file's name
        for p in paths:
            text = read_text(p)
            if not text.strip():
                raise InputError("empty file", file=p)
            if p.lower().endswith(".json") or text.lstrip().startswith("{") and _is_json(text):
                try:
                    data = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"invalid JSON: {exc.msg}", file=p, line=exc.lineno, column=exc.colno
                    ) from None
                if vars_:
                    data = _substitute(data, vars_)
                config = load_json_config(data, file=p)
            else:
                config = load_hocon(text, file=p, variables=vars_)
            env_job = config.env.get("job.name") or (config.env.get("job") or {}).get("name")
            name = job or (str(env_job) if env_job else _stem(p))
            g = build_graph(
                seatunnel_steps(config, file=p),
                job=name,
                file=None if p == "-" else p,
                connection_map=cmap,
                default_schema=default_schema,
                dialect=dialect,
                source="seatunnel",
            )
            # one file whose job is only its name: the sync's job names its processes instead
            g.job_from_name = not job and not env_job and len(paths) == 1
            graphs.append(g)
            by_input.append(bool(env_job))
        return _merge_jobs(graphs, job, by_input)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _substitute(data: Any, variables: Mapping[str, str]) -> Any:
    if isinstance(data, str):
        return re.sub(r"\$\{([A-Za-z_][\w.-]*)\}", lambda m: variables.get(m.group(1), m.group(0)), data)
    if isinstance(data, list):
        return [_substitute(x, variables) for x in data]
    if isinstance(data, dict):
        return {k: _substitute(v, variables) for k, v in data.items()}
    return data


class WhaleTunnelReader:
    name = "whaletunnel"
    extensions = (".whaletunnel.json",)
    description = (
        "WhaleTunnel job exports (syncJobDefinitionDtoList[].jobTasks / jobLines): table and field lineage"
    )

    def sniff(self, path: str, head: bytes) -> bool:
        return b'"syncJobDefinitionDtoList"' in head or (b'"jobTasks"' in head and b'"pluginId"' in head)

    def read(
        self,
        paths: Sequence[str],
        *,
        connection_map: Any = None,
        default_schema: str | None = None,
        dialect: str | None = None,
        job: str | None = None,
        **options: Any,
    ) -> LineageGraph:
        """Options as for ``seatunnel`` (``connection_map``, ``default_schema``, ``dialect``, ``job``)."""
        cmap = _connection_map(connection_map)
        from atlas_sync.inputs import load_json

        graphs: list[LineageGraph] = []
        by_input: list[bool] = []  # each graph's job named by its input, not by its file's name
        for p in paths:
            data = load_json(p)
            base = "$"
            if isinstance(data, Mapping) and "syncJobDefinitionDtoList" not in data:
                for key in ("exportData", "data", "job_config"):
                    if isinstance(data.get(key), Mapping) and "syncJobDefinitionDtoList" in data[key]:
                        data, base = data[key], f"$.{key}"
                        break
            if not isinstance(data, Mapping) or not isinstance(data.get("syncJobDefinitionDtoList"), list):
                raise InputError(
                    "not a WhaleTunnel export: no 'syncJobDefinitionDtoList' list",
                    file=p,
                    path=base,
                    hint='expected {"syncJobDefinitionDtoList": [{"jobTasks": [...], "jobLines": [...]}]}',
                )
            defs = data["syncJobDefinitionDtoList"]
            if not defs:
                raise InputError(
                    "the export holds no job definitions", file=p, path=f"{base}.syncJobDefinitionDtoList"
                )
            for i, d in enumerate(defs):
                where = f"{base}.syncJobDefinitionDtoList[{i}]"
                if not isinstance(d, Mapping):
                    raise InputError("a job definition must be an object", file=p, path=where)
                named = d.get("jobName") or d.get("name")
                name = job or (str(named) if named else _stem(p) if len(defs) == 1 else f"{_stem(p)}[{i}]")
                g = build_graph(
                    whaletunnel_steps(d, file=p, path=where),
                    job=name,
                    file=None if p == "-" else p,
                    connection_map=cmap,
                    default_schema=default_schema,
                    dialect=dialect,
                    source="whaletunnel",
                )
                g.job_from_name = not job and not named and len(paths) == 1 and len(defs) == 1
                graphs.append(g)
                by_input.append(bool(named))
        return _merge_jobs(graphs, job, by_input)


SEATUNNEL_READER = SeaTunnelReader()
WHALETUNNEL_READER = WhaleTunnelReader()
