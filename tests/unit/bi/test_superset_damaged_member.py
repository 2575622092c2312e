"""A Superset export whose member's local header is damaged is named in one short, readable line."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry

EXPORT = Path(__file__).resolve().parents[3] / "examples" / "superset" / "export.zip"


def test_a_member_with_a_damaged_header_is_named_without_its_raw_bytes(tmp_path: Path) -> None:
    data = bytearray(EXPORT.read_bytes())
    data[200:260] = b"\x00" * 60  # inside the second member's local header (its file name)
    damaged = tmp_path / "export.zip"
    damaged.write_bytes(bytes(data))
    with pytest.raises(InputError) as err:
        registry.read("superset", [str(damaged)])
    text = str(err.value)
    assert text.startswith(f"{damaged}: damaged ZIP: dashboard_export_")
    assert "\\x00" not in text and len(text) < 250, text
