"""Reading input files (``-`` = stdin) with errors that name the file, line and column.

Used by every layer that reads user files: readers, typedef bundles, schema options.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from atlas_sync.errors import InputError


def file_job(paths: Sequence[str], empty: str = "") -> str:
    """The job of an input named by its files: a file's name up to its first dot (``stdin`` for ``-``;
    ``empty`` when that is empty), of the first file in name order when there are several, so giving
    the files in another order names the same job."""
    stems = ["stdin" if p == "-" else Path(p).name.split(".")[0] or empty for p in paths]
    return min(stems) if stems else empty


def read_text(path: str) -> str:
    """Read a UTF-8 text input (``-`` = stdin) with errors that name the file."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", file=path) from None
    except OSError as exc:
        raise _unreadable(path, exc) from None


def open_binary(path: str) -> IO[bytes]:
    """Open an input file (not stdin) for reading bytes, with the errors :func:`read_text` gives."""
    try:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise _unreadable(path, exc) from None


def _unreadable(path: str, exc: OSError) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError("no such file", file=path)
    if isinstance(exc, IsADirectoryError):
        return InputError("is a directory, not a file", file=path)
    return InputError(f"cannot read: {exc.strerror}", file=path)


def load_json(path: str) -> Any:
    text = read_text(path)
    if not text.strip():
        raise InputError("empty file", file=path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", file=path) from None


__all__ = ["load_json", "open_binary", "read_text"]
