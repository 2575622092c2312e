"""Drive headless Chromium through its DevTools protocol (a WebSocket), with no driver program.

Debian's ``chromium`` is enough: no chromedriver, no browser download. The project already installs a
WebSocket client (``websockets``, with uvicorn[standard]). Every wait polls a condition in the page
until it holds or a deadline passes; nothing sleeps a fixed time hoping the page is ready.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM = "/usr/bin/chromium"


def chromium_flags(profile: Path, width: int, height: int) -> list[str]:
    """The machine notes' flags for a headless run that reaches nothing but the pages it is given."""
    return [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
    ]


class Page:
    """One browser tab: navigate, evaluate JavaScript, wait for a condition, take a screenshot."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(self._ids)
        self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self._ws.recv(timeout=60))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result") or {})

    def evaluate(self, expression: str) -> Any:
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression[:80]}: {res['exceptionDetails'].get('text')}")
        return res.get("result", {}).get("value")

    def navigate(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def wait_for(self, expression: str, *, timeout: float = 60.0, what: str = "") -> Any:
        """Poll ``expression`` until it is truthy; its value. Fails naming ``what`` at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except RuntimeError:
                value = None  # (the page is between two documents)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or expression}")
            with contextlib.suppress(RuntimeError):  # (it navigated meanwhile)
                self.evaluate("new Promise(r => setTimeout(r, 200))")  # the page runs between polls

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))


@contextmanager
def browser(profile: Path, *, width: int = 1400, height: int = 1100) -> Iterator[Page]:
    """A headless Chromium with a fresh profile folder and one blank tab; stopped (by its pid) after."""
    proc = subprocess.Popen(
        [*chromium_flags(profile, width, height), "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"chromium did not open its DevTools port (exit code {proc.poll()})")
            time.sleep(0.1)  # (Chromium writes the file when its port listens: poll for it)
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as resp:
            targets = json.load(resp)
        url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        with connect(url, max_size=None, open_timeout=30) as ws:
            page = Page(ws)
            page.call("Page.enable")
            page.call("Runtime.enable")
            yield page
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)
