"""The command line the throwaway-server launchers share: ``install|start|status|stop|env`` over a
``Server`` that runs in an instance folder (``--home``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import click

from tests.support.real_atlas import RealAtlasError


class Server(Protocol):
    def start(self, *, timeout: float = ...) -> dict[str, Any]: ...
    def status(self) -> dict[str, Any]: ...
    def stop(self) -> bool: ...
    def running(self) -> bool: ...


def server_cli(
    *,
    module: str,
    what: str,
    help: str,
    server: Callable[[Path], Server],
    default_home: Callable[[], Path],
    install: Callable[[Callable[[str], None]], object],
    install_help: str,
    exports: Callable[[Any], Mapping[str, object]],
    error: type[RealAtlasError],
    default_timeout: float,
) -> click.Group:
    """A click group for one kind of server. ``install`` gets a logger and returns what to print;
    ``exports`` the shell variables that point the tests at a running ``server``."""

    def _server(home: str | None) -> Server:
        return server(Path(home).resolve() if home else default_home())

    home_option = click.option("--home", type=click.Path(file_okay=False), help="Instance folder.")

    @click.group(help=help)
    def cli() -> None:
        pass

    @cli.command(name="install", help=install_help)
    def install_cmd() -> None:
        click.echo(str(install(lambda m: click.echo(m, err=True))))

    @cli.command(help="Start a fresh instance in the background; prints its URL (no password in it).")
    @home_option
    @click.option("--timeout", default=default_timeout, show_default=True, help="Seconds to wait.")
    def start(home: str | None, timeout: float) -> None:
        click.echo(_server(home).start(timeout=timeout).get("url", ""))

    @cli.command(help="Print the state; exit 0 only when the server answers.")
    @home_option
    def status(home: str | None) -> None:
        info = _server(home).status()
        click.echo(" ".join(f"{k}={v}" for k, v in info.items()))
        if info["state"] != "running":
            raise SystemExit(1)

    @cli.command(help="Stop the server.")
    @home_option
    def stop(home: str | None) -> None:
        click.echo("stopped" if _server(home).stop() else "not running")

    @cli.command(help=f"Print the shell exports that point the tests at the running {what}.")
    @home_option
    def env(home: str | None) -> None:
        running = _server(home)
        if not running.running():
            raise error(
                f"{what} is not running", hint=f"run (from the repository's root): python -m {module} start"
            )
        for name, value in exports(running).items():
            click.echo(f"export {name}={value}")

    return cli
