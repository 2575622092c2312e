"""Start, probe and stop a real PostgreSQL server on this machine for the tests, without Docker.

``python -m tests.support.real_postgres install|start|status|stop|env``

Recipe (see ``docs/database.md``): the server of Debian's ``postgresql`` package (installed with
``apt-get`` when missing and this runs as root), a fresh cluster made by ``initdb`` in the instance
folder on every start, listening on a free port of 127.0.0.1 only, with ``pg_stat_statements``
preloaded. PostgreSQL refuses to run as root: as root the server runs as the ``postgres`` user the
package creates (``runuser``), and the instance folder is that user's. The superuser ``atlas`` has a
random password, written to ``password`` in the instance folder (mode 600) and never put on a command
line. Tuned for tests, not for data (``fsync=off``): a test cluster keeps nothing.

Exit codes as for the other launchers: 0 ok; 1 usage or other error; 3 PostgreSQL could not be
installed; 4 installed but the server did not come up.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import secrets
import shutil
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
    port_in_use,
    read_state,
    run_cli,
    tail,
    write_state,
)
from tests.support.server_cli import server_cli

SUPERUSER = "atlas"
RUN_AS = "postgres"  # the system user Debian's package creates
DEFAULT_TIMEOUT = 60.0
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "shared_preload_libraries": "'pg_stat_statements'",
    "pg_stat_statements.track": "top",  # statements as clients sent them (the default)
    "pg_stat_statements.max": "20000",  # the 10,000-statement history benchmark fits
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "40",
    "shared_buffers": "32MB",
    "log_min_messages": "warning",
}


class PostgresLauncherError(RealAtlasError):
    """The PostgreSQL launcher could not do what was asked."""


def find_bindir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb`` (Debian's layout), else
    the folder of ``pg_ctl`` on ``PATH``, else None."""
    base = Path("/usr/lib/postgresql")
    versions = sorted(
        (p for p in base.glob("*/bin") if (p / "initdb").is_file() and p.parent.name.split(".")[0].isdigit()),
        key=lambda p: int(p.parent.name.split(".")[0]),
    )
    if versions:
        return versions[-1]
    on_path = shutil.which("pg_ctl")
    return Path(on_path).resolve().parent if on_path and (Path(on_path).parent / "initdb").exists() else None


def ensure_server(log: Callable[[str], None]) -> Path:
    """The server's binaries, installed from Debian's packages when missing (as root)."""
    found = find_bindir()
    if found is not None:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise InfrastructureError(
            "PostgreSQL is not installed", hint="apt-get install postgresql (or put pg_ctl on PATH)"
        )
    log("installing PostgreSQL from Debian's packages (apt-get install postgresql)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "postgresql"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, check=False)
        if proc.returncode != 0:
            raise InfrastructureError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-400:]}")
    found = find_bindir()
    if found is None:
        raise InfrastructureError("apt-get installed postgresql but no initdb was found")
    return found


def server_settings(port: int, socket_dir: Path) -> str:
    """The lines appended to the cluster's postgresql.conf."""
    lines = [f"{k} = {v}" for k, v in SETTINGS.items()]
    lines += [f"port = {port}", f"unix_socket_directories = '{socket_dir}'"]
    return "\n".join(lines) + "\n"


