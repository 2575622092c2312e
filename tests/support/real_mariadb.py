"""Start, probe and stop a real MariaDB server (MySQL protocol) on this machine for the tests, without
Docker.

``python -m tests.support.real_mariadb install|start|status|stop|env``

Recipe (see ``docs/database.md``): the server of Debian's ``mariadb-server`` package (installed with
``apt-get`` when missing and this runs as root), a fresh data folder made by ``mariadb-install-db``
in the instance folder on every start, listening on a free port of 127.0.0.1 only, with the
Performance Schema on and its ``events_statements_history_long`` consumer enabled (the reader's
MySQL query-history template reads it). As root the server runs as the ``mysql`` user the package
creates. The account ``atlas@127.0.0.1`` (all privileges) has a random password, written to
``password`` in the instance folder (mode 600) and never put on a command line: the server creates
the account from an init file that is deleted once it is up. Tuned for tests, not for data.

Exit codes as for the other launchers: 0 ok; 1 usage or other error; 3 MariaDB could not be
installed; 4 installed but the server did not come up.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from tests.support.real_atlas import (
    InfrastructureError,
    RealAtlasError,
    StartupError,
    _run,
    find_free_port,
    pid_alive,
    port_in_use,
    read_state,
    run_cli,
    tail,
    write_state,
)
from tests.support.server_cli import server_cli

SUPERUSER = "atlas"
RUN_AS = "mysql"  # the system user Debian's package creates
DEFAULT_TIMEOUT = 60.0
SETTINGS = [
    "--bind-address=127.0.0.1",
    "--skip-name-resolve",
    "--performance-schema=ON",
    "--performance-schema-consumer-events-statements-current=ON",  # history_long is fed through it
    "--performance-schema-consumer-events-statements-history-long=ON",
    "--performance-schema-events-statements-history-long-size=20000",
    "--innodb-buffer-pool-size=32M",
    "--innodb-log-file-size=16M",
    "--innodb-flush-log-at-trx-commit=0",
    "--sync-binlog=0",
    "--skip-log-bin",
    "--max-connections=40",
    "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_general_ci",
]


class MariaDBLauncherError(RealAtlasError):
    """The MariaDB launcher could not do what was asked."""


def find_server() -> tuple[Path, Path] | None:
    """(``mariadbd``, ``mariadb-install-db``) from ``PATH`` or Debian's ``/usr/sbin``, else None."""
    server = shutil.which("mariadbd") or shutil.which("mariadbd", path="/usr/sbin:/usr/libexec")
    install = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
    if server and install:
        return Path(server), Path(install)
    return None


def ensure_server(log: Callable[[str], None]) -> tuple[Path, Path]:
    """The server's binaries, installed from Debian's packages when missing (as root)."""
    found = find_server()
    if found is not None:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise InfrastructureError(
            "MariaDB is not installed", hint="apt-get install mariadb-server (or put mariadbd on PATH)"
        )
    log("installing MariaDB from Debian's packages (apt-get install mariadb-server)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "mariadb-server"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, check=False)
        if proc.returncode != 0:
            raise InfrastructureError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-400:]}")
    found = find_server()
    if found is None:
        raise InfrastructureError("apt-get installed mariadb-server but no mariadbd was found")
    return found


