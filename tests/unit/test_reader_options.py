"""Each reader's options are declared (readers.options, a plugin's ``options``) and checked: an option
a reader does not take is an error naming it, with the closest one it takes, never silently ignored."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.errors import InputError
from atlas_sync.factory import embedded_client
from atlas_sync.lineage import registry
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.reader_options import ReaderOption

DATA = Path(__file__).resolve().parents[1] / "data"
SHOP = DATA / "powerbi" / "shop"
CLI = Path(sys.executable).parent / "atlas-sync"
# internal keywords, never a user's option: the rows the database reader hands the query-log reader
INTERNAL = {"rows", "per_chunk"}


def _keywords(reader: Any) -> set[str]:
    """The keyword parameters of a reader's read, read_chunks and query-log core (``_run``)."""
    names: set[str] = set()
    for attr in ("read", "read_chunks", "_run"):
        fn = getattr(reader, attr, None)
        if fn is None:
            continue
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in ("self", "paths"):
                names.add(p.name)
    return names - INTERNAL


@pytest.mark.parametrize("name", sorted(registry.BUILTIN))
def test_every_keyword_a_builtin_reader_reads_is_a_declared_option(name: str) -> None:
    reader = registry.get(name)
    declared = {o.name for o in registry.options_of(reader) or ()}
    assert _keywords(reader) <= declared


def test_the_options_spark_readers_read_from_their_options_dict_are_declared() -> None:
    # (the Spark readers take **options and read them by name)
    source = (Path(registry.__file__).parent / "readers" / "spark_plan.py").read_text(encoding="utf-8")
    read = {"explain", "mode", "job", "path", "section", "progress", "reporter"}
    assert all(f'options.get("{n}")' in source for n in read)
    for name in ("spark-plan", "spark-json"):
        assert {o.name for o in registry.options_of(registry.get(name)) or ()} == read


def test_a_misspelt_option_is_refused_with_the_closest_name_and_the_readers_options() -> None:
    with pytest.raises(InputError) as exc:
        registry.read("powerbi", [str(SHOP)], conection_map={"warehouse": "jaffle"})
    assert (
        exc.value.message == "reader 'powerbi' has no option 'conection_map' (did you mean connection_map?)"
    )
    assert "connection_map, job, progress, reporter" in (exc.value.hint or "")
    assert "atlas-sync lineage --list-options powerbi" in (exc.value.hint or "")


def test_an_option_of_another_reader_is_refused_without_a_guess() -> None:
    with pytest.raises(InputError) as exc:
        list(registry.read_chunks("powerbi", [str(SHOP)], namespace_map="ns.toml"))
    assert exc.value.message == "reader 'powerbi' has no option 'namespace_map'"


def test_the_declared_options_are_taken() -> None:
    g = registry.read(
        "powerbi",
        [str(SHOP)],
        connection_map={"warehouse.example.com/jaffle": "jaffle"},
        job="pbi",
        progress=False,
    )
    assert g.job == "pbi" and any(d.id == "jaffle.main_marts.customers" for d in g.datasets)


def test_the_profiles_defaults_go_only_to_the_readers_that_take_them(tmp_path: Path) -> None:
    # the lineage profile's reader_options = { mode = "job" } (Spark's) is no option of the SQL reader
    sql = tmp_path / "q.sql"
    sql.write_text("INSERT INTO a.t SELECT x FROM a.s;\n", encoding="utf-8")
    pub = Publisher(embedded_client(emulator=Emulator(None)), domain="d")
    assert [p.outputs for p in pub.read("sql", [str(sql)]).processes] == [["a.t"]]
    with pytest.raises(InputError, match="has no option 'dialekt' \\(did you mean dialect\\?\\)"):
        pub.read("sql", [str(sql)], dialekt="duckdb")


class _Plugin:
    name = "fakeopts"
    extensions = (".fake",)
    description = "a plugin"

    def read(self, paths: Any, **options: Any) -> LineageGraph:
        return LineageGraph(job=str(options.get("job") or "x"))


def test_a_plugin_that_declares_its_options_is_checked_one_that_does_not_is_not() -> None:
    plain = _Plugin()
    assert registry.options_of(plain) is None
    registry.check_options(plain, ["anything"])  # (nothing declared: unchecked, as before)
    declaring = _Plugin()
    declaring.options = (ReaderOption("depth", "int", "how deep"),)  # type: ignore[attr-defined]
    assert [o.name for o in registry.options_of(declaring) or ()] == ["depth", "job", "progress", "reporter"]
    registry.check_options(declaring, ["depth", "job"])
    with pytest.raises(InputError, match="has no option 'dept' \\(did you mean depth\\?\\)"):
        registry.check_options(declaring, ["dept"])


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS")}
    return subprocess.run([str(CLI), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def test_sync_with_a_misspelt_option_fails_in_one_line_and_publishes_nothing(tmp_path: Path) -> None:
    (tmp_path / "connections.toml").write_text(
        '"warehouse.example.com/jaffle" = "jaffle"\n', encoding="utf-8"
    )
    res = _cli(tmp_path, "sync", "--domain", "shop", str(SHOP), "-o", "conection_map=connections.toml")
    assert res.returncode == 1
    assert (
        "error: reader 'powerbi' has no option 'conection_map' (did you mean connection_map?)" in res.stderr
    )
    assert "Traceback" not in res.stderr
    shown = _cli(tmp_path, "show", "--domain", "shop")
    assert "jaffle" not in shown.stdout


def test_list_options_gives_each_option_with_its_type_and_help(tmp_path: Path) -> None:
    res = _cli(tmp_path, "lineage", "powerbi", "--list-options")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "powerbi"
    assert lines[1].split()[:2] == ["connection_map", "map"]
    assert [line.split()[0] for line in lines[1:]] == ["connection_map", "job", "progress", "reporter"]
