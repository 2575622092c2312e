"""The real-Atlas launcher's pure parts: config rendering, PID/state handling, idempotence, stop by PID.

No Atlas is started here: "running Atlas" processes are stand-in Python sleepers whose command line carries
the markers the launcher checks, and the status endpoint is a tiny local HTTP server.
"""

from __future__ import annotations

import http.server
import io
import json
import os
import signal
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.support import real_atlas as ra

# Atlas ships this line in its own users-credentials.properties for the user admin with password admin.
ATLAS_ADMIN_ADMIN_HASH = "a4a88c0872bf652bb9ed803ece5fd6e82354838a9bf59ab4babb1dab322154e1"


def properties(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


@pytest.fixture
def layout(tmp_path: Path) -> ra.Layout:
    return ra.Layout(cache=tmp_path / "cache", home=tmp_path / "home")


@pytest.fixture
def launcher(layout: ra.Layout) -> ra.Launcher:
    messages: list[str] = []
    return ra.Launcher(layout, log=messages.append)


def fake_atlas(home: Path, *, ignore_term: bool = False) -> subprocess.Popen[bytes]:
    """A sleeper whose command line looks like this home's Atlas (what is_our_atlas checks)."""
    code = "import signal, time\n"
    if ignore_term:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready', flush=True)\ntime.sleep(120)\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, f"-Datlas.home={home}", ra.MAIN_CLASS], stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"  # signal handler installed before we signal it
    return proc


@pytest.fixture
def status_server() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server answering /api/atlas/admin/status with a settable Status."""
    current = ["ACTIVE"]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            if self.path != "/api/atlas/admin/status":
                self.send_response(404)
                self.end_headers()
                return
            body = json.dumps({"Status": current[0]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", current
    finally:
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------- config rendering


def test_password_hash_matches_atlas_file_auth_format() -> None:
    assert ra.password_hash("admin", "admin") == ATLAS_ADMIN_ADMIN_HASH


def test_password_hash_depends_on_user_and_password() -> None:
    assert ra.password_hash("admin", "other") != ATLAS_ADMIN_ADMIN_HASH
    assert ra.password_hash("bob", "admin") != ATLAS_ADMIN_ADMIN_HASH


def test_render_template_replaces_every_marker() -> None:
    assert ra.render_template("a=@A@ b=@B_2@ @A@", {"A": 1, "B_2": "x"}) == "a=1 b=x 1"


def test_render_template_refuses_a_marker_without_value() -> None:
    with pytest.raises(ra.RealAtlasError, match="@MISSING@"):
        ra.render_template("x=@MISSING@", {})


def test_render_template_refuses_an_unused_value() -> None:
    with pytest.raises(ra.RealAtlasError, match="EXTRA"):
        ra.render_template("x=1", {"EXTRA": 2})


def test_render_template_leaves_atlas_system_property_syntax_alone() -> None:
    text = "dir=${sys:atlas.data}/berkeley"
    assert ra.render_template(text, {}) == text


def test_rendered_conf_binds_loopback_on_the_chosen_ports(tmp_path: Path) -> None:
    ports = ra.Ports(http=21123, kafka_zookeeper=21124, kafka=21125)
    ra.render_conf(tmp_path / "conf", ports, "admin", "admin")
    props = properties((tmp_path / "conf" / "atlas-application.properties").read_text())
    assert props["atlas.server.http.port"] == "21123"
    assert props["atlas.server.bind.address"] == "127.0.0.1"
    assert props["atlas.enableTLS"] == "false"
    assert props["atlas.rest.address"] == "http://127.0.0.1:21123"
    assert props["atlas.kafka.zookeeper.connect"] == "127.0.0.1:21124"
    assert props["atlas.kafka.bootstrap.servers"] == "127.0.0.1:21125"
    assert props["atlas.graph.storage.backend"] == "berkeleyje"
    assert props["atlas.graph.index.search.solr.embedded"] == "true"
    assert props["atlas.authorizer.impl"] == "NONE"
    assert not any("@" in v for v in props.values())


def test_extra_properties_are_appended_and_win_and_a_malformed_one_is_refused(tmp_path: Path) -> None:
    extra = ["atlas.rest.enable.delete.type.override=true", "atlas.enableTLS=true"]
    ra.render_conf(tmp_path / "conf", ra.Ports(1, 2, 3), "admin", "admin", properties=extra)
    text = (tmp_path / "conf" / "atlas-application.properties").read_text()
    assert properties(text)["atlas.rest.enable.delete.type.override"] == "true"
    assert text.rstrip().endswith("atlas.enableTLS=true")  # after the template's own line: it wins
    with pytest.raises(ra.RealAtlasError, match="not key=value"):
        ra.render_conf(tmp_path / "conf2", ra.Ports(1, 2, 3), "admin", "admin", properties=["no equals"])


def test_rendered_users_file_holds_the_hash_not_the_password(tmp_path: Path) -> None:
    ra.render_conf(tmp_path / "conf", ra.Ports(1, 2, 3), "tester", "s3cret-pw")
    users = tmp_path / "conf" / "users-credentials.properties"
    text = users.read_text()
    assert properties(text) == {"tester": f"ADMIN::{ra.password_hash('tester', 's3cret-pw')}"}
    assert "s3cret-pw" not in text
    assert users.stat().st_mode & 0o777 == 0o600


def test_rendered_conf_includes_both_logging_configs(tmp_path: Path) -> None:
    ra.render_conf(tmp_path / "conf", ra.Ports(1, 2, 3), "admin", "admin")
    assert (tmp_path / "conf" / "atlas-log4j.xml").is_file()  # Atlas 2.1-2.3
    assert (tmp_path / "conf" / "atlas-logback.xml").is_file()  # Atlas 2.4+


def test_user_name_that_would_break_the_users_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ra.RealAtlasError, match="user name"):
        ra.render_conf(tmp_path / "conf", ra.Ports(1, 2, 3), "ad=min", "x")


# --------------------------------------------------------------------------- ports and command line


def test_choose_ports_keeps_a_given_http_port_and_picks_distinct_others() -> None:
    handed = iter([5000, 5000, 5001, 5002])

    def free_port(exclude: Sequence[int]) -> int:
        port = next(handed)
        while port in exclude:
            port = next(handed)
        return port

    ports = ra.choose_ports(4000, free_port)
    assert ports == ra.Ports(http=4000, kafka_zookeeper=5000, kafka=5001)


def test_choose_ports_without_a_port_uses_three_different_free_ports() -> None:
    ports = ra.choose_ports(None)
    assert len({ports.http, ports.kafka_zookeeper, ports.kafka}) == 3


def test_choose_ports_refuses_a_non_port_number() -> None:
    with pytest.raises(ra.RealAtlasError, match="70000"):
        ra.choose_ports(70000)


def test_java_command_points_atlas_at_the_home_layout(layout: ra.Layout) -> None:
    cmd = ra.java_command(layout, "/jdk/bin/java", "2.1.0", 21000, "3g", ["-Dextra=1"])
    assert cmd[0] == "/jdk/bin/java"
    assert "-Xmx3g" in cmd
    assert f"-Datlas.home={layout.home}" in cmd
    assert f"-Datlas.conf={layout.conf}" in cmd
    assert f"-Datlas.data={layout.data}" in cmd
    assert f"-Dembedded.solr.directory={layout.home}" in cmd
    assert "-Dextra=1" in cmd
    classpath = cmd[cmd.index("-cp") + 1].split(os.pathsep)
    assert classpath[0] == str(layout.conf)
    assert str(layout.webapp("2.1.0") / "WEB-INF" / "lib" / "*") in classpath
    assert cmd[-5:] == [ra.MAIN_CLASS, "-app", str(layout.webapp("2.1.0")), "-port", "21000"]
    assert ra.is_our_atlas(cmd, layout.home)


def test_java_command_refuses_a_bad_heap_size(layout: ra.Layout) -> None:
    with pytest.raises(ra.RealAtlasError, match="heap"):
        ra.java_command(layout, "java", "2.1.0", 1, "lots")


# --------------------------------------------------------------------------- PID and state files


def test_read_pid_handles_missing_garbage_and_valid_files(tmp_path: Path) -> None:
    pid_file = tmp_path / "atlas.pid"
    assert ra.read_pid(pid_file) is None
    pid_file.write_text("not a pid\n")
    assert ra.read_pid(pid_file) is None
    pid_file.write_text("0\n")
    assert ra.read_pid(pid_file) is None
    ra.write_pid(pid_file, 4242)
    assert ra.read_pid(pid_file) == 4242


def test_read_state_is_empty_for_missing_or_corrupt_files(tmp_path: Path) -> None:
    state_file = tmp_path / "state.json"
    assert ra.read_state(state_file) == {}
    state_file.write_text("{truncated")
    assert ra.read_state(state_file) == {}
    state_file.write_text("[1, 2]")
    assert ra.read_state(state_file) == {}
    ra.write_state(state_file, {"port": 1, "url": "http://127.0.0.1:1"})
    assert ra.read_state(state_file) == {"port": 1, "url": "http://127.0.0.1:1"}


def test_is_our_atlas_requires_main_class_and_this_home(tmp_path: Path) -> None:
    home = tmp_path / "h"
    assert ra.is_our_atlas(["java", f"-Datlas.home={home}", ra.MAIN_CLASS], home)
    assert not ra.is_our_atlas(["java", f"-Datlas.home={tmp_path / 'other'}", ra.MAIN_CLASS], home)
    assert not ra.is_our_atlas(["sleep", f"-Datlas.home={home}"], home)
    assert not ra.is_our_atlas(None, home)


def test_pid_alive_tells_running_from_exited_processes() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert not ra.pid_alive(proc.pid)
    assert ra.pid_alive(os.getpid())


def test_tail_returns_the_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("".join(f"line {i}\n" for i in range(1000)))
    assert ra.tail(log, 3) == ["line 997", "line 998", "line 999"]
    assert ra.tail(tmp_path / "missing.log", 3) == []
    assert ra.tail(log, 0) == []


# --------------------------------------------------------------------------- idempotence


def test_decide_start_starts_when_nothing_runs() -> None:
    assert ra.decide_start(False, None, None, None) == "start"
    assert ra.decide_start(False, None, 21000, 22000) == "start"


def test_decide_start_reuses_an_active_server() -> None:
    assert ra.decide_start(True, "ACTIVE", 21000, None) == "reuse"
    assert ra.decide_start(True, "ACTIVE", 21000, 21000) == "reuse"


def test_decide_start_waits_for_a_server_that_is_still_booting() -> None:
    assert ra.decide_start(True, None, 21000, None) == "wait"
    assert ra.decide_start(True, "PASSIVE", 21000, None) == "wait"


def test_decide_start_refuses_a_different_port_while_one_runs() -> None:
    with pytest.raises(ra.RealAtlasError, match="already running on port 21000"):
        ra.decide_start(True, "ACTIVE", 21000, 22000)


def test_second_start_finds_the_running_server_without_installing(
    launcher: ra.Launcher, status_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = status_server
    proc = fake_atlas(launcher.layout.home)
    try:
        ra.write_pid(launcher.layout.pid_file, proc.pid)
        ra.write_state(
            launcher.layout.state_file, {"pid": proc.pid, "url": url, "port": 1, "version": "2.1.0"}
        )

        def no_install() -> dict[str, object]:
            raise AssertionError("start must not install or launch a second server")

        monkeypatch.setattr(launcher, "install", no_install)
        info = launcher.start()
        assert info["state"] == "ACTIVE"
        assert info["pid"] == proc.pid
        assert info["url"] == url
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_start_waits_while_the_running_server_is_still_starting(
    launcher: ra.Launcher, status_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, current = status_server
    current[0] = "BECOMING_ACTIVE"
    proc = fake_atlas(launcher.layout.home)
    try:
        ra.write_pid(launcher.layout.pid_file, proc.pid)
        ra.write_state(launcher.layout.state_file, {"pid": proc.pid, "url": url, "port": 1})
        monkeypatch.setattr(launcher, "install", lambda: pytest.fail("must not install"))
        answers: list[str | None] = []
        real_probe = ra.probe_status

        def probe(url: str, timeout: float = 5.0) -> str | None:
            if len(answers) == 3:  # ACTIVE from the fourth probe on: counted, not timed
                current[0] = "ACTIVE"
            answers.append(real_probe(url, timeout))
            return answers[-1]

        monkeypatch.setattr(ra, "probe_status", probe)
        assert launcher.start(timeout=30)["state"] == "ACTIVE"
        # the state it found, then it probed on while Atlas was starting (and once more for the
        # state it reports)
        assert answers[:4] == ["BECOMING_ACTIVE"] * 3 + ["ACTIVE"]
    finally:
        proc.kill()
        proc.wait()


def test_start_with_a_stale_pid_file_cleans_it_and_installs(
    launcher: ra.Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    exited = subprocess.Popen([sys.executable, "-c", "pass"])
    exited.wait()
    ra.write_pid(launcher.layout.pid_file, exited.pid)
    ra.write_state(launcher.layout.state_file, {"pid": exited.pid, "url": "http://127.0.0.1:1", "port": 1})

    class Installed(Exception):
        pass

    def install() -> dict[str, object]:
        raise Installed

    monkeypatch.setattr(launcher, "install", install)
    with pytest.raises(Installed):
        launcher.start()
    assert not launcher.layout.pid_file.exists()
    assert not launcher.layout.state_file.exists()


def test_status_of_a_home_without_server_is_stopped(launcher: ra.Launcher) -> None:
    assert launcher.status()["state"] == "stopped"


# --------------------------------------------------------------------------- stop by PID


def test_stop_terminates_the_recorded_atlas(launcher: ra.Launcher) -> None:
    proc = fake_atlas(launcher.layout.home)
    ra.write_pid(launcher.layout.pid_file, proc.pid)
    assert launcher.stop(grace=10) is True
    assert proc.wait(timeout=10) == -signal.SIGTERM
    assert not launcher.layout.pid_file.exists()


def test_stop_kills_after_the_grace_period(launcher: ra.Launcher) -> None:
    proc = fake_atlas(launcher.layout.home, ignore_term=True)
    ra.write_pid(launcher.layout.pid_file, proc.pid)
    assert launcher.stop(grace=0.5) is True
    assert proc.wait(timeout=10) == -signal.SIGKILL


def test_stop_never_signals_a_reused_pid(launcher: ra.Launcher) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ra.write_pid(launcher.layout.pid_file, other.pid)
        assert launcher.stop(grace=1) is False
        assert other.poll() is None
        assert not launcher.layout.pid_file.exists()
    finally:
        other.kill()
        other.wait()


def test_stop_without_server_reports_not_running(launcher: ra.Launcher) -> None:
    assert launcher.stop() is False


# --------------------------------------------------------------------------- installation pieces


def test_models_from_an_explicit_folder_are_its_subfolders(tmp_path: Path) -> None:
    (tmp_path / "m" / "0000-Area0").mkdir(parents=True)
    (tmp_path / "m" / "1000-Hadoop").mkdir()
    (tmp_path / "m" / "README").write_text("x")
    assert [p.name for p in ra.find_models(tmp_path / "m")] == ["0000-Area0", "1000-Hadoop"]


def test_models_fall_back_to_the_project_copy_of_builtin_types(tmp_path: Path) -> None:
    source = ra.lay_out_models(tmp_path / "models", [])
    copied = tmp_path / "models" / "0000-Area0" / "0010-builtin_types.json"
    assert "project copy" in source
    names = {d["name"] for d in json.loads(copied.read_text())["entityDefs"]}
    assert {"Referenceable", "DataSet", "Process"} <= names


def test_explicit_war_that_does_not_exist_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ATLAS_REAL_WAR", str(tmp_path / "missing.war"))
    with pytest.raises(ra.RealAtlasError, match="missing.war"):
        ra.ensure_war("2.1.0", lambda _m: None)


def test_missing_maven_is_an_infrastructure_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ATLAS_REAL_WAR", raising=False)
    monkeypatch.setenv("ATLAS_REAL_M2", str(tmp_path / "m2"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(ra.InfrastructureError) as info:
        ra.ensure_war("2.1.0", lambda _m: None)
    assert info.value.exit_code == ra.EXIT_INFRA


def test_java_other_than_11_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"17.0.15\" 2025-04-15' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ATLAS_REAL_JAVA", str(fake))
    with pytest.raises(ra.RealAtlasError, match="Java 17, not 11"):
        ra.ensure_java(ra.Layout(tmp_path, tmp_path), lambda _m: None)


# --------------------------------------------------------------------------- CLI


def test_cli_status_exits_non_zero_when_stopped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = ra.main(["status", "--home", str(tmp_path / "h"), "--cache", str(tmp_path / "c")])
    assert code == 1
    assert "state=stopped" in capsys.readouterr().out


def test_cli_maps_infrastructure_errors_to_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unavailable(self: ra.Launcher) -> dict[str, object]:
        raise ra.InfrastructureError("registry unreachable", hint="check the network")

    monkeypatch.setattr(ra.Launcher, "install", unavailable)
    code = ra.main(["start", "--home", str(tmp_path / "h"), "--cache", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == ra.EXIT_INFRA
    assert "error: registry unreachable" in err
    assert "hint: check the network" in err
    assert "Traceback" not in err


def test_cli_env_refuses_when_not_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = ra.main(["env", "--home", str(tmp_path / "h"), "--cache", str(tmp_path / "c")])
    assert code == 1
    assert "not running" in capsys.readouterr().err


def _fake_war(path: Path, with_testtools: bool = True) -> Path:
    """A tiny WAR: one class file, and optionally an atlas-testtools jar holding solr/core-template."""
    jar = io.BytesIO()
    with zipfile.ZipFile(jar, "w") as zf:
        zf.writestr("solr/collections.txt", "vertex_index\n")
        zf.writestr("solr/core-template/schema.xml", "<schema/>")
        zf.writestr("org/apache/atlas/runner/LocalSolrRunner.class", b"\xca\xfe")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("WEB-INF/classes/atlas-buildinfo.properties", "project.version=9.9\n")
        if with_testtools:
            zf.writestr("WEB-INF/lib/atlas-testtools-9.9.jar", jar.getvalue())
    return path


def test_war_is_expanded_once_per_version(layout: ra.Layout, tmp_path: Path) -> None:
    war = _fake_war(tmp_path / "atlas-webapp-9.9.war")
    messages: list[str] = []
    webapp = ra.ensure_webapp(layout, "9.9", war, messages.append)
    assert (webapp / "WEB-INF" / "classes" / "atlas-buildinfo.properties").is_file()
    assert len(messages) == 2  # "expanding ..." and "expanded in ..."
    assert ra.ensure_webapp(layout, "9.9", war, messages.append) == webapp
    assert len(messages) == 2  # second call: nothing to do


def test_solr_template_comes_from_the_testtools_jar(layout: ra.Layout, tmp_path: Path) -> None:
    webapp = ra.ensure_webapp(layout, "9.9", _fake_war(tmp_path / "w.war"), lambda _m: None)
    ra.extract_solr_template(webapp, layout.home)
    assert (layout.home / "solr" / "core-template" / "schema.xml").read_text() == "<schema/>"
    assert (layout.home / "solr" / "collections.txt").is_file()
    assert not (layout.home / "org").exists()  # only solr/ is taken from the jar


def test_war_without_testtools_cannot_run_embedded_solr(layout: ra.Layout, tmp_path: Path) -> None:
    war = _fake_war(tmp_path / "w.war", with_testtools=False)
    webapp = ra.ensure_webapp(layout, "9.9", war, lambda _m: None)
    with pytest.raises(ra.StartupError, match="atlas-testtools"):
        ra.extract_solr_template(webapp, layout.home)


def test_models_folders_are_copied_under_home(tmp_path: Path) -> None:
    (tmp_path / "m" / "0000-Area0").mkdir(parents=True)
    (tmp_path / "m" / "0000-Area0" / "0010-base_model.json").write_text("{}")
    target = tmp_path / "home" / "models"
    target.mkdir(parents=True)
    (target / "stale.json").write_text("{}")
    ra.lay_out_models(target, ra.find_models(tmp_path / "m"))
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == [
        "0000-Area0",
        "0000-Area0/0010-base_model.json",
    ]
