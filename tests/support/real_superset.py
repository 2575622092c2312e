"""Start, probe and stop a real Apache Superset on this machine for the tests, without Docker.

``python -m tests.support.real_superset install|start|status|stop|env``

Recipe (issue 41, docs/bi.md): Apache Superset 6.1.0 from PyPI in a venv of its own (the plain install
breaks on a missing ``rich``, Flask-Caching 2.5's new keyword and a missing ``cachetools``, hence the
extra pins; DuckDB and duckdb-engine for the warehouse the tests query):

    pip install 'apache-superset==6.1.0' 'flask-caching<2.5' rich cachetools duckdb duckdb-engine

A SQLite metadata database, a random ``SECRET_KEY``, ``PREVENT_UNSAFE_DB_CONNECTIONS = False`` (so a
DuckDB file can be a database), ``superset db upgrade``, ``superset fab create-admin``, ``superset init``
(about 40 s), then ``superset run`` on 127.0.0.1 (3-5 s). The initialised metadata database is cached
next to the venv (``superset-init.db``) and copied into each new instance, so only the first start pays
for the initialisation. The admin's password is random, written to ``password`` in the instance folder
(mode 600) and never put on a command line (``create-admin`` reads it from its prompt).

Exit codes as for the other launchers: 0 ok; 1 usage or other error; 3 Superset could not be installed;
4 installed but the server did not come up.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from tests.support.real_atlas import (
    InfrastructureError,
    RealAtlasError,
    StartupError,
    find_free_port,
    pid_alive,
    port_in_use,
    read_state,
    run_cli,
    tail,
    write_state,
)
from tests.support.server_cli import server_cli

VERSION = "6.1.0"
REQUIREMENTS = [
    f"apache-superset=={VERSION}",
    "flask-caching<2.5",
    "rich",
    "cachetools",
    "duckdb",
    "duckdb-engine",
]
ADMIN = "admin"
DEFAULT_TIMEOUT = 120.0
# Settings for a throwaway test instance: no CSRF (the tests create objects through the REST API with a
# bearer token), DuckDB files allowed as databases, no examples, no caching server.
CONFIG = """\
import os
SECRET_KEY = os.environ["ATLAS_SYNC_SUPERSET_SECRET"]
SQLALCHEMY_DATABASE_URI = "sqlite:///" + os.environ["ATLAS_SYNC_SUPERSET_DB"]
PREVENT_UNSAFE_DB_CONNECTIONS = False
WTF_CSRF_ENABLED = False
TALISMAN_ENABLED = False
SUPERSET_LOAD_EXAMPLES = False
FEATURE_FLAGS = {"ENABLE_TEMPLATE_PROCESSING": True}
"""


class SupersetLauncherError(RealAtlasError):
    """The Superset launcher could not do what was asked."""


def default_venv() -> Path:
    """Where Superset is installed: ``$ATLAS_SYNC_SUPERSET_VENV``, else ``build/superset-venv`` of the checkout."""
    explicit = os.environ.get("ATLAS_SYNC_SUPERSET_VENV")
    if explicit:
        return Path(explicit)
    return Path(__file__).resolve().parents[2] / "build" / "superset-venv"


def superset_bin(venv: Path) -> Path:
    return venv / "bin" / "superset"


def ensure_installed(venv: Path, log: Callable[[str], None]) -> Path:
    """The ``superset`` command of ``venv``, installing the recipe there when it is missing (~35 s)."""
    exe = superset_bin(venv)
    if exe.is_file():
        return exe
    log(f"installing Apache Superset {VERSION} into {venv} (about 35 s)")
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(venv / "bin" / "pip"), "install", "-q", *REQUIREMENTS],
    ]
    for cmd in steps:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InfrastructureError(f"{cmd[0]}: {exc}") from None
        if proc.returncode != 0:
            raise InfrastructureError(
                f"installing Superset failed: {(proc.stdout + proc.stderr).strip()[-400:]}",
                hint="pip install " + " ".join(repr(r) for r in REQUIREMENTS) + " in a venv of its own",
            )
    if not exe.is_file():
        raise InfrastructureError(f"pip installed Superset but {exe} is missing")
    return exe


@dataclasses.dataclass
class Server:
    """Start/stop/status of one throwaway Superset living in ``home``."""

    home: Path
    venv: Path = dataclasses.field(default_factory=default_venv)
    log: Callable[[str], None] = dataclasses.field(default=lambda msg: click.echo(msg, err=True))

    @property
    def state_file(self) -> Path:
        return self.home / "state.json"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def log_file(self) -> Path:
        return self.home / "superset.log"

    @property
    def metadata_db(self) -> Path:
        return self.home / "superset.db"

    @property
    def cached_db(self) -> Path:
        return self.venv / "superset-init.db"

    def url(self) -> str | None:
        port = read_state(self.state_file).get("port")
        return f"http://127.0.0.1:{port}" if port else None

    def running(self) -> bool:
        state = read_state(self.state_file)
        pid, port = int(state.get("pid", 0) or 0), int(state.get("port", 0) or 0)
        return bool(pid) and pid_alive(pid) and bool(port) and port_in_use(port)

    def status(self) -> dict[str, Any]:
        info: dict[str, Any] = {"home": str(self.home), "state": "running" if self.running() else "stopped"}
        if info["state"] == "running":
            info["url"] = self.url()
        return info

    def _env(self, secret: str) -> dict[str, str]:
        return {
            **os.environ,
            "SUPERSET_CONFIG_PATH": str(self.home / "superset_config.py"),
            "ATLAS_SYNC_SUPERSET_SECRET": secret,
            "ATLAS_SYNC_SUPERSET_DB": str(self.metadata_db),
            "FLASK_APP": "superset",
            "SUPERSET_HOME": str(self.home / "superset-home"),
        }

    def _superset(
        self, env: dict[str, str], *args: str, stdin: str | None = None, timeout: float = 600
    ) -> None:
        cmd = [str(superset_bin(self.venv)), *args]
        try:
            proc = subprocess.run(
                cmd, input=stdin, capture_output=True, text=True, env=env, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise StartupError(f"superset {args[0]}: no answer within {timeout:.0f} s") from None
        if proc.returncode != 0:
            last = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise StartupError(f"superset {' '.join(args[:2])} failed (exit {proc.returncode}):\n{last}")

    def _initialise(self, env: dict[str, str], password: str) -> None:
        """A fresh metadata database: the cached one (same admin, new password) or a full initialisation."""
        t0 = time.monotonic()
        cached_password = self.cached_db.with_suffix(".password")
        if self.cached_db.is_file() and cached_password.is_file():
            # the cached admin's password came with it (a `fab reset-password` costs ~18 s of start-up)
            shutil.copyfile(self.cached_db, self.metadata_db)
            shutil.copyfile(cached_password, self.password_file)
            self.password_file.chmod(0o600)
            self.log(f"metadata database from the cache ({time.monotonic() - t0:.1f} s)")
            return
        self._superset(env, "db", "upgrade")
        self._superset(
            env,
            "fab",
            "create-admin",
            "--username",
            ADMIN,
            "--firstname",
            "Atlas",
            "--lastname",
            "Sync",
            "--email",
            "admin@example.invalid",
            stdin=f"{password}\n{password}\n",
        )
        self._superset(env, "init")
        with contextlib.suppress(OSError):
            shutil.copyfile(self.metadata_db, self.cached_db)
            shutil.copyfile(self.password_file, cached_password)
            cached_password.chmod(0o600)
        self.log(f"metadata database initialised ({time.monotonic() - t0:.1f} s)")

    def start(self, *, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """Start a fresh instance (or find the one running here) and wait until it answers /health."""
        if self.running():
            self.log(f"Superset is already running at {self.url()}")
            return self.status()
        ensure_installed(self.venv, self.log)
        self.stop()
        self.home.mkdir(parents=True, exist_ok=True)
        self.metadata_db.unlink(missing_ok=True)
        (self.home / "superset_config.py").write_text(CONFIG, encoding="utf-8")
        password = secrets.token_urlsafe(18)
        self.password_file.write_text(password + "\n", encoding="utf-8")
        self.password_file.chmod(0o600)
        secret = secrets.token_urlsafe(32)
        env = self._env(secret)
        self._initialise(env, password)
        port = find_free_port()
        t0 = time.monotonic()
        with open(self.log_file, "ab") as log:
            proc = subprocess.Popen(
                [str(superset_bin(self.venv)), "run", "-h", "127.0.0.1", "-p", str(port), "--with-threads"],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        write_state(self.state_file, {"pid": proc.pid, "port": port, "version": VERSION})
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                for line in tail(self.log_file, 30):
                    self.log(line)
                raise StartupError(f"Superset exited while starting (exit {proc.returncode})")
            if _healthy(port):
                self.log(f"Superset {VERSION} answers at {self.url()} after {time.monotonic() - t0:.1f} s")
                return self.status()
            time.sleep(0.5)  # polling a server's startup (no event to wait on)
        self.stop()
        raise StartupError(f"Superset did not answer /health within {timeout:.0f} s")

    def stop(self) -> bool:
        """Stop this home's server (its process group); False when none ran."""
        pid = int(read_state(self.state_file).get("pid", 0) or 0)
        if not pid or not pid_alive(pid):
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
        for _ in range(100):
            if not pid_alive(pid):
                break
            time.sleep(0.1)  # waiting for the process group to exit
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        return True


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


# --------------------------------------------------------------------------- CLI


def default_home() -> Path:
    explicit = os.environ.get("SUPERSET_REAL_HOME")
    return Path(explicit) if explicit else Path(tempfile.gettempdir()) / "atlas-sync-superset"


cli = server_cli(
    module="tests.support.real_superset",
    what="Superset",
    help="Run a real Apache Superset on 127.0.0.1 for tests (PyPI, a venv of its own, no Docker).",
    server=Server,
    default_home=default_home,
    install=lambda log: ensure_installed(default_venv(), log),
    install_help="Install Superset into its venv if missing; prints the superset command.",
    exports=lambda s: {
        "ATLAS_SYNC_TEST_SUPERSET_URL": s.url(),
        "ATLAS_SYNC_TEST_SUPERSET_USERNAME": ADMIN,
        "ATLAS_SYNC_TEST_SUPERSET_PASSWORD_FILE": s.password_file,
    },
    error=SupersetLauncherError,
    default_timeout=DEFAULT_TIMEOUT,
)


def main(argv: list[str] | None = None) -> int:
    return run_cli(cli, "real_superset", argv)


if __name__ == "__main__":
    sys.exit(main())
