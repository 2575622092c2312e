"""Secrets read from files (Atlas's password, the database reader's): the first line of a file, a
warning when others can read it, errors that name the file and never what it holds."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

from atlas_sync.errors import ConfigError

log = logging.getLogger("atlas_sync.config")


def read_secret_file(path: str | Path, *, hint: str | None = None) -> str:
    """The first line of a password file (trailing newline stripped); warns if others can read it.
    Errors name the file, never what it holds."""
    p = Path(path).expanduser()
    try:
        mode = p.stat().st_mode
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"password file {p} does not exist", hint=hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read password file {p}: {getattr(exc, 'strerror', None) or exc}") from None
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        log.warning("password file %s is readable by other users; chmod 600 it", p)
    lines = text.splitlines()
    password = lines[0] if lines else ""
    if not password:
        raise ConfigError(f"password file {p} is empty")
    return password
