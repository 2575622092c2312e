"""Where the built-in profiles' files live (top-level ``typedefs/`` and ``templates/``)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

_PKG = Path(__file__).resolve().parent


def builtin_dir(kind: str) -> Path:
    """``typedefs`` or ``templates``: the copy shipped inside the package (wheel installs), else the
    top-level folder of a source checkout (editable installs)."""
    for candidate in (_PKG / "_data" / kind, _PKG.parent / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"built-in {kind} folder not found (looked in {_PKG / '_data'} and {_PKG.parent})"
    )


def builtin_profiles() -> list[str]:
    return sorted(p.name for p in builtin_dir("templates").iterdir() if (p / "profile.toml").is_file())


@functools.lru_cache(maxsize=1)
def atlas_models() -> dict[str, Any]:
    """Atlas 2.4.0's complete model set (the types every installed Atlas has) as one typedefs document:
    the data file the emulator starts with, read here as data."""
    text = (_PKG / "emulator" / "data" / "builtin_types.json").read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc
