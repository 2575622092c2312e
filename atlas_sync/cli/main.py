"""``atlas-sync`` root command. Each command group lives in its own module of this package and is
registered here; the commands only parse flags, call the Python API and print."""

from __future__ import annotations

import importlib
import sys

import click

from atlas_sync import __version__
from atlas_sync.cli.common import one_shot_process, process_ends, run_guarded

# Modules of atlas_sync.cli that define ``COMMANDS`` (a list of click commands or groups).
COMMAND_MODULES = (
    "status",
    "emulator",
    "typedefs",
    "glossary",
    "lineage",
    "sync",
    "openlineage",
    "config_cmd",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="atlas-sync")
def cli() -> None:
    """Publish lineage to Apache Atlas: typedef bootstrap, lineage readers, plan/sync/teardown.

    With no ATLAS_URL configured every command talks to the embedded Atlas emulator
    (state in ./.atlas-sync/), so you can try everything without a server.
    """


for _name in COMMAND_MODULES:
    try:
        _mod = importlib.import_module(f"atlas_sync.cli.{_name}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"atlas_sync.cli.{_name}":
            raise
        continue
    for _cmd in getattr(_mod, "COMMANDS", []):
        cli.add_command(_cmd)


def main(argv: list[str] | None = None) -> None:
    one_shot_process()  # (the servers turn the collector back on: long_running_process)
    code = run_guarded(cli, argv)
    process_ends()
    sys.exit(code)


if __name__ == "__main__":
    main()
