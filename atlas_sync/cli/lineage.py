"""``atlas-sync lineage READER FILE...``: read lineage and print it, without touching Atlas."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from atlas_sync.cli.common import echo_json
from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import LineageGraph

FORMATS = ("json", "text", "dot", "svg", "html")


def _kv(values: tuple[str, ...], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        key, sep, val = v.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {v!r}", param_hint=flag)
        out[key.strip()] = val
    return out


def reader_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Flags passed to readers as keyword options (each reader uses the ones it knows)."""
    opts = [
        click.option(
            "--dialect",
            metavar="NAME",
            help="SQL dialect (sqlglot names: spark, hive, mysql, postgres, "
            "snowflake, bigquery, tsql, trino, ...; also doris, greenplum, azuresql, ...)",
        ),
        click.option(
            "--schema",
            "schema",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help='SQL: table schemas {"db.table": [columns]} for star expansion',
        ),
        click.option(
            "--default-schema", metavar="NAME", help="SQL: database/schema for unqualified table names"
        ),
        click.option(
            "--mode",
            type=click.Choice(["job", "operator"]),
            help="Spark plans: one process per job (lineage profile) or per operator (pico profile) "
            "[default: the profile's]",
        ),
        click.option(
            "--source-path", "path", metavar="PATH", help="Spark plans: path of file relations without one"
        ),
        click.option(
            "--explain",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help="Spark plans: explain(extended=True) output holding file locations",
        ),
        click.option(
            "--namespace-map",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help="OpenLineage: TOML/JSON map of dataset namespaces to metadata namespaces",
        ),
        click.option(
            "--var",
            "variables",
            multiple=True,
            metavar="KEY=VALUE",
            help="SeaTunnel: variable for ${KEY} substitution (repeatable; like seatunnel -i)",
        ),
        click.option(
            "-o",
            "--option",
            "extra",
            multiple=True,
            metavar="KEY=VALUE",
            help="any other reader option (repeatable)",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def collect_reader_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pop the reader flags from a command's kwargs into the reader's keyword options."""
    out: dict[str, Any] = {}
    for name in ("dialect", "schema", "default_schema", "mode", "path", "explain", "namespace_map"):
        v = kwargs.pop(name, None)
        if v is not None:
            out[name] = v
    variables = kwargs.pop("variables", ()) or ()
    if variables:
        out["variables"] = _kv(tuple(variables), "--var")
    extra = kwargs.pop("extra", ()) or ()
    out.update(_kv(tuple(extra), "--option"))
    return out


def list_readers_text() -> str:
    rows = []
    for name, reader in registry.available().items():
        exts = ", ".join(reader.extensions) or "-"
        rows.append(f"{name:<14} {exts:<28} {reader.description}")
    return "\n".join(rows)


def render_graph(graph: LineageGraph, fmt: str, *, columns: bool = False) -> str:
    if fmt == "json":
        return json.dumps(graph.to_document(), indent=2, ensure_ascii=False)
    if fmt == "text":
        from atlas_sync.view.text import graph_text

        return graph_text(graph)
    try:
        pictures = importlib.import_module("atlas_sync.view.pictures")
    except ImportError:
        raise InputError(f"--format {fmt} is not available in this build") from None
    return str(pictures.render(graph, fmt, columns=columns))


@click.command("lineage", context_settings={"show_default": True})
@click.argument("reader", required=False)
@click.argument("files", nargs=-1)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="json",
    help="json: the lineage document; text: operator tree or process blocks; dot: Graphviz source; "
    "svg/html: a picture drawn without Graphviz (html: hover highlight, zoom)",
)
@click.option("--out", type=click.Path(dir_okay=False, writable=True), help="write to FILE instead of stdout")
@click.option("--job", metavar="JOB", help="job name recorded in the graph [default: derived from the input]")
@click.option("--list-readers", is_flag=True, help="list the readers (built-in and plugins) and exit")
@click.option(
    "--columns", is_flag=True, help="dot/svg/html: draw the columns and the column lineage between them"
)
@reader_options
def lineage_cmd(
    reader: str | None,
    files: tuple[str, ...],
    fmt: str,
    out: str | None,
    job: str | None,
    list_readers: bool,
    columns: bool,
    **kwargs: Any,
) -> None:
    """Read lineage with READER from FILE... (or - for stdin) and print it. Nothing is sent to Atlas.

    READER is one of the names `--list-readers` prints (graph, spark-plan, spark-json, sql, query-log,
    hive-lineage, openlineage, seatunnel, whaletunnel, plugins) or `auto` to pick by file content and
    extension. Exit code 1 on bad input, with the file and place named.

    \b
    Examples:
      atlas-sync lineage sql --dialect spark etl.sql --format text
      atlas-sync lineage spark-plan plan.txt --mode operator --format text
      atlas-sync lineage openlineage events.jsonl
      atlas-sync lineage auto etl.sql --format html --columns --out etl.html
    """
    if list_readers:
        click.echo(list_readers_text())
        return
    if not reader or not files:
        raise click.UsageError("give a READER and at least one FILE (or --list-readers)")
    options = collect_reader_options(kwargs)
    if job:
        options["job"] = job
    if reader == "auto":
        picked = registry.detect(files[0])
        click.echo(f"reader: {picked.name} (picked by --from auto)", err=True)
        reader = picked.name
    graph = registry.read(reader, list(files), **options)
    if job:
        graph.job = job
    text = render_graph(graph, fmt, columns=columns)
    if out:
        Path(out).write_text(text + ("\n" if not text.endswith("\n") else ""), encoding="utf-8")
    else:
        click.echo(text)
    for p in graph.problems:
        if p.severity == "error":
            click.echo(f"error: {p}", err=True)
    if graph.has_errors:
        raise SystemExit(1)


def print_json(data: Any) -> None:
    echo_json(data)


COMMANDS = [lineage_cmd]
