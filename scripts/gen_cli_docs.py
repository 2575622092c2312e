#!/usr/bin/env python3
"""Generate docs/cli.md, the command reference, from every command's ``--help``.

    python scripts/gen_cli_docs.py           # rewrite docs/cli.md
    python scripts/gen_cli_docs.py --check   # exit 1 when docs/cli.md is out of date

The help is rendered at a fixed width so the page does not depend on the terminal.
tests/unit/test_cli_help.py fails when the page and the code disagree.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

from atlas_sync.cli.lineage import reader_options_text
from atlas_sync.cli.main import cli
from atlas_sync.lineage import registry

WIDTH = 100
DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"

HEADER = """# Command reference

Generated from `atlas-sync ... --help` by `scripts/gen_cli_docs.py`; do not edit by hand (a test
fails when this page and the code disagree). Every command talks to the embedded Atlas emulator
(state in `./.atlas-sync/`) unless `ATLAS_URL` (or `--url`, or `url` in `atlas-sync.toml`) names a
real Atlas; see [configuration.md](configuration.md).

"""

READER_OPTIONS = """<a id="reader-options"></a>

## Reader options

What each built-in reader takes as `-o NAME=VALUE` (or as a keyword of `Publisher.read`), from
`atlas-sync lineage --list-options`. Any other name is an error naming it, with the closest option
the reader takes. `job`, `progress` and `reporter` are atlas-sync's own, given to every reader.

"""


def walk(
    cmd: click.Command, name: str, parent: click.Context | None = None
) -> Iterator[tuple[str, click.Command, click.Context]]:
    """Every command below ``cmd`` (itself first), with a context that gives the full usage line."""
    settings = {**cmd.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(cmd, info_name=name, parent=parent, **settings)
    path = ctx.command_path
    yield path, cmd, ctx
    if isinstance(cmd, click.Group):
        for sub in cmd.list_commands(ctx):
            child = cmd.get_command(ctx, sub)
            if child is not None and not child.hidden:
                yield from walk(child, sub, ctx)


def generate() -> str:
    """The text of docs/cli.md."""
    entries = list(walk(cli, "atlas-sync"))
    out = [HEADER]
    out.append("| command | what it does |\n|---|---|\n")
    for path, cmd, _ in entries[1:]:
        anchor = path.replace(" ", "-")
        out.append(f"| [`{path}`](#{anchor}) | {cmd.get_short_help_str(limit=90)} |\n")
    out.append("\n")
    for path, cmd, ctx in entries:
        anchor = path.replace(" ", "-")
        out.append(f'<a id="{anchor}"></a>\n\n## `{path}`\n\n```text\n{cmd.get_help(ctx).rstrip()}\n```\n\n')
    out.append(READER_OPTIONS)
    builtins = "\n\n".join(reader_options_text(name) for name in registry.BUILTIN)  # (no plugin)
    out.append(f"```text\n{builtins}\n```\n")
    return "".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = generate()
    if "--check" in argv:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC} is out of date: run python scripts/gen_cli_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
