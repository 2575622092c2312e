"""Shared CLI plumbing: error reporting and common options."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from atlas_sync.errors import AtlasSyncError, InputError

if TYPE_CHECKING:
    from atlas_sync.atlas import AtlasClient
    from atlas_sync.config import Settings


def run_guarded(cli: click.Group, argv: list[str] | None) -> int:
    """Run the click app; user errors become one line on stderr (plus a hint) and a non-zero exit."""
    try:
        result = cli.main(args=argv, prog_name="atlas-sync", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except AtlasSyncError as exc:
        click.echo(f"error: {exc}", err=True)
        if exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    return result if isinstance(result, int) else 0


def write_out(out: str, text: str) -> None:
    """Write a command's ``--out`` file; a path that cannot be written is an error naming it."""
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", file=out) from None


def one_shot_process() -> None:
    """A command is one short process: turn CPython's cyclic garbage collector off for it.

    A sync allocates millions of objects that live until it ends (the input's graph, rendered
    entities, plan items) and makes almost no cyclic garbage (2,357 objects in an initial sync of
    12,500 entities), yet the collector walked what it had allocated ~1,150 times: 11% of the
    process's CPU. Memory is freed by reference counting as before; only cycles wait for the end.
    """
    gc.disable()


def process_ends() -> None:
    """The command is done and the process exits: leave what it allocated to the OS. (The
    interpreter's last collection would walk all of it first: 0.27 s after an initial sync of
    12,500 entities.) Files, atexit handlers and finalizers of what is still referenced run as usual."""
    gc.freeze()


def long_running_process() -> None:
    """A server (``openlineage serve`` / ``consume``, ``emulator serve``) lives long: its cycles are
    collected, with the collector's usual thresholds."""
    gc.enable()


def echo_json(data: Any) -> None:
    import json

    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def fail(message: str, hint: str | None = None, code: int = 1) -> None:
    """Raise a user error from a command."""
    err = AtlasSyncError(message, hint=hint)
    err.exit_code = code
    raise err


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (servers bind there unless told otherwise)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def stderr(message: str) -> None:
    click.echo(message, err=True)
    sys.stderr.flush()


# --------------------------------------------------------------------------- connection options
#
# Every command that talks to Atlas takes the same flags. They are stored in the click context
# (``ctx.meta``, shared by a group and its subcommands) instead of being passed to the command
# function, so a command only adds ``@connection_options`` and calls ``client_from_options()``.

_META_KEY = "atlas_sync.connection"

# Setting name -> the flag that sets it (shown by `config show` as the value's source).
FLAG_NAMES = {
    "url": "--url",
    "username": "--user",
    "password_file": "--password-file",
    "ca_bundle": "--ca-bundle",
    "insecure": "--insecure",
    "read_timeout": "--timeout",
}


def _store(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    # Keep what an outer group set when the subcommand's flag is absent.
    if value is None or value is False or value == 0 or value == ():
        return value
    ctx.meta.setdefault(_META_KEY, {})[param.name] = value
    return value


def _opt(*decls: str, **kwargs: Any) -> Any:
    return click.option(*decls, expose_value=False, callback=_store, **kwargs)


def connection_options(func: Any) -> Any:
    """Add ``--url --user --password-file --ca-bundle --insecure --config --timeout -v -q`` to a command.

    The values are read back with :func:`settings_from_options` / :func:`client_from_options`;
    they are not passed to the command function. There is deliberately no password flag.
    """
    options = [
        _opt(
            "--url",
            metavar="URL",
            help="Atlas base URL, e.g. https://atlas:21000 [env ATLAS_URL; unset: the embedded emulator]",
        ),
        _opt("--user", metavar="NAME", help="Atlas user [env ATLAS_USERNAME; default admin]"),
        _opt(
            "--password-file",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help="file holding the Atlas password [env ATLAS_PASSWORD_FILE; or env ATLAS_PASSWORD; "
            "else a prompt on a terminal]",
        ),
        _opt(
            "--ca-bundle",
            metavar="PEM",
            type=click.Path(dir_okay=False),
            help="CA certificates to verify Atlas's TLS certificate [env ATLAS_CA_BUNDLE]",
        ),
        _opt(
            "--insecure",
            is_flag=True,
            default=False,
            help="do not verify TLS certificates (test servers only)",
        ),
        _opt(
            "--config",
            "config_file",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            help="settings file [default ./atlas-sync.toml; env ATLAS_SYNC_CONFIG]",
        ),
        _opt(
            "--timeout",
            type=click.FloatRange(min=0, min_open=True),
            metavar="SECONDS",
            help="read timeout per request [default 60; env ATLAS_READ_TIMEOUT]",
        ),
        _opt(
            "-v",
            "--verbose",
            count=True,
            help="log requests and retries, print request counters (-vv: debug)",
        ),
        _opt("-q", "--quiet", is_flag=True, default=False, help="print only results and errors"),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def connection_state(ctx: click.Context | None = None) -> dict[str, Any]:
    """The connection flags given on the command line (only those that were set)."""
    ctx = ctx or click.get_current_context(silent=True)
    return dict(ctx.meta.get(_META_KEY, {})) if ctx is not None else {}


def verbosity(ctx: click.Context | None = None) -> int:
    """-1 with --quiet, else the number of -v flags."""
    state = connection_state(ctx)
    return -1 if state.get("quiet") else int(state.get("verbose", 0))


def setup_logging(level: int) -> None:
    """Log atlas_sync messages to stderr: warnings by default, INFO with -v, DEBUG with -vv."""
    import logging

    logger = logging.getLogger("atlas_sync")
    logger.setLevel({-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(level, logging.DEBUG))
    # Leave logging alone when the host program (or pytest) has configured it.
    if not logging.getLogger().handlers and not any(
        getattr(h, "_atlas_sync", False) for h in logger.handlers
    ):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        handler._atlas_sync = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


def settings_from_options(ctx: click.Context | None = None, **overrides: Any) -> Settings:
    """Settings from the connection flags (+ ``overrides`` such as ``domain=``), env, file, defaults."""
    from atlas_sync.config import load_settings

    state = connection_state(ctx)
    flags = {
        "url": state.get("url"),
        "username": state.get("user"),
        "password_file": state.get("password_file"),
        "ca_bundle": state.get("ca_bundle"),
        "insecure": True if state.get("insecure") else None,
        "read_timeout": state.get("timeout"),
    }
    flag_names = dict(FLAG_NAMES)
    for key, value in overrides.items():
        if value is not None:
            flags[key] = value
            flag_names.setdefault(key, "--" + key.replace("_", "-"))
    return load_settings(state.get("config_file"), flags, flag_names=flag_names)


def _prompt_password(text: str) -> str:
    return str(click.prompt(text, hide_input=True, err=True))


def client_from_options(
    ctx: click.Context | None = None, *, settings: Settings | None = None, **overrides: Any
) -> AtlasClient:
    """The AtlasClient for this command's flags; sets up logging, and with ``-v`` prints the
    request counters when the command ends. Asks for a missing password only on a terminal."""
    from atlas_sync.factory import client_from_settings

    ctx = ctx or click.get_current_context(silent=True)
    level = verbosity(ctx)
    setup_logging(level)
    settings = settings or settings_from_options(ctx, **overrides)
    prompt = _prompt_password if sys.stdin.isatty() and level >= 0 else None
    client = client_from_settings(settings, prompt=prompt)
    if level >= 1:
        stderr(f"target: {client.target}")
        if ctx is not None:
            ctx.call_on_close(lambda: stderr("requests:\n" + client.stats.format()))
    return client
