"""The command reference (docs/cli.md) matches every command's --help, and the help explains itself."""

from __future__ import annotations

import importlib.util
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


@pytest.mark.parametrize("name", ["lineage", "plan", "sync", "show", "teardown", "rebuild"])
def test_commands_people_type_first_show_an_example(name: str) -> None:
    cmd = dict((p, c) for p, c, _ in COMMANDS)[f"atlas-sync {name}"]
    assert "Example" in (cmd.help or ""), name
