"""``atlas-sync emulator``: run the embedded Atlas emulator as an HTTP server."""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import threading
from pathlib import Path
from typing import Any

import click

from atlas_sync.cli.common import is_loopback, long_running_process, stderr
from atlas_sync.errors import AtlasSyncError, ConfigError

DEFAULT_DATA_DIR = ".atlas-sync"


@click.group("emulator")
def emulator_group() -> None:
    """The embedded Apache Atlas 2.4 emulator (no Atlas server needed)."""


def _read_password(user: str | None, password_file: str | None) -> dict[str, str]:
    if password_file:
        try:
            password = Path(password_file).read_text(encoding="utf-8").strip("\r\n")
        except OSError as exc:
            raise ConfigError(f"cannot read password file {password_file}: {exc.strerror}") from exc
        if not password:
            raise ConfigError(f"password file {password_file} is empty")
        return {user or "admin": password}
    env = os.environ.get("ATLAS_EMULATOR_PASSWORD")
    if env:
        return {user or "admin": env}
    if user and user != "admin":
        raise ConfigError(
            f"no password for user {user}",
            hint="give --password-file FILE (or set ATLAS_EMULATOR_PASSWORD); passwords are never taken from argv",
        )
    stderr("warning: the emulator accepts the default credentials admin/admin; use --user/--password-file")
    return {"admin": "admin"}


@emulator_group.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default).")
@click.option(
    "--port", default=21000, show_default=True, type=click.IntRange(0, 65535), help="0 = any free port."
)
@click.option(
    "--data",
    "data_dir",
    default=DEFAULT_DATA_DIR,
    show_default=True,
    help="Folder (or .sqlite file) holding the emulator state; it survives restarts.",
)
@click.option("--memory", is_flag=True, help="Keep state in memory only (lost on exit).")
@click.option("--user", default=None, help="User name for HTTP basic auth (default admin).")
@click.option(
    "--password-file", type=click.Path(dir_okay=False), default=None, help="File holding the password."
)
@click.option("--latency-ms", type=float, default=0.0, help="Fixed delay added to every answer.")
@click.option(
    "--latency-per-entity-ms", type=float, default=0.0, help="Extra delay per entity sent or returned."
)
@click.option(
    "--latency-per-kib-ms",
    type=float,
    default=0.0,
    help="Extra delay per KiB of request body (a slow proxy).",
)
@click.option(
    "--fault",
    "faults",
    multiple=True,
    metavar="SPEC",
    help="Inject faults: KIND[,status=N][,at=K|,probability=P][,seed=S][,retry_after=SEC][,method=M][,path=PREFIX]"
    " with KIND one of status, reset, timeout, lost_response. Repeatable.",
)
@click.option(
    "--request-log", type=click.Path(dir_okay=False), default=None, help="Append one JSON line per request."
)
@click.option(
    "--contention-hold-ms",
    type=click.FloatRange(min=0),
    default=None,
    help="Answer an entity write that touches entities of another write in flight with HTTP 500, as a real "
    "Atlas on JanusGraph does on lock timeouts; each write holds its entities this long. Off by default.",
)
def serve_cmd(
    host: str,
    port: int,
    data_dir: str,
    memory: bool,
    user: str | None,
    password_file: str | None,
    latency_ms: float,
    latency_per_entity_ms: float,
    latency_per_kib_ms: float,
    faults: tuple[str, ...],
    request_log: str | None,
    contention_hold_ms: float | None,
) -> None:
    """Serve /api/atlas/... over HTTP, like an Apache Atlas 2.4 server."""
    long_running_process()
    from atlas_sync.emulator import Emulator, parse_fault_spec
    from atlas_sync.emulator.http import serve

    # unexpected failures inside the emulator (its bugs) are logged with the ID the 500 body carries
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    users = _read_password(user, password_file)
    specs = []
    for spec in faults:
        try:
            specs.append(parse_fault_spec(spec))
        except ValueError as exc:
            raise ConfigError(
                str(exc), hint="example: --fault status,status=503,probability=0.1,seed=1"
            ) from exc
    if not is_loopback(host):
        stderr(
            f"WARNING: binding to {host}, which is not a loopback address: anyone who can reach this machine "
            "can use the emulator"
        )
    try:
        emu = Emulator(None if memory else data_dir, users=users)
    except (OSError, sqlite3.Error) as exc:
        raise AtlasSyncError(
            f"cannot open the emulator state in {data_dir}: {exc}",
            hint="use another --data folder, or --memory",
        ) from exc
    emu.set_latency(latency_ms, latency_per_entity_ms, latency_per_kib_ms)
    if contention_hold_ms is not None:
        emu.set_contention(hold_ms=contention_hold_ms)
    for f in specs:
        emu.faults.add(f)
    log_file: Any = None
    if request_log:
        log_file = open(request_log, "a", encoding="utf-8")  # noqa: SIM115 - closed on exit below
        lock = threading.Lock()

        def sink(rec: Any) -> None:
            line = json.dumps(
                {
                    "method": rec.method,
                    "path": rec.path,
                    "status": rec.status,
                    "entities": rec.entity_count,
                    "ms": rec.duration_ms,
                    "fault": rec.fault,
                    "bytes_in": rec.bytes_in,
                    "bytes_out": rec.bytes_out,
                }  # fmt: skip
            )
            with lock:
                log_file.write(line + "\n")
                log_file.flush()

        emu.request_log_sink = sink
    try:
        server = serve(emu, host, port)
    except OSError as exc:
        raise AtlasSyncError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="pick another --port (0 = any free port)",
        ) from exc
    where = "memory" if memory else emu.store.path
    click.echo(f"Atlas emulator listening on {server.url} (state: {where}); Ctrl-C to stop", err=True)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        emu.close()
        if log_file is not None:
            log_file.close()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


COMMANDS = [emulator_group]
