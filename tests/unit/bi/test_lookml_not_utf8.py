"""A .lkml file that is not UTF-8 is named with the byte where it stops being text, as every reader says it."""

from __future__ import annotations

from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry


def test_a_lkml_file_that_is_not_utf8_names_the_file_and_byte(tmp_path: Path) -> None:
    f = tmp_path / "orders.view.lkml"
    f.write_bytes(b"view: orders {\xd5\x00}")
    with pytest.raises(InputError) as err:
        registry.read("lookml", [str(f)])
    assert str(err.value) == f"{f}: not UTF-8 text (byte 14)"
