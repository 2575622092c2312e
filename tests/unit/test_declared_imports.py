"""Every third-party module the package imports is declared in pyproject.toml: a dependency, or an extra
(whose commands say which to install). Another package bringing it along is not a declaration."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# imported by a module only its user loads into their own pytest run (atlas_sync.emulator.testing)
BROUGHT_BY_THE_USER = {"pytest"}


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {_name(r) for r in project["dependencies"]}
    for requirements in project["optional-dependencies"].values():
        names |= {_name(r) for r in requirements}
    return names


def imported(package: Path) -> dict[str, set[str]]:
    """Top-level third-party modules -> the files (under ``package``) importing them."""
    out: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "atlas_sync":
                    out.setdefault(top, set()).add(str(path.relative_to(package)))
    return out


def undeclared(modules: dict[str, set[str]], names: set[str]) -> dict[str, set[str]]:
    dists = packages_distributions()
    missing = {}
    for module, files in modules.items():
        if module in BROUGHT_BY_THE_USER:
            continue
        providers = {_name(d) for d in dists.get(module, [module])}
        if not providers & names:
            missing[module] = files
    return missing


def test_every_third_party_import_of_the_package_is_declared() -> None:
    assert undeclared(imported(ROOT / "atlas_sync"), declared()) == {}


def test_an_import_nothing_declares_is_found(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text("import urllib3\nfrom typing_extensions import Unpack\nimport click\n")
    names = declared() - {"urllib3", "typing-extensions"}
    found = undeclared(imported(tmp_path), names)
    assert set(found) == {"urllib3", "typing_extensions"}
