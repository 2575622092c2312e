"""``atlas-sync config show``: the effective settings and where each came from."""

from __future__ import annotations

import click

from atlas_sync.cli.common import connection_options, echo_json, settings_from_options


@click.group("config")
def config() -> None:
    """Inspect settings (flags > environment > atlas-sync.toml > defaults)."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="print as JSON")
@connection_options
def show(as_json: bool) -> None:
    """Print the effective settings, secrets masked, and the source of each value."""
    settings = settings_from_options()
    rows = settings.describe()
    if as_json:
        echo_json({row["key"]: {"value": row["value"], "source": row["source"]} for row in rows})
        return
    width = max(len(row["key"]) for row in rows)
    for row in rows:
        value = "(embedded emulator)" if row["key"] == "url" and row["value"] is None else row["value"]
        value = "-" if value is None else value
        click.echo(f"{row['key']:<{width}}  {value!s:<40}  {row['source']}")


COMMANDS = [config]
