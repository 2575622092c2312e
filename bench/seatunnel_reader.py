"""SeaTunnel reader on SeaTunnel's own job configs: speed, and table-level precision/recall.

    .venv/bin/python bench/seatunnel_reader.py --seatunnel /path/to/apache-seatunnel [--limit N]

``--seatunnel`` is a checkout of apache/seatunnel, or its git directory (read with ``git show``;
nothing of it is copied into this repository). Prints:

* speed over every ``*.conf`` under ``seatunnel-e2e/`` and ``seatunnel-examples/``: the reader's
  files/s next to parsing the same files with pyhocon alone (the floor every HOCON reader pays),
  as a ratio, and how many files were refused (InputError) or crashed (anything else);
* accuracy on the hand-labelled sample in ``bench/seatunnel_expected.json``: the tables, files,
  topics, indexes and collections each config reads and writes, labelled from the config and
  SeaTunnel's connector docs before the reader was run. A reported name matches an expected one
  when one's dotted parts end with the other's (case-insensitive): the reader may add a database
  or schema the label leaves out; files compare as URIs without a trailing ``/``.

Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from pyhocon import ConfigFactory

from atlas_sync.errors import InputError
from atlas_sync.lineage.readers.seatunnel import SEATUNNEL_READER

EXPECTED = Path(__file__).with_name("seatunnel_expected.json")


def _files(src: Path) -> dict[str, str]:
    """repo path -> text of every job config of the e2e tests and examples."""
    if (src / "HEAD").is_file() and not (src / ".git").exists():
        git = ["git", f"--git-dir={src}"]
        names = subprocess.run(
            [*git, "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.split()
        wanted = [n for n in names if n.endswith(".conf") and ("seatunnel-e2e" in n or "example" in n)]
        return {
            n: subprocess.run([*git, "show", f"HEAD:{n}"], capture_output=True, text=True, check=True).stdout
            for n in wanted
        }
    return {
        str(p.relative_to(src)): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(src.rglob("*.conf"))
        if "seatunnel-e2e" in str(p) or "example" in str(p)
    }


def _norm(name: str) -> list[str]:
    n = name.strip().rstrip("/").lower()
    return [n] if "://" in n else n.split(".")


def _match(a: str, b: str) -> bool:
    x, y = _norm(a), _norm(b)
    k = min(len(x), len(y))
    return x[-k:] == y[-k:]


def _reported(path: str) -> tuple[list[str], list[str]] | None:
    try:
        g = SEATUNNEL_READER.read([path])
    except InputError:
        return None
    ins, outs = [], []
    for d in g.datasets:
        name = d.id
        if d.facets.get("default_schema"):
            name = name.split(".", 1)[1] if "." in name else name
        if d.facets.get("input_table"):
            ins.append(name)
        if d.facets.get("output_table"):
            outs.append(name)
    return ins, outs


def _score(expected: list[str], got: list[str]) -> tuple[int, int, int]:
    tp = sum(1 for e in expected if any(_match(e, g) for g in got))
    fp = sum(1 for g in got if not any(_match(e, g) for e in expected))
    return tp, fp, len(expected) - tp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seatunnel", type=Path, required=True, help="apache/seatunnel checkout or git dir")
    ap.add_argument("--limit", type=int, default=0, help="read only the first N configs for speed")
    ap.add_argument("--verbose", action="store_true", help="print every mismatch of the sample")
    args = ap.parse_args()
    texts = _files(args.seatunnel)
    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, str] = {}
        for i, (name, text) in enumerate(texts.items()):
            p = Path(tmp) / f"{i:04d}_{Path(name).name}"
            p.write_text(text, encoding="utf-8")
            paths[name] = str(p)
        names = list(paths)[: args.limit or None]

        # Interleaved per file, so load on the machine hits both columns alike.
        floor = wall = 0.0
        parsed = refused = crashed = 0
        for n in names:
            t = time.perf_counter()
            try:
                ConfigFactory.parse_string(texts[n])
                parsed += 1
            except Exception:  # noqa: BLE001, S110 - the floor only counts what pyhocon accepts
                pass
            floor += time.perf_counter() - t
            t = time.perf_counter()
            try:
                SEATUNNEL_READER.read([paths[n]])
            except InputError:
                refused += 1
            except Exception:  # noqa: BLE001 - a crash is a finding
                crashed += 1
            wall += time.perf_counter() - t
        print(f"speed: {len(names)} SeaTunnel job configs")
        print(f"  pyhocon parse only     {len(names) / floor:8.1f} files/s   ({parsed} parsed)")
        print(
            f"  seatunnel reader       {len(names) / wall:8.1f} files/s   ({refused} refused, {crashed} crashed)"
        )
        print(f"  ratio reader/pyhocon   {floor / wall:8.2f}")

        expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
        tp = fp = fn = skipped = 0
        for name, exp in expected.items():
            if "skip" in exp or name not in paths:
                skipped += 1
                continue
            ins, outs = _reported(paths[name]) or ([], [])
            for e, g in ((exp["in"], ins), (exp["out"], outs)):
                a, b, c = _score(e, g)
                tp, fp, fn = tp + a, fp + b, fn + c
                if args.verbose and (b or c):
                    print(f"  {name.rsplit('/', 1)[-1]}: expected {e}, got {g}")
        prec = tp / (tp + fp) if tp + fp else 1.0
        rec = tp / (tp + fn) if tp + fn else 1.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        print(f"accuracy: {len(expected) - skipped} labelled configs ({skipped} skipped: not complete jobs)")
        print(f"  tables  tp={tp} fp={fp} fn={fn}  precision={prec:.3f} recall={rec:.3f} F1={f1:.3f}")


if __name__ == "__main__":
    main()