@dataclasses.dataclass
class Server:
    """Start/stop/status of one throwaway server living in ``home``."""

    home: Path
    log: Callable[[str], None] = dataclasses.field(default=lambda msg: click.echo(msg, err=True))

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def state_file(self) -> Path:
        return self.home / "state.json"

    @property
    def log_file(self) -> Path:
        return self.home / "server.log"

    @property
    def pid_file(self) -> Path:
        return self.home / "run" / "mariadbd.pid"

    def _owner(self) -> tuple[int, int] | None:
        if os.geteuid() != 0:
            return None
        try:
            entry = pwd.getpwnam(RUN_AS)
        except KeyError:
            raise InfrastructureError(
                f"running as root and there is no {RUN_AS!r} user to run MariaDB as",
                hint="install Debian's mariadb-server package (it creates the user) or run as another user",
            ) from None
        return entry.pw_uid, entry.pw_gid

    def url(self) -> str | None:
        port = read_state(self.state_file).get("port")
        return f"mysql://{SUPERUSER}@127.0.0.1:{port}/" if port else None

    def _pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return None

    def _ready(self) -> bool:
        try:
            return "ready for connections" in self.log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False

    def running(self) -> bool:
        port = int(read_state(self.state_file).get("port", 0) or 0)
        pid = self._pid()
        return bool(port) and pid is not None and pid_alive(pid) and port_in_use(port)

    def status(self) -> dict[str, Any]:
        info: dict[str, Any] = {"home": str(self.home), "state": "running" if self.running() else "stopped"}
        if info["state"] == "running":
            info["url"] = self.url()
        return info

    def start(self, *, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """Start a fresh server (or find the one running here) and wait until it accepts."""
        if self.running():
            self.log(f"MariaDB is already running at {self.url()}")
            return self.status()
        server, install_db = ensure_server(self.log)
        owner = self._owner()
        self.stop()
        self.home.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.data, ignore_errors=True)
        run_dir = self.home / "run"
        run_dir.mkdir(exist_ok=True)
        password = secrets.token_urlsafe(18)
        self.password_file.write_text(password + "\n", encoding="utf-8")
        self.password_file.chmod(0o600)
        user = ["--user=" + RUN_AS] if owner is not None else []
        if owner is not None:
            for path in (self.home, run_dir):
                os.chown(path, *owner)
            self.home.chmod(0o700)
        _run(
            [
                str(install_db),
                "--no-defaults",
                f"--datadir={self.data}",
                *user,
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
                "--skip-name-resolve",
            ],
            "mariadb-install-db",
            timeout=300,
        )
        # The account is made by the server itself at start-up, from a file only its owner reads.
        init = run_dir / "init.sql"
        init.write_text(
            f"CREATE USER '{SUPERUSER}'@'127.0.0.1' IDENTIFIED BY '{password}';\n"
            f"GRANT ALL PRIVILEGES ON *.* TO '{SUPERUSER}'@'127.0.0.1' WITH GRANT OPTION;\n",
            encoding="utf-8",
        )
        init.chmod(0o600)
        if owner is not None:
            os.chown(init, *owner)
        self.log_file.unlink(missing_ok=True)  # _ready reads this start's lines only
        port = find_free_port()
        write_state(self.state_file, {"port": port})
        cmd = [
            str(server),
            "--no-defaults",
            f"--datadir={self.data}",
            f"--port={port}",
            f"--socket={run_dir / 'mariadbd.sock'}",
            f"--pid-file={self.pid_file}",
            f"--log-error={self.log_file}",
            f"--init-file={init}",
            *user,
            *SETTINGS,
        ]
        t0 = time.monotonic()
        with open(os.devnull, "wb") as devnull:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=devnull, stderr=devnull, start_new_session=True
            )
        try:
            # "ready for connections" is logged once the init file ran (the port opens before).
            while not (port_in_use(port) and self._ready()):
                if proc.poll() is not None or time.monotonic() - t0 > timeout:
                    for line in tail(self.log_file, 30):
                        self.log(line)
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    raise StartupError(f"MariaDB did not start (exit {proc.poll()}); see {self.log_file}")
                time.sleep(0.2)
        finally:
            init.unlink(missing_ok=True)
        self.log(f"MariaDB accepts connections at {self.url()} after {time.monotonic() - t0:.1f} s")
        return self.status()

    def stop(self) -> bool:
        """Stop this home's server (SIGTERM, then SIGKILL after 30 s); False when none ran."""
        pid = self._pid()
        if pid is None or not pid_alive(pid):
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
        return True


# --------------------------------------------------------------------------- CLI


def default_home() -> Path:
    explicit = os.environ.get("MARIADB_REAL_HOME")
    return Path(explicit) if explicit else Path(tempfile.gettempdir()) / "atlas-sync-mariadb"


cli = server_cli(
    module="tests.support.real_mariadb",
    what="MariaDB",
    help="Run a real MariaDB server on 127.0.0.1 for tests (Debian's package, no Docker).",
    server=Server,
    default_home=default_home,
    install=lambda log: ensure_server(log)[0],
    install_help="Install the server from Debian's packages if missing; prints the server binary.",
    exports=lambda s: {
        "ATLAS_SYNC_TEST_MYSQL_URL": s.url(),
        "ATLAS_SYNC_TEST_MYSQL_PASSWORD_FILE": s.password_file,
    },
    error=MariaDBLauncherError,
    default_timeout=DEFAULT_TIMEOUT,
)


def main(argv: list[str] | None = None) -> int:
    return run_cli(cli, "real_mariadb", argv)


if __name__ == "__main__":
    sys.exit(main())
