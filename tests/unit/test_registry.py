"""Reader registry: built-ins, entry-point plugins, and --from auto detection."""

import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry

ROOT = Path(__file__).parents[2]
PLUGIN = ROOT / "examples" / "reader-plugin"


class _Reader:
    name = "fake"
    extensions = (".fake",)
    description = "a fake reader"

    def read(self, paths, **options):
        raise NotImplementedError


def _entry_points(monkeypatch, *eps: EntryPoint) -> None:
    monkeypatch.setattr(
        registry, "entry_points", lambda group: list(eps) if group == "atlas_sync.readers" else []
    )


def test_builtin_readers_of_this_issue_are_registered():
    names = set(registry.available())
    assert {"graph", "openlineage", "seatunnel", "whaletunnel"} <= names


def test_unknown_reader_names_the_available_ones():
    with pytest.raises(InputError) as exc:
        registry.get("nope")
    assert "openlineage" in (exc.value.hint or "")


def test_entry_point_plugin_class_is_instantiated_and_listed(monkeypatch):
    monkeypatch.setitem(sys.modules, "fake_plugin_mod", type(sys)("fake_plugin_mod"))
    sys.modules["fake_plugin_mod"].FakeReader = _Reader  # type: ignore[attr-defined]
    _entry_points(monkeypatch, EntryPoint("fake", "fake_plugin_mod:FakeReader", "atlas_sync.readers"))
    r = registry.get("fake")
    assert isinstance(r, _Reader)


def test_broken_plugin_is_skipped_and_cannot_shadow_a_builtin(monkeypatch):
    monkeypatch.setitem(sys.modules, "fake_plugin_mod", type(sys)("fake_plugin_mod"))
    sys.modules["fake_plugin_mod"].FakeReader = _Reader  # type: ignore[attr-defined]
    _entry_points(
        monkeypatch,
        EntryPoint("broken", "no_such_module_xyz:READER", "atlas_sync.readers"),
        EntryPoint("sql", "fake_plugin_mod:FakeReader", "atlas_sync.readers"),
    )
    readers = registry.available()
    assert "broken" not in readers
    assert not isinstance(readers["sql"], _Reader)


def test_detect_survives_a_plugin_whose_sniff_raises(monkeypatch, tmp_path):
    class Bad(_Reader):
        def sniff(self, path, head):
            raise RuntimeError("boom")

    monkeypatch.setitem(sys.modules, "fake_plugin_mod", type(sys)("fake_plugin_mod"))
    sys.modules["fake_plugin_mod"].Bad = Bad  # type: ignore[attr-defined]
    _entry_points(monkeypatch, EntryPoint("bad", "fake_plugin_mod:Bad", "atlas_sync.readers"))
    f = tmp_path / "x.fake"
    f.write_text("anything")
    assert registry.detect(str(f)).name == "fake"  # by extension, after the failing sniff


def test_detect_picks_readers_of_this_issue_by_content():
    data = ROOT / "tests" / "data"
    assert registry.detect(str(data / "openlineage" / "postgres_runs.jsonl")).name == "openlineage"
    assert registry.detect(str(data / "seatunnel" / "mysql_to_pg.conf")).name == "seatunnel"
    assert registry.detect(str(data / "seatunnel" / "json_form.json")).name == "seatunnel"
    assert registry.detect(str(data / "seatunnel" / "whaletunnel-minimal.json")).name == "whaletunnel"


def test_detect_picks_sql_by_its_content_past_comments(tmp_path):
    f = tmp_path / "etl.txt"
    f.write_text("-- nightly\n/* load\n   the mart */\n  insert into mart.t select a from raw.s;\n")
    assert registry.detect(str(f)).name == "sql"
    words = tmp_path / "notes.txt"
    words.write_text("selected tables: a, b\n")  # a keyword's prefix is not SQL
    with pytest.raises(InputError, match="cannot tell"):
        registry.detect(str(words))


def test_auto_reads_sql_text_from_stdin():
    out = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", "lineage", "auto", "-", "--format", "text"],
        input="INSERT INTO mart.b SELECT a FROM raw.c;\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "reader: sql (picked by --from auto)" in out.stderr
    assert "mart.b.a <- raw.c.a (IDENTITY)" in out.stdout


def test_detect_without_a_match_is_an_input_error(tmp_path):
    f = tmp_path / "x.unknownext"
    f.write_text("hello")
    with pytest.raises(InputError, match="cannot tell"):
        registry.detect(str(f))


def test_detect_says_a_folder_no_reader_takes_is_a_folder_and_which_folders_are_read(tmp_path):
    folder = tmp_path / "adir"
    folder.mkdir()
    with pytest.raises(InputError) as err:
        registry.detect(str(folder))
    assert str(err.value) == f"{folder}: cannot tell which reader fits this folder"
    assert err.value.hint is not None and "manifest.json" in err.value.hint and ".lkml" in err.value.hint


def test_detect_says_an_empty_file_of_no_known_kind_is_empty(tmp_path):
    f = tmp_path / "x.unknownext"
    f.write_text("")
    with pytest.raises(InputError) as err:
        registry.detect(str(f))
    assert str(err.value) == f"{f}: empty file: no lineage to read"


def test_auto_says_empty_stdin_is_empty():
    out = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", "lineage", "auto", "-"],
        input="",
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")},
        timeout=60,
    )
    assert out.returncode == 1
    assert out.stderr == "error: stdin is empty: no lineage to read\n"


@pytest.mark.slow
def test_example_plugin_installs_and_is_listed_and_picked_by_auto(tmp_path):
    """pip-installs examples/reader-plugin into a temporary target (not the project venv)."""
    target = tmp_path / "site"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(PLUGIN)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    if pip.returncode != 0 and (
        "NewConnectionError" in pip.stderr or "No matching distribution" in pip.stderr
    ):
        pytest.skip("package index unreachable to build the example plugin")
    assert pip.returncode == 0, pip.stderr
    env = {**os.environ, "PYTHONPATH": str(target)}
    cli = [sys.executable, "-m", "atlas_sync.cli.main"]
    listed = subprocess.run([*cli, "lineage", "--list-readers"], capture_output=True, text=True, env=env)
    assert listed.returncode == 0, listed.stderr
    assert any(line.startswith("csv-mapping") for line in listed.stdout.splitlines())
    sample = tmp_path / "sample.mapping.csv"
    sample.write_text("source,target,kind\nraw.a.x,mart.b.y,IDENTITY\n")
    out = subprocess.run(
        [*cli, "lineage", "auto", str(sample), "--format", "json"], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert '"raw.a.x"' in out.stdout and '"mart.b.y"' in out.stdout
    assert "csv-mapping" in out.stderr  # --from auto says which reader it picked
    # A bad row is a one-line error with file and line, not a traceback.
    sample.write_text("source,target,kind\nraw.a.x,mart.b.y,MAGIC\n")
    bad = subprocess.run(
        [*cli, "lineage", "csv-mapping", str(sample)], capture_output=True, text=True, env=env
    )
    assert bad.returncode == 1
    assert "line 2" in bad.stderr and "Traceback" not in bad.stderr
