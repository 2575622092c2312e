"""Shared CLI plumbing: error reporting and common options."""

from __future__ import annotations

import sys
from typing import Any

import click

from atlas_sync.errors import AtlasSyncError


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


def echo_json(data: Any) -> None:
    import json

    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def fail(message: str, hint: str | None = None, code: int = 1) -> None:
    """Raise a user error from a command."""
    err = AtlasSyncError(message, hint=hint)
    err.exit_code = code
    raise err


def stderr(message: str) -> None:
    click.echo(message, err=True)
    sys.stderr.flush()