@dataclasses.dataclass
class Server:
    """Start/stop/status of one throwaway cluster living in ``home``."""

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

    def _as_owner(self, cmd: list[str]) -> list[str]:
        """Run as the cluster's owner: ``postgres`` when we are root (the server refuses root)."""
        if os.geteuid() != 0:
            return cmd
        runuser = shutil.which("runuser")
        if runuser is None:
            raise InfrastructureError("running as root and runuser is missing: cannot start PostgreSQL")
        return [runuser, "-u", RUN_AS, "--", *cmd]

    def _owner(self) -> tuple[int, int] | None:
        if os.geteuid() != 0:
            return None
        try:
            entry = pwd.getpwnam(RUN_AS)
        except KeyError:
            raise InfrastructureError(
                f"running as root and there is no {RUN_AS!r} user to run PostgreSQL as",
                hint="install Debian's postgresql package (it creates the user) or run as another user",
            ) from None
        return entry.pw_uid, entry.pw_gid

    def url(self) -> str | None:
        state = read_state(self.state_file)
        port = state.get("port")
        return f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres" if port else None

    def running(self) -> bool:
        state = read_state(self.state_file)
        port = int(state.get("port", 0) or 0)
        return bool(port) and port_in_use(port) and (self.data / "postmaster.pid").exists()

    def status(self) -> dict[str, Any]:
        info: dict[str, Any] = {"home": str(self.home), "state": "running" if self.running() else "stopped"}
        if info["state"] == "running":
            info["url"] = self.url()
        return info

    def start(self, *, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """Start a fresh cluster (or find the one running here) and wait until it accepts."""
        if self.running():
            self.log(f"PostgreSQL is already running at {self.url()}")
            return self.status()
        bindir = ensure_server(self.log)
        owner = self._owner()
        self.stop()
        self.home.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.data, ignore_errors=True)
        password = secrets.token_urlsafe(18)
        self.password_file.write_text(password + "\n", encoding="utf-8")
        self.password_file.chmod(0o600)
        socket_dir = self.home / "run"
        socket_dir.mkdir(exist_ok=True)
        # initdb reads the password from a file the owner can read; it is removed right after.
        with tempfile.NamedTemporaryFile("w", dir=self.home, delete=False, prefix=".pw-") as pw:
            pw.write(password + "\n")
        pwfile = Path(pw.name)
        if owner is not None:
            for path in (self.home, socket_dir, pwfile):
                os.chown(path, *owner)
            self.home.chmod(0o700)
        try:
            _run(
                self._as_owner(
                    [
                        str(bindir / "initdb"),
                        "-D",
                        str(self.data),
                        "-U",
                        SUPERUSER,
                        f"--pwfile={pwfile}",
                        "--auth-host=scram-sha-256",
                        "--auth-local=scram-sha-256",
                        "-E",
                        "UTF8",
                        "--no-sync",
                    ]
                ),
                "initdb",
                timeout=300,
            )
        finally:
            pwfile.unlink(missing_ok=True)
        port = find_free_port()
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(server_settings(port, socket_dir))
        write_state(self.state_file, {"port": port, "bindir": str(bindir)})
        t0 = time.monotonic()
        cmd = [str(bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log_file), "-w"]
        cmd += ["-t", str(int(timeout)), "start"]
        if owner is not None and not self.log_file.exists():
            self.log_file.touch()
            os.chown(self.log_file, *owner)
        try:
            _run(self._as_owner(cmd), "pg_ctl start", timeout=timeout + 30)
        except InfrastructureError as exc:
            for line in tail(self.log_file, 30):
                self.log(line)
            raise StartupError(f"PostgreSQL did not start: {exc.message}") from None
        self.log(
            f"PostgreSQL ({bindir.parent.name}) accepts connections at {self.url()} after "
            f"{time.monotonic() - t0:.1f} s"
        )
        return self.status()

    def stop(self) -> bool:
        """Stop this home's cluster (``pg_ctl stop -m fast``); False when none ran."""
        state = read_state(self.state_file)
        if not (self.data / "postmaster.pid").exists():
            return False
        bindir = Path(str(state.get("bindir") or find_bindir() or ""))
        with contextlib.suppress(InfrastructureError):
            _run(
                self._as_owner([str(bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]),
                "pg_ctl stop",
                timeout=60,
            )
        return True


# --------------------------------------------------------------------------- CLI


def default_home() -> Path:
    explicit = os.environ.get("POSTGRES_REAL_HOME")
    return Path(explicit) if explicit else Path(tempfile.gettempdir()) / "atlas-sync-postgres"


cli = server_cli(
    module="tests.support.real_postgres",
    what="PostgreSQL",
    help="Run a real PostgreSQL server on 127.0.0.1 for tests (Debian's package, no Docker).",
    server=Server,
    default_home=default_home,
    install=ensure_server,
    install_help="Install the server from Debian's packages if missing; prints its binaries' folder.",
    exports=lambda s: {
        "ATLAS_SYNC_TEST_PG_URL": s.url(),
        "ATLAS_SYNC_TEST_PG_PASSWORD_FILE": s.password_file,
    },
    error=PostgresLauncherError,
    default_timeout=DEFAULT_TIMEOUT,
)


def main(argv: list[str] | None = None) -> int:
    return run_cli(cli, "real_postgres", argv)


if __name__ == "__main__":
    sys.exit(main())
