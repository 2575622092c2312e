"""``atlas-sync glossary`` against a real Apache Atlas (run by .ci/real-atlas.sh; skipped without ATLAS_URL).

The issue's figures: apply of a 3-glossary, 40-term file twice writes nothing the second time (requests
counted), plan shows a renamed term as an update, teardown removes only this file's glossaries. The file is
tests/data/glossary/bootstrap.toml with run-unique glossary names and owner (a real server is shared).
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest

from atlas_sync.atlas import AtlasClient
from atlas_sync.cli.common import run_guarded
from atlas_sync.cli.main import cli
from atlas_sync.config import load_settings
from atlas_sync.factory import client_from_settings
from atlas_sync.glossary import apply_glossary, load_glossary_file, plan_glossary, teardown_glossary

pytestmark = pytest.mark.skipif(not os.environ.get("ATLAS_URL"), reason="needs a real Atlas (ATLAS_URL)")

BOOTSTRAP = Path(__file__).resolve().parents[1] / "data" / "glossary" / "bootstrap.toml"


def client() -> AtlasClient:
    return client_from_settings(load_settings())


def unique_copy(tmp_path: Path, run: str, *replacements: tuple[str, str]) -> Path:
    text = BOOTSTRAP.read_text(encoding="utf-8").replace('owner = "bootstrap-test"', f'owner = "e2e-{run}"')
    for g in ("Customer", "Finance", "Product"):
        text = text.replace(f'[[glossary]]\nname = "{g}"', f'[[glossary]]\nname = "{g}_{run}"')
        text = text.replace(f'@{g}"', f'@{g}_{run}"')
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    out = tmp_path / f"glossary-{run}-{len(replacements)}.toml"
    out.write_text(text, encoding="utf-8")
    return out


def cli_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = run_guarded(cli, argv)
    out = capsys.readouterr()
    return code, out.out + out.err


def test_glossary_apply_twice_rename_and_teardown_on_a_real_atlas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = uuid.uuid4().hex[:8]
    path = unique_copy(tmp_path, run)
    hand = client()._call("test", "POST", "/v2/glossary", body={"name": f"Handmade_{run}"})
    try:
        code, out = cli_run(["glossary", "apply", str(path)], capsys)
        assert code == 0, out
        assert out.strip().splitlines()[-1] == "50 created, 0 updated, 0 unchanged"

        c = client()
        result = apply_glossary(c, plan_glossary(c, load_glossary_file(path)))
        assert result.summary() == "0 created, 0 updated, 50 unchanged"
        assert c.stats["glossary_write"].requests == 0
        assert c.stats["glossary_read"].requests == 7

        renamed = unique_copy(
            tmp_path,
            run,
            ('id = "customer"\nname = "Customer"', 'id = "customer"\nname = "Buyer"'),
            ('see_also = ["Customer"]', 'see_also = ["Buyer"]'),
            (f'"Customer@Customer_{run}"', f'"Buyer@Customer_{run}"'),
        )
        code, out = cli_run(["glossary", "plan", str(renamed)], capsys)
        assert code == 0, out
        assert [ln.strip() for ln in out.splitlines() if re.match(r"\s+[+~!-] ", ln)] == [
            f"~ term Customer_{run}/Buyer: renamed 'Customer' -> 'Buyer'"
        ]
        c = client()
        applied = apply_glossary(c, plan_glossary(c, load_glossary_file(renamed)))
        assert (applied.summary(), c.stats["glossary_write"].requests) == (
            "0 created, 1 updated, 49 unchanged",
            1,
        )
        assert not plan_glossary(client(), load_glossary_file(renamed)).has_changes

        code, out = cli_run(["glossary", "teardown", "--yes", str(renamed)], capsys)
        assert code == 0, out
        names = {g["name"] for g in client()._call("test", "GET", "/v2/glossary", params=[("limit", "-1")])}
        assert f"Handmade_{run}" in names
        assert not names & {f"{g}_{run}" for g in ("Customer", "Finance", "Product")}
    finally:
        teardown_glossary(client(), load_glossary_file(path), force=True)
        client()._call("test", "DELETE", f"/v2/glossary/{hand['guid']}")
