"""Fixtures of the Spark reader tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def tmp_plan(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write a plan text to a file and return its path."""

    def write(text: str, name: str = "plan.txt") -> str:
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        return str(p)

    return write
