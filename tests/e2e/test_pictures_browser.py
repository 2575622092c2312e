"""The HTML picture of the seed example in a real browser: headless Chromium takes a screenshot.

Uses /usr/bin/chromium when present (Debian's package; .ci/run installs it) and skips otherwise. The
screenshot is decoded with a tiny PNG reader (zlib) and must show the drawing: ink in the picture
area, from the first box on the left to the last one on the right (the page fits the tree to the
window), and the header above it.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from cdp import CHROMIUM, chromium_flags

from atlas_sync.lineage import registry
from atlas_sync.lineage.model import LineageGraph, Process
from atlas_sync.view import pictures

SEED = Path(__file__).resolve().parents[1] / "data" / "spark" / "spark-plan-to-atlas.logical.txt"
WIDTH, HEIGHT = 1280, 600

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB bytes) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = colour = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        prev = line
        rows.append(bytes(px for j in range(width) for px in line[j * bpp : j * bpp + 3]))
    return width, height, rows


def ink(rows: list[bytes], x0: int, x1: int, y0: int, y1: int) -> int:
    """Pixels that are not (nearly) white in the box [x0, x1) x [y0, y1)."""
    count = 0
    for row in rows[y0:y1]:
        for x in range(x0, x1):
            r, g, b = row[3 * x], row[3 * x + 1], row[3 * x + 2]
            if min(r, g, b) < 235:
                count += 1
    return count


def screenshot(page: Path, png: Path, profile: Path) -> None:
    cmd = [*chromium_flags(profile, WIDTH, HEIGHT), f"--screenshot={png}", page.as_uri()]
    subprocess.run(cmd, capture_output=True, timeout=120, check=False)
    assert png.exists() and png.stat().st_size > 0, "chromium wrote no screenshot"


@pytest.mark.parametrize("mode", ["operator", "job"])
def test_seed_picture_shows_the_whole_tree_in_chromium(mode: str, tmp_path: Path) -> None:
    g = registry.read("spark-plan", [str(SEED)], mode=mode)
    page = tmp_path / "seed.html"
    page.write_text(pictures.render(g, "html", columns=mode == "job"), encoding="utf-8")
    png = tmp_path / "seed.png"
    screenshot(page, png, tmp_path / "profile")
    width, height, rows = decode_png(png.read_bytes())
    assert (width, height) == (WIDTH, HEIGHT)
    header = ink(rows, 0, width, 0, 40)
    drawing = ink(rows, 0, width, 50, height)
    assert header > 200, "the header (title, legend) is missing"
    assert drawing > 2000, "the picture area is blank"
    # The leftmost box (the input) starts near the left edge; in operator mode the tree is wider
    # than the window even at the smallest legible scale: the view scrolls to the rest.
    assert ink(rows, 0, width // 8, 50, height) > 200
    shutil.rmtree(tmp_path / "profile", ignore_errors=True)


def scaled_width(page: Path, profile: Path) -> float:
    """The svg's width after the page script ran in Chromium (it zooms by setting it)."""
    res = subprocess.run(
        [*chromium_flags(profile, WIDTH, HEIGHT), "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return float(res.stdout.split('class="lineage" width="')[1].split('"')[0])


def drawn_width(html: str) -> float:
    return float(
        html.split('<svg xmlns="http://www.w3.org/2000/svg" class="lineage" width="')[1].split('"')[0]
    )


def test_page_script_runs_and_shrinks_a_wide_tree_only_to_legible_text(tmp_path: Path) -> None:
    g = registry.read("spark-plan", [str(SEED)], mode="operator")
    html = pictures.render(g, "html")
    page = tmp_path / "seed.html"
    page.write_text(html, encoding="utf-8")
    drawn = drawn_width(html)
    assert drawn > WIDTH  # the seed's operator tree is wider than the window
    after = scaled_width(page, tmp_path / "profile")
    # Fitting 1988 px into the window would draw the 10 px text at 6.4 px: the page stops at 9 px.
    assert after == pytest.approx(drawn * 0.9, abs=1)
    shutil.rmtree(tmp_path / "profile", ignore_errors=True)


def test_a_picture_a_little_wider_than_the_window_is_fitted(tmp_path: Path) -> None:
    g = LineageGraph()
    # three statements in a chain, the last table's long name making it a little wider than the window
    for i, out in enumerate(["t1", "t2", "mart.a_much_longer_table_name_for_width"]):
        g.add_process(Process(id=f"s{i}", name=f"s{i}", inputs=[f"t{i}"], outputs=[out]))
    html = pictures.render(g, "html")
    drawn = drawn_width(html)
    assert WIDTH - 16 < drawn < (WIDTH - 16) / 0.9, drawn
    page = tmp_path / "chain.html"
    page.write_text(html, encoding="utf-8")
    assert scaled_width(page, tmp_path / "profile") == pytest.approx(WIDTH - 16, abs=2)
    shutil.rmtree(tmp_path / "profile", ignore_errors=True)
