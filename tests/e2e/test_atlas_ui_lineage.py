"""What Atlas's own UI draws for what atlas-sync published: a real browser on a real Atlas.

The seed's SQL statement (examples/sql/etl.sql) is synced to the Atlas at ATLAS_URL (the launcher's
Atlas 2.1.0 in CI's real-Atlas step); headless Chromium logs in through Atlas's login form and opens
the Lineage tab of the table ``tab3`` and of its column ``tab3.name``, in the classic UI and in the
newer one (``/n/``). What the lineage graph draws is read from its SVG: each node's label (Atlas writes
the entity's displayText cut to 18 characters) and whether Atlas drew it as a process.

- The table's graph is table-level: the statement, labelled with its job and what it does, between
  the tables; none of the column-lineage processes (a JOIN, FILTER, GROUP_BY of the statement).
- The column's graph shows its sources as ``<table>.<column>``, so ``tab1.name`` and ``tabb2.name``
  are told apart, with the statement's JOIN, FILTER and GROUP_BY dependencies.

Screenshots are kept in build/real-atlas/atlas-ui/ (CI's artifacts, beside the JUnit report). Skipped, saying why,
without Debian's chromium or without ATLAS_URL.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from cdp import CHROMIUM, Page, browser

from atlas_sync.api import Publisher
from atlas_sync.config import load_settings
from atlas_sync.factory import client_from_settings

ROOT = Path(__file__).resolve().parents[2]
ETL_SQL = ROOT / "examples" / "sql" / "etl.sql"
SHOTS = ROOT / "build" / "real-atlas" / "atlas-ui"  # beside the real-Atlas step's JUnit report

pytestmark = [
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
    ),
    pytest.mark.skipif(
        not os.environ.get("ATLAS_URL"), reason="needs a real Atlas serving its UI (ATLAS_URL)"
    ),
]

# What the graph draws: (label, drawn as a process) for every node.
NODES_JS = """Array.from(document.querySelectorAll('svg g.nodes g.node')).map(n => [
  (n.querySelector('g.label text') || {}).textContent || '',
  !!n.querySelector('.nodeImage.process')])"""
# The graph of this entity is drawn (its own node marked current) and its nodes have faded in.
DRAWN_JS = """(guid => {
  const nodes = Array.from(document.querySelectorAll('svg g.nodes g.node'));
  const own = nodes.find(n => n.id === guid);
  return !!own && !!own.querySelector('.nodeImage.currentNode')
    && nodes.every(n => !n.style.opacity || Number(n.style.opacity) === 1);
})(%s)"""


@pytest.fixture(scope="module")
def synced() -> Any:
    """The seed statement synced to a domain of its own; its guids; torn down after."""
    settings = load_settings()
    domain = f"atlasui{uuid.uuid4().hex[:8]}"
    pub = Publisher(client_from_settings(settings), domain=domain)
    pub.sync(pub.read("sql", [str(ETL_SQL)], dialect="spark"), job="etl")
    client = pub.client
    guids = {}
    for type_name, qn in [("lineage_dataset", "tab3"), ("lineage_column", "tab3.name")]:
        ent = client.get_entity_by_unique(type_name, f"{qn}@{domain}", ignore_relationships=True)
        assert ent is not None, qn
        guids[qn] = ent["entity"]["guid"] if "entity" in ent else ent["guid"]
    try:
        yield settings, guids
    finally:
        Publisher(client_from_settings(settings), domain=domain).teardown(purge=True)


def log_in(page: Page, url: str, username: str, password: str) -> None:
    """Through Atlas's own form, as a person does (the password is typed, never put in a script)."""
    page.navigate(f"{url}/login.jsp")
    page.wait_for(
        "!!document.querySelector('#signIn') && document.readyState === 'complete'", what="login form"
    )
    for selector, text in (("#username", username), ("#password", password)):
        page.evaluate(f"document.querySelector('{selector}').focus()")
        page.call("Input.insertText", text=text)
    # A freshly started Atlas can take long over its first sign-in on a loaded machine (CI saw it pass
    # 60 s): the click is made again while the form is still there, up to three times.
    for attempt in range(3):
        page.evaluate("document.querySelector('#signIn') && document.querySelector('#signIn').click()")
        try:
            page.wait_for(
                "!location.pathname.includes('login') && document.readyState === 'complete'",
                what=f"logged in (attempt {attempt + 1})",
                timeout=60,
            )
            return
        except AssertionError as exc:
            if attempt == 2:
                raise AssertionError(f"{exc}; the page is at {page.evaluate('location.href')}") from None


def lineage_nodes(page: Page, url: str, guid: str, shot: Path) -> list[tuple[str, bool]]:
    page.navigate("about:blank")  # a whole page load: nothing left of the graph drawn before
    page.wait_for("location.href === 'about:blank'", what="a blank page")
    page.navigate(f"{url}#!/detailPage/{guid}?tabActive=lineage")
    page.wait_for(DRAWN_JS % json.dumps(guid), what=f"the lineage graph of {guid}", timeout=120)
    page.screenshot(shot)
    return [(str(label), bool(proc)) for label, proc in page.evaluate(NODES_JS)]


@pytest.mark.parametrize("ui", ["index.html", "n/index.html"], ids=["classic", "new"])
def test_atlas_ui_lineage_tabs_show_the_statement_and_recognisable_columns(
    ui: str, synced: Any, tmp_path: Path
) -> None:
    settings, guids = synced
    base = settings.url.rstrip("/")
    with browser(tmp_path / "profile") as page:
        log_in(page, base, settings.username, settings.resolve_password())
        name = "new" if ui.startswith("n/") else "classic"
        table = lineage_nodes(page, f"{base}/{ui}", guids["tab3"], SHOTS / f"{name}-table-tab3.png")
        column = lineage_nodes(
            page, f"{base}/{ui}", guids["tab3.name"], SHOTS / f"{name}-column-tab3.name.png"
        )

    # The table: the statement between the tables, named for its job and what it does; nothing else.
    assert sorted(label for label, proc in table if proc) == ["etl: INSERT tab3"]
    assert sorted(label for label, proc in table if not proc) == ["tab1", "tab3", "tabb2"]

    # The column: its sources with their tables, and the statement's indirect dependencies on tab3.
    columns = {label for label, proc in column if not proc}
    assert columns == {"tab1.id", "tab1.name", "tabb2.age", "tabb2.id", "tabb2.name", "tab3.name"}
    processes = sorted(label for label, proc in column if proc)
    assert processes == ["tab3.*:FILTER", "tab3.*:GROUP_BY", "tab3.*:JOIN", "tab3.name"]
