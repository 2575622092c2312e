"""State in a SQLite file survives a restart; every request is one transaction."""

from __future__ import annotations

from pathlib import Path

from atlas_sync.emulator import Emulator

from .helpers import call, dataset


def _types(emu: Emulator) -> None:
    status, body = call(
        emu, "POST", "/v2/types/typedefs", {"entityDefs": [{"name": "u_ds", "superTypes": ["DataSet"]}]}
    )
    assert status == 200, body


def test_entities_typedefs_and_deletes_survive_restart(tmp_path: Path) -> None:
    emu = Emulator(tmp_path / "data")
    _types(emu)
    status, body = call(
        emu, "POST", "/v2/entity/bulk", {"entities": [dataset("a", "-1"), dataset("b", "-2")]}
    )
    assert status == 200
    guid_a, guid_b = body["guidAssignments"]["-1"], body["guidAssignments"]["-2"]
    assert call(emu, "DELETE", f"/v2/entity/guid/{guid_b}")[0] == 200
    emu.close()

    again = Emulator(tmp_path / "data")
    status, typedef = call(again, "GET", "/v2/types/typedef/name/u_ds")
    assert status == 200 and typedef["superTypes"] == ["DataSet"]
    status, got = call(again, "GET", f"/v2/entity/guid/{guid_a}")
    assert status == 200 and got["entity"]["attributes"]["qualifiedName"] == "a@unit"
    assert call(again, "GET", f"/v2/entity/guid/{guid_b}")[1]["entity"]["status"] == "DELETED"
    # built-in types are loaded once, not duplicated on restart
    status, headers = call(again, "GET", "/v2/types/typedefs/headers")
    names = [h["name"] for h in headers]
    assert len(names) == len(set(names)) and "Process" in names
    again.close()


def test_data_path_may_name_a_sqlite_file(tmp_path: Path) -> None:
    emu = Emulator(tmp_path / "state.sqlite")
    _types(emu)
    emu.close()
    assert (tmp_path / "state.sqlite").is_file()
    again = Emulator(tmp_path / "state.sqlite")
    assert call(again, "GET", "/v2/types/typedef/name/u_ds")[0] == 200
    again.close()


def test_failed_bulk_request_writes_nothing(tmp_path: Path) -> None:
    emu = Emulator(tmp_path)
    _types(emu)
    bad = dataset("no-name", "-2")
    del bad["attributes"]["name"]  # mandatory: the whole request must fail
    status, body = call(emu, "POST", "/v2/entity/bulk", {"entities": [dataset("ok", "-1"), bad]})
    assert status == 404 and body["errorCode"] == "ATLAS-404-00-007"
    status, _ = call(emu, "GET", "/v2/entity/uniqueAttribute/type/u_ds", **{"attr:qualifiedName": "ok@unit"})
    assert status == 404
    emu.close()


def test_failed_typedef_request_keeps_registry_unchanged(emulator: Emulator) -> None:
    _types(emulator)
    status, _ = call(
        emulator,
        "POST",
        "/v2/types/typedefs",
        {"entityDefs": [{"name": "u_new"}, {"name": "u_ds", "superTypes": []}]},
    )
    assert status == 409
    assert call(emulator, "GET", "/v2/types/typedef/name/u_new")[0] == 404
    # the in-memory registry was not left with the half-applied batch either
    status, _ = call(emulator, "POST", "/v2/types/typedefs", {"entityDefs": [{"name": "u_new"}]})
    assert status == 200


def test_two_emulators_on_one_file_see_each_others_writes(tmp_path: Path) -> None:
    # e.g. `atlas-sync emulator serve --data X` and an embedded client on the same folder
    first, second = Emulator(tmp_path), Emulator(tmp_path)
    _types(first)
    status, body = call(second, "POST", "/v2/entity/bulk", {"entities": [dataset("shared", "-1")]})
    assert status == 200, body
    guid = body["guidAssignments"]["-1"]
    assert call(first, "GET", f"/v2/entity/guid/{guid}")[0] == 200
    first.close()
    second.close()
