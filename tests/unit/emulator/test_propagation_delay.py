"""Emulator.set_propagation_delay: propagation as Atlas 2.4.0's background tasks show it (later), not in
the write (2.1.0); a client that polls sees it arrive, one that reads at once does not."""

from __future__ import annotations

from atlas_sync.emulator import Emulator, emulator_session

BASE = "http://atlas-emulator.invalid/api/atlas/v2"


def _chain(emu: Emulator):
    s = emulator_session(emu)
    s.post(
        f"{BASE}/types/typedefs",
        json={
            "entityDefs": [
                {"name": "d", "superTypes": ["DataSet"]},
                {"name": "p", "superTypes": ["Process"]},
            ],
            "classificationDefs": [{"name": "pii"}],
        },
    ).raise_for_status()

    def e(name: str, type_: str = "d", **attrs):
        return {"typeName": type_, "attributes": {"qualifiedName": name, "name": name, **attrs}}

    r = s.post(f"{BASE}/entity/bulk", json={"entities": [dict(e("a"), guid="-1"), dict(e("b"), guid="-2")]})
    a, b = (r.json()["guidAssignments"][k] for k in ("-1", "-2"))
    ref = lambda n: {"typeName": "d", "uniqueAttributes": {"qualifiedName": n}}  # noqa: E731
    s.post(
        f"{BASE}/entity", json={"entity": e("p1", "p", inputs=[ref("a")], outputs=[ref("b")])}
    ).raise_for_status()
    return s, a, b


def _tags(s, guid: str) -> list[str]:
    return [
        c["entityGuid"]
        for c in s.get(f"{BASE}/entity/guid/{guid}").json()["entity"].get("classifications") or []
    ]


def test_without_a_delay_the_write_itself_propagates() -> None:
    s, a, b = _chain(Emulator())
    s.post(f"{BASE}/entity/guid/{a}/classifications", json=[{"typeName": "pii"}]).raise_for_status()
    assert _tags(s, b) == [a]


def test_a_delayed_propagation_shows_only_once_it_has_run() -> None:
    emu = Emulator()
    s, a, b = _chain(emu)
    emu.set_propagation_delay(60_000)
    s.post(f"{BASE}/entity/guid/{a}/classifications", json=[{"typeName": "pii"}]).raise_for_status()
    assert _tags(s, a) == [a]
    assert _tags(s, b) == []  # not yet: the task has not run
    emu.run_propagation()
    assert _tags(s, b) == [a]


def test_a_delayed_propagation_runs_at_the_first_request_after_its_delay() -> None:
    emu = Emulator()
    s, a, b = _chain(emu)
    emu.set_propagation_delay(1)
    s.post(f"{BASE}/entity/guid/{a}/classifications", json=[{"typeName": "pii"}]).raise_for_status()
    assert emu.state.propagation_due is not None
    emu.state.propagation_due = 0.0  # as if the delay had passed
    assert _tags(s, b) == [a]
