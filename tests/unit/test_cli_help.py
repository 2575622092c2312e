"""The command reference (docs/cli.md) matches every command's --help, and the help explains itself."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path
from types import ModuleType

import click
import pytest

ROOT = Path(__file__).resolve().parents[2]


def gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = gen()
COMMANDS = list(GEN.walk(GEN.cli, "atlas-sync"))


def test_docs_cli_md_is_up_to_date() -> None:
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == GEN.generate(), "docs/cli.md is out of date: run python scripts/gen_cli_docs.py"


def test_the_reference_covers_every_command() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    paths = [path for path, _, _ in COMMANDS]
    for expected in ("atlas-sync sync", "atlas-sync show", "atlas-sync lineage", "atlas-sync typedefs apply"):
        assert expected in paths
    for path in paths:
        assert f"## `{path}`" in text


@pytest.mark.parametrize("path,cmd,ctx", COMMANDS, ids=[p for p, _, _ in COMMANDS])
def test_every_command_and_flag_is_explained(path: str, cmd: click.Command, ctx: click.Context) -> None:
    assert (cmd.help or "").strip(), f"{path} has no help text"
    for param in cmd.get_params(ctx):
        if isinstance(param, click.Option) and not param.hidden:
            assert (param.help or "").strip(), f"{path} {param.opts[0]} has no help"
    text = cmd.get_help(ctx)
    assert "%%" not in text  # click does not %-format help: a doubled percent shows as is


@pytest.mark.parametrize("path,cmd,ctx", COMMANDS, ids=[p for p, _, _ in COMMANDS])
def test_help_paragraphs_start_at_the_margin(path: str, cmd: click.Command, ctx: click.Context) -> None:
    """Click dedents the help by its common indent and keeps what is left: a paragraph (but a \\b
    block, kept as written) must then start at the margin, or --help shows it indented."""
    for para in inspect.cleandoc(cmd.help or "").split("\n\n"):
        if not para.startswith("\b"):
            assert not any(line[:1].isspace() for line in para.splitlines()), f"{path}: indented {para!r}"


@pytest.mark.parametrize("name", ["lineage", "plan", "sync", "show", "teardown", "rebuild"])
def test_commands_people_type_first_show_an_example(name: str) -> None:
    cmd = dict((p, c) for p, c, _ in COMMANDS)[f"atlas-sync {name}"]
    assert "Example" in (cmd.help or ""), name


def test_lineage_help_names_every_built_in_reader() -> None:
    from click.testing import CliRunner

    from atlas_sync.cli.main import cli
    from atlas_sync.lineage import registry

    res = CliRunner().invoke(cli, ["lineage", "--help"])
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    listed = text.split("READER is a built-in reader (", 1)[1].split(")", 1)[0].split(", ")
    assert "dbt" in listed
    assert set(listed) == {name for name in registry.available() if name in registry.BUILTIN}


def test_list_readers_keeps_its_columns_aligned_within_the_width() -> None:
    from atlas_sync.cli.lineage import list_readers_text
    from atlas_sync.lineage import registry

    readers = registry.available()
    lines = list_readers_text(width=100).splitlines()
    name_w = max(len(n) for n in readers)
    ext_at, desc_at = name_w + 1, name_w + 1 + 28 + 1
    assert all(len(line) <= 100 for line in lines)
    assert all(line[ext_at - 1] == " " and line[desc_at - 1 : desc_at] in (" ", "") for line in lines)
    rows: dict[str, list[str]] = {}
    for line in lines:
        name = line[:ext_at].strip()
        if name:
            rows[name] = []
        rows[list(rows)[-1]].append(line[ext_at : desc_at - 1].strip())
    assert list(rows) == list(readers)
    ol = readers["openlineage"]
    assert " ".join(c for c in rows["openlineage"] if c) == ", ".join(ol.extensions)
