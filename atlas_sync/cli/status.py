"""``atlas-sync status``: which Atlas the settings point at, and whether it answers."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import click

from atlas_sync.cli.common import client_from_options, connection_options, echo_json
from atlas_sync.errors import AtlasSyncError

if TYPE_CHECKING:
    from atlas_sync.atlas.client import AtlasClient


def gather_status(client: AtlasClient) -> dict[str, Any]:
    """Target, service state, version and typedef counts per category of the client's Atlas."""
    state = client.status()  # needs no credentials: tells "down" apart from "wrong password"
    version = client.version()
    headers = client.get_typedef_headers()
    by_category = Counter(str(h.get("category", "?")) for h in headers)
    return {
        "target": client.target,
        "url": None if client.emulator is not None else client.base_url,
        "embedded": client.emulator is not None,
        "status": state,
        "version": version.get("Version"),
        "name": version.get("Name"),
        "typedefs": {"total": len(headers), **dict(sorted(by_category.items()))},
    }


@click.command("status")
@click.option("--json", "as_json", is_flag=True, help="print the status as JSON")
@connection_options
def status(as_json: bool) -> int:
    """Check the configured Atlas: target, service status, version and typedef counts.

    With no URL configured this checks the embedded emulator (state in the data folder,
    .atlas-sync by default); no server is needed. Exit code 0 when Atlas is ACTIVE, 1 when it
    is not, cannot be reached or refuses the credentials.
    """
    client = client_from_options()
    info = gather_status(client)
    if as_json:
        echo_json(info)
    else:
        counts = info["typedefs"]
        detail = ", ".join(f"{k} {v}" for k, v in counts.items() if k != "total")
        click.echo(f"target:   {info['target']}")
        click.echo(f"status:   {info['status']}")
        click.echo(f"version:  {info['version'] or '?'}" + (f" ({info['name']})" if info["name"] else ""))
        click.echo(f"typedefs: {counts['total']}" + (f" ({detail})" if detail else ""))
    if info["status"] != "ACTIVE":
        raise AtlasSyncError(
            f"Atlas is {info['status']}, not ACTIVE",
            hint="a PASSIVE server is a standby of an HA pair: point --url at the active one",
        )
    return 0


COMMANDS = [status]
