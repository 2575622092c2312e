"""A URL that is not an Atlas is said to be one, by every command (issue 39 item 9).

A web server answering 404 with an HTML page (or Atlas itself at a wrong context path) read as an
empty Atlas: `show` printed "(no lineage)", `plan` planned everything, `teardown --plan` found
nothing, all with exit 0. Every 404 of Atlas's REST API carries ``{"errorCode": "ATLAS-404-..."}``;
the client judges the answer it has, so the check costs no request.
"""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


class _Html404(http.server.BaseHTTPRequestHandler):
    """Any web server's answer to a path it does not have."""

    requests: list[str]

    def _answer(self) -> None:
        type(self).requests.append(f"{self.command} {self.path}")
        body = b"<html><body><h1>404 Not Found</h1></body></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def html_server() -> Iterator[tuple[str, list[str]]]:
    handler = type("Handler", (_Html404,), {"requests": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.requests
    finally:
        server.shutdown()
        server.server_close()


def _run(args: list[str], url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    env.update(ATLAS_URL=url, ATLAS_PASSWORD="admin")
    return subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


COMMANDS = [
    ["show", "-d", "d"],
    ["show", "-d", "d", "m.t"],
    ["plan", "-d", "d", "--dialect", "ansi", "v1.sql"],
    ["sync", "-d", "d", "--dialect", "ansi", "v1.sql"],
    ["teardown", "-d", "d", "--plan"],
    ["status"],
    ["typedefs", "apply"],
    # long-running: their start probes Atlas (admin/status) and refuses a URL that is no Atlas
    ["openlineage", "serve", "-d", "d", "--port", "0"],
    ["openlineage", "consume", "-d", "d", "-b", "127.0.0.1:9", "-t", "ol", "--startup-timeout", "1"],
]
PROBING = {"status", "serve", "consume"}


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a[:2]).removesuffix(" -d") for a in COMMANDS])
def test_every_command_says_a_web_server_answering_404_is_no_atlas(
    args: list[str], html_server: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, seen = html_server
    (tmp_path / "v1.sql").write_text("INSERT INTO m.t SELECT a FROM m.s;\n", encoding="utf-8")
    proc = _run(args, url, tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert f"error: no Atlas at {url} (" in proc.stderr
    assert "HTTP 404 text/html" in proc.stderr
    assert "hint: check ATLAS_URL" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "(no lineage)" not in proc.stdout and "Plan:" not in proc.stdout
    # the answers the command gets tell: no probe of admin/status or admin/version is added (but
    # those that asked for admin/status before, first), and nothing is written
    probes = [r for r in seen if r.startswith("GET /api/atlas/admin/")]
    assert probes == (["GET /api/atlas/admin/status"] if PROBING & set(args) else []), seen
    # (a search is a POST that writes nothing)
    assert all(r.startswith("GET ") or r.startswith("POST /api/atlas/v2/search/") for r in seen), seen


def test_the_emulator_at_a_wrong_context_path_is_no_atlas(emulator_server: Any, tmp_path: Path) -> None:
    url = emulator_server.url + "/atlas"
    proc = _run(["show", "-d", "d"], url, tmp_path)
    assert proc.returncode != 0
    assert f"error: no Atlas at {url} (GET /api/atlas/" in proc.stderr
    # the right URL still works, and a missing entity there is still "absent"
    proc = _run(["show", "-d", "d"], emulator_server.url, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "(no lineage)" in proc.stdout


@pytest.mark.skipif(not os.environ.get("ATLAS_URL"), reason="needs a real Atlas (ATLAS_URL)")
def test_a_real_atlas_at_a_wrong_context_path_is_no_atlas(tmp_path: Path) -> None:
    url = os.environ["ATLAS_URL"].rstrip("/") + "/atlas"
    env = {**os.environ, "ATLAS_URL": url}
    proc = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", "show", "-d", "truthnone"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert f"error: no Atlas at {url} (" in proc.stderr


@pytest.fixture()
def static_server(tmp_path: Path) -> Iterator[str]:
    """`python -m http.server` in an empty folder: 404 to a GET, 501 (an HTML page) to a POST."""
    root = tmp_path / "www"
    root.mkdir()
    handler = type(
        "Quiet",
        (http.server.SimpleHTTPRequestHandler,),
        {"log_message": lambda *a: None, "__init__": _serving(str(root))},
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _serving(root: str) -> Any:
    def init(self: Any, *args: Any, **kw: Any) -> None:
        http.server.SimpleHTTPRequestHandler.__init__(self, *args, directory=root, **kw)

    return init


@pytest.mark.parametrize("args", [["teardown", "-d", "d", "--plan"], ["teardown", "-d", "d", "--yes"]])
def test_teardown_says_a_static_web_server_answering_501_to_its_search_is_no_atlas(
    args: list[str], static_server: str, tmp_path: Path
) -> None:
    proc = _run(args, static_server, tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert (
        f"error: no Atlas at {static_server} (POST /api/atlas/v2/search/basic answered HTTP 501 text/html"
        in (proc.stderr)
    )
    assert "hint: check ATLAS_URL" in proc.stderr
    assert "Traceback" not in proc.stderr
