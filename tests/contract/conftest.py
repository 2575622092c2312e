"""Target selection for the Atlas REST contract suite.

* default: the in-process emulator (a ``requests.Session`` with ``EmulatorAdapter`` mounted on an in-memory
  ``Emulator``, base URL ``http://atlas-emulator.invalid/api/atlas``);
* ``CONTRACT_TARGET=http``: the emulator served over real HTTP on a free loopback port;
* ``ATLAS_URL`` (+ ``ATLAS_USERNAME``, ``ATLAS_PASSWORD``): any real Apache Atlas, unchanged.

``CONTRACT_DB=<file>`` makes either emulator target keep its state in that SQLite file instead of in memory.

The target is printed in the pytest header and in the terminal summary.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import requests
from contract_helpers import (
    CT_DS2,
    CT_INF,
    CT_MIXIN,
    CT_PROC,
    CT_STRUCT,
    RUN,
    Api,
    Target,
    ct_ds_def,
    entity_def,
    expect_ok,
    struct_def,
    typedefs,
)
from older_servers import NOT_SENT_TO_2_1_0, OBSERVED_ON_2_1_0, known_difference, must_not_send, parse_version

EMULATOR_BASE = "http://atlas-emulator.invalid"

_used_target: list[str] = []
_cleanup_problems: list[str] = []


def _describe_env() -> str:
    url = os.environ.get("ATLAS_URL")
    if url:
        return f"real Atlas at {url} (ATLAS_URL)"
    where = f", state in {os.environ['CONTRACT_DB']}" if os.environ.get("CONTRACT_DB") else ""
    if os.environ.get("CONTRACT_TARGET", "").lower() == "http":
        return f"atlas-sync emulator over HTTP on 127.0.0.1 (CONTRACT_TARGET=http){where}"
    return f"atlas-sync emulator in-process (EmulatorAdapter){where}"


def _normalise_base(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/api/atlas") else url + "/api/atlas"


def _build_target() -> Target:
    url = os.environ.get("ATLAS_URL")
    if url:
        user = os.environ.get("ATLAS_USERNAME", "admin")
        password = os.environ.get("ATLAS_PASSWORD")
        if password is None and os.environ.get("ATLAS_PASSWORD_FILE"):
            with open(os.environ["ATLAS_PASSWORD_FILE"], encoding="utf-8") as fh:
                password = fh.read().strip()
        return Target(
            kind="atlas",
            base_url=_normalise_base(url),
            description=f"real Atlas at {url}",
            username=user,
            password=password if password is not None else "admin",
            make_session=requests.Session,
        )

    from atlas_sync.emulator import Emulator  # imported lazily: the suite can target a real Atlas without it

    # CONTRACT_DB=<file> runs the emulator on a SQLite file instead of in memory (persistence code paths)
    db = os.environ.get("CONTRACT_DB") or None
    emu = Emulator(db)
    where = f", state in {db}" if db else ""
    if os.environ.get("CONTRACT_TARGET", "").lower() == "http":
        from atlas_sync.emulator import serve

        server = serve(emu, host="127.0.0.1", port=0)
        return Target(
            kind="emulator-http",
            base_url=server.url.rstrip("/") + "/api/atlas",
            description=f"atlas-sync emulator over HTTP at {server.url}{where}",
            username="admin",
            password="admin",
            make_session=requests.Session,
            close=server.shutdown,
        )

    from atlas_sync.emulator import EmulatorAdapter

    adapter = EmulatorAdapter(emu)

    def make_session() -> requests.Session:
        s = requests.Session()
        s.mount(EMULATOR_BASE, adapter)
        return s

    return Target(
        kind="emulator",
        base_url=EMULATOR_BASE + "/api/atlas",
        description=f"atlas-sync emulator in-process (EmulatorAdapter){where}",
        username="admin",
        password="admin",
        make_session=make_session,
    )


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"atlas contract target: {_describe_env()}; run id {RUN}"]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _used_target:
        line = f"contract target: {_used_target[0]} (run id {RUN})"
    elif _ran_contract_tests(terminalreporter):
        # under pytest-xdist the targets live in the workers; they derive theirs from the same environment
        line = f"contract target: {_describe_env()} (one per xdist worker)"
    else:
        return
    terminalreporter.write_sep("-", "atlas contract suite")
    terminalreporter.write_line(line)
    for p in _cleanup_problems:
        terminalreporter.write_line(f"cleanup: {p}")


def _ran_contract_tests(terminalreporter: pytest.TerminalReporter) -> bool:
    for reports in terminalreporter.stats.values():
        for rep in reports:
            if "contract" in (getattr(rep, "keywords", None) or {}):
                return True
    return False


SHARED_TYPES = typedefs(
    structDefs=[struct_def(CT_STRUCT)],
    entityDefs=[
        ct_ds_def(),
        entity_def(CT_DS2, ["DataSet"]),
        entity_def(CT_PROC, ["Process"]),
        entity_def(CT_INF, ["Infrastructure"]),
        entity_def(CT_MIXIN, []),
    ],
)


@pytest.fixture(scope="session")
def target() -> Iterator[Target]:
    t = _build_target()
    _used_target.append(t.description)
    try:
        yield t
    finally:
        t.close()


@pytest.fixture(scope="session")
def shared_types_response(target: Target) -> Iterator[dict]:
    """Creates the checklist's shared types (ct_ds, ct_ds2, ct_proc, ct_inf, ct_mixin, ct_struct) once."""
    api = Api(target)
    body = expect_ok(api.post("/v2/types/typedefs", SHARED_TYPES))
    yield body
    _cleanup_problems.extend(api.cleanup())


@pytest.fixture(scope="session")
def _session_api(target: Target, shared_types_response: dict) -> Iterator[Api]:
    api = Api(target)
    yield api
    _cleanup_problems.extend(api.cleanup())


@pytest.fixture(scope="session")
def server_version(target: Target) -> tuple[int, ...] | None:
    """The target's ``/admin/version`` as a tuple (the emulator reports the release it emulates)."""
    api = Api(target)
    r = api.get("/admin/version")
    return parse_version(str(r.json().get("Version", ""))) if r.ok else None


@pytest.fixture(autouse=True)
def _older_server_differences(request: pytest.FixtureRequest) -> None:
    """Against an Atlas older than 2.4.0, rows observed to differ there are expected failures (older_servers.py)."""
    node = request.node
    name, function = node.name, getattr(node, "originalname", node.name)
    if name not in OBSERVED_ON_2_1_0 and function not in OBSERVED_ON_2_1_0 and name not in NOT_SENT_TO_2_1_0:
        return  # no server needed for this decision
    version = request.getfixturevalue("server_version")
    harmful = must_not_send(name, version)
    if harmful:
        pytest.skip(f"not sent to Atlas {'.'.join(map(str, version or ()))}: {harmful}")
    reason = known_difference(name, function, version)
    if reason:
        shown = ".".join(map(str, version or ()))
        node.add_marker(pytest.mark.xfail(reason=f"Atlas {shown} predates the checklist's 2.4.0: {reason}"))


@pytest.fixture
def api(_session_api: Api) -> Api:
    """Authenticated raw HTTP access to the contract target (shared types already exist)."""
    return _session_api
