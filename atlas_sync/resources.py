"""Where the built-in profiles' files live (top-level ``typedefs/`` and ``templates/``)."""

from __future__ import annotations

from pathlib import Path

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
    return sorted(p.name for p in builtin_dir("typedefs").iterdir() if p.is_dir())
