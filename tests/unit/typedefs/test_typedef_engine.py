"""Bootstrap, evolution and teardown of bundles against the embedded emulator (in-process)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.atlas import AtlasClient
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.resources import builtin_dir
from atlas_sync.typedefs import (
    BundleError,
    IncompatibleTypedefsError,
    TypedefsInUseError,
    apply_typedefs,
    delete_typedefs,
    ensure_typedefs,
    load_bundle,
    plan_typedefs,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "typedefs"
WRITES = {"POST", "PUT", "DELETE"}


@pytest.fixture
def emu(emulator: Emulator) -> Emulator:
    return emulator


@pytest.fixture
def client(emu: Emulator) -> Iterator[AtlasClient]:
    yield embedded_client(emulator=emu)


def _typedef_requests(emu: Emulator) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in emu.request_log if "/types/" in r.path]


def _writes(emu: Emulator) -> list[tuple[str, str]]:
    # Search is a POST but reads.
    return [(r.method, r.path) for r in emu.request_log if r.method in WRITES and "/search/" not in r.path]


def _write_bundle(folder: Path, doc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "types.json").write_text(json.dumps(doc))
    return folder


def _ds(*attrs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    d = {"name": "t_evo", "superTypes": ["DataSet"], "attributeDefs": list(attrs)}
    d.update(extra)
    return {"entityDefs": [d]}


NOTE = {"name": "note", "typeName": "string", "isOptional": True}


@pytest.mark.parametrize("sources", [("lineage",), ("pico",), ("lineage", "pico")])
def test_fresh_bootstrap_creates_every_type_in_one_post(
    client: AtlasClient, emu: Emulator, sources: tuple[str, ...]
) -> None:
    bundle = load_bundle(*sources)
    emu.clear_log()
    result = ensure_typedefs(client, bundle)
    assert sorted(result.created) == bundle.names
    requests = _typedef_requests(emu)
    # the bundle's types, one request per serviceType (none there yet); then, as something is to be
    # registered, the Atlas types they refer to, each read once by name; then one POST
    assert requests[-1] == ("POST", "/api/atlas/v2/types/typedefs")
    assert requests[: len(sources)] == [("GET", "/api/atlas/v2/types/typedefs")] * len(sources)
    read = [p.rsplit("/", 1)[1] for m, p in requests[len(sources) : -1]]
    assert sorted(read) == ["Asset", "DataSet", "Process", "Referenceable"]
    for name in bundle.names:
        got = client.get_typedef_by_name(name)
        assert got is not None and got["name"] == name


def test_second_run_reads_the_types_by_service_type_and_writes_nothing(
    client: AtlasClient, emu: Emulator
) -> None:
    bundle = load_bundle("lineage", "pico")
    ensure_typedefs(client, bundle)
    versions = {n: client.get_typedef_by_name(n)["version"] for n in bundle.names}  # type: ignore[index]
    emu.clear_log()
    result = ensure_typedefs(client, bundle)
    assert result.writes == 0 and not result.changed
    # one request per bundle (each its serviceType), nothing of Atlas's own types: all is in place
    assert [(r.method, r.path) for r in emu.request_log] == [("GET", "/api/atlas/v2/types/typedefs")] * 2
    # not Atlas's whole type system (the emulator holds the complete 2.4.0 model set, 445 KiB;
    # the two bundles' own types are ~85 KiB)
    assert sum(r.bytes_out for r in emu.request_log) <= 100 * 1024
    emu.clear_log()
    ensure_typedefs(client, load_bundle("lineage"))
    assert len(emu.request_log) == 1
    assert sum(r.bytes_out for r in emu.request_log) <= 48 * 1024  # (the BI subtypes: ~42 KiB)
    # No PUT happened, so no version was bumped.
    assert {n: client.get_typedef_by_name(n)["version"] for n in bundle.names} == versions  # type: ignore[index]


def test_adding_an_optional_attribute_and_changing_a_description_is_one_put(
    client: AtlasClient, emu: Emulator, tmp_path: Path
) -> None:
    ensure_typedefs(client, load_bundle(_write_bundle(tmp_path / "v1", _ds(NOTE, description="first"))))
    before = client.get_typedef_by_name("t_evo")
    assert before is not None
    extra = {"name": "extra", "typeName": "int", "isOptional": True}
    v2 = load_bundle(_write_bundle(tmp_path / "v2", _ds(NOTE, extra, description="second")))
    plan = plan_typedefs(client, v2)
    (item,) = plan.items
    assert item.action == "update"
    assert set(item.changes) == {'description "first" -> "second"', "add optional attribute extra: int"}
    emu.clear_log()
    result = apply_typedefs(client, plan)
    assert result.updated == ["t_evo"]
    assert _writes(emu) == [("PUT", "/api/atlas/v2/types/typedefs")]
    after = client.get_typedef_by_name("t_evo")
    assert after is not None
    assert after["description"] == "second"
    assert {a["name"] for a in after["attributeDefs"]} == {"note", "extra"}
    assert after["version"] == before["version"] + 1
    emu.clear_log()
    assert ensure_typedefs(client, v2).writes == 0
    assert _writes(emu) == []


@pytest.mark.parametrize(
    ("new_doc", "code"),
    [
        pytest.param(_ds(), "ATLAS-400-00-00D", id="removed-attribute"),
        pytest.param(
            _ds({"name": "note", "typeName": "long", "isOptional": True}), "ATLAS-400-00-029", id="type"
        ),
        pytest.param(_ds(NOTE, {"name": "must", "typeName": "string"}), "ATLAS-400-00-00C", id="mandatory"),
        pytest.param(
            {"entityDefs": [{"name": "t_evo", "superTypes": ["Asset"], "attributeDefs": [NOTE]}]},
            "ATLAS-400-00-00E",
            id="removed-supertype",
        ),
    ],
)
def test_incompatible_change_is_refused_before_any_write(
    client: AtlasClient, emu: Emulator, tmp_path: Path, new_doc: dict[str, Any], code: str
) -> None:
    ensure_typedefs(client, load_bundle(_write_bundle(tmp_path / "v1", _ds(NOTE))))
    # Another new type in the same bundle must not be created either.
    new_doc = {**new_doc, "structDefs": [{"name": "t_new_struct", "attributeDefs": []}]}
    v2 = load_bundle(_write_bundle(tmp_path / "v2", new_doc))
    emu.clear_log()
    with pytest.raises(IncompatibleTypedefsError) as err:
        ensure_typedefs(client, v2)
    assert code in str(err.value)
    assert _writes(emu) == []
    assert client.get_typedef_by_name("t_new_struct") is None


def test_changed_relationship_end_is_refused_before_any_write(
    client: AtlasClient, emu: Emulator, tmp_path: Path
) -> None:
    ensure_typedefs(client, load_bundle("lineage"))
    doc = json.loads((builtin_dir("typedefs") / "lineage" / "0010-lineage_model.json").read_text())
    doc["relationshipDefs"][0]["endDef2"]["name"] = "table"
    bundle = load_bundle(_write_bundle(tmp_path, doc))
    emu.clear_log()
    with pytest.raises(IncompatibleTypedefsError) as err:
        ensure_typedefs(client, bundle)
    assert "lineage_dataset_columns" in str(err.value)
    assert _writes(emu) == []


def test_cross_bundle_dependencies_go_in_one_post(client: AtlasClient, emu: Emulator) -> None:
    emu.clear_log()
    result = ensure_typedefs(client, load_bundle(DATA / "ext", DATA / "base"))
    assert "t_table" in result.created and "t_dataset" in result.created
    assert len([w for w in _writes(emu) if w[0] == "POST"]) == 1


def test_dependent_bundle_applies_later_against_types_on_the_server(client: AtlasClient) -> None:
    ensure_typedefs(client, load_bundle(DATA / "base"))
    result = ensure_typedefs(client, load_bundle(DATA / "ext"))
    assert result.created == ["t_table"]


def test_dangling_reference_is_refused_with_only_the_read_request(client: AtlasClient, emu: Emulator) -> None:
    emu.clear_log()
    with pytest.raises(BundleError) as err:
        ensure_typedefs(client, load_bundle(DATA / "ext"))
    assert "t_dataset" in str(err.value)
    assert _writes(emu) == []


def test_cycle_is_refused_before_any_request(emu: Emulator) -> None:
    emu.clear_log()
    with pytest.raises(BundleError):
        load_bundle(DATA / "bad_cycle")
    assert emu.request_log == []


def test_racing_writer_409_is_replanned_not_a_failure(client: AtlasClient, emu: Emulator) -> None:
    bundle = load_bundle(DATA / "base")
    plan = plan_typedefs(client, bundle)  # both writers see an empty server
    other = embedded_client(emulator=emu)
    ensure_typedefs(other, load_bundle(DATA / "base"))  # the other writer wins the race
    result = apply_typedefs(client, plan)
    assert result.replans == 1
    assert result.created == [] and sorted(result.unchanged) == bundle.names


def test_racing_writer_with_part_of_the_types_then_create_the_rest(client: AtlasClient) -> None:
    bundle = load_bundle(DATA / "base", DATA / "ext")
    plan = plan_typedefs(client, bundle)
    ensure_typedefs(embedded_client(emulator=client.emulator), load_bundle(DATA / "base"))
    result = apply_typedefs(client, plan)
    assert result.replans == 1 and result.created == ["t_table"]


def _entity(type_name: str, qn: str, guid: str) -> dict[str, Any]:
    return {
        "typeName": type_name,
        "guid": guid,
        "attributes": {"qualifiedName": qn, "name": qn.split("@")[0]},
    }


def test_teardown_without_instances_deletes_everything_in_one_request(
    client: AtlasClient, emu: Emulator
) -> None:
    bundle = load_bundle("lineage")
    ensure_typedefs(client, bundle)
    emu.clear_log()
    result = delete_typedefs(client, bundle)
    assert sorted(result.deleted) == bundle.names
    assert _writes(emu) == [("DELETE", "/api/atlas/v2/types/typedefs")]
    for name in bundle.names:
        assert client.get_typedef_by_name(name) is None
    # Deleting again is a no-op.
    emu.clear_log()
    again = delete_typedefs(client, bundle)
    assert again.deleted == [] and sorted(again.absent) == bundle.names
    assert _writes(emu) == []


def test_teardown_refuses_while_instances_exist_and_says_how_many(client: AtlasClient, emu: Emulator) -> None:
    bundle = load_bundle("pico")
    ensure_typedefs(client, bundle)
    client.upsert_entities(
        [
            _entity("pico_spark_data_type", "a@demo", "-1"),
            _entity("pico_spark_data_type", "b@demo", "-2"),
            _entity("pico_spark_filter_type", "f@other", "-3"),
        ]
    )
    emu.clear_log()
    with pytest.raises(TypedefsInUseError) as err:
        delete_typedefs(client, bundle)
    text = str(err.value)
    assert "3 entities" in text
    assert "pico_spark_data_type: 2 in domain demo" in text
    assert "pico_spark_filter_type: 1 in domain other" in text
    assert _writes(emu) == []


def test_soft_deleted_instances_still_block_teardown(client: AtlasClient) -> None:
    bundle = load_bundle("pico")
    ensure_typedefs(client, bundle)
    res = client.upsert_entities([_entity("pico_spark_data_type", "a@demo", "-1")])
    client.delete_entities(list(res.guid_assignments.values()))
    with pytest.raises(TypedefsInUseError) as err:
        delete_typedefs(client, bundle)
    assert "1 entity still uses them" in str(err.value)


def test_teardown_with_entities_deletes_and_purges_them_first(client: AtlasClient) -> None:
    bundle = load_bundle("pico")
    ensure_typedefs(client, bundle)
    res = client.upsert_entities(
        [_entity("pico_spark_data_type", "a@demo", "-1"), _entity("pico_spark_project_type", "p@demo", "-2")]
    )
    guids = list(res.guid_assignments.values())
    result = delete_typedefs(client, bundle, with_entities=True)
    assert result.entities_purged == 2
    assert sorted(result.deleted) == bundle.names
    assert all(client.get_entity(g) is None for g in guids)
    # Bootstrap again from scratch works.
    assert sorted(ensure_typedefs(client, bundle).created) == bundle.names


def test_teardown_refuses_when_a_type_outside_the_bundle_depends_on_it(client: AtlasClient) -> None:
    ensure_typedefs(client, load_bundle(DATA / "base", DATA / "ext"))
    with pytest.raises(TypedefsInUseError) as err:
        delete_typedefs(client, load_bundle(DATA / "base"))
    assert "t_table" in str(err.value) and "subtype" in str(err.value)
    assert client.get_typedef_by_name("t_dataset") is not None


@pytest.mark.parametrize("folder", ["base", "mutual"])
def test_enums_structs_relationships_and_mutual_references_round_trip_unchanged(
    client: AtlasClient, emu: Emulator, folder: str
) -> None:
    bundle = load_bundle(DATA / folder)
    ensure_typedefs(client, bundle)
    emu.clear_log()
    plan = plan_typedefs(client, bundle)
    assert not plan.has_changes, plan.render()
    assert _writes(emu) == []


def test_update_that_uses_a_new_type_runs_after_its_creation(
    client: AtlasClient, emu: Emulator, tmp_path: Path
) -> None:
    ensure_typedefs(client, load_bundle(_write_bundle(tmp_path / "v1", _ds(NOTE))))
    v2_doc = _ds(NOTE, {"name": "window", "typeName": "t_window", "isOptional": True})
    v2_doc["structDefs"] = [{"name": "t_window", "attributeDefs": [{"name": "start", "typeName": "date"}]}]
    v2 = load_bundle(_write_bundle(tmp_path / "v2", v2_doc))
    emu.clear_log()
    result = ensure_typedefs(client, v2)
    assert result.created == ["t_window"] and result.updated == ["t_evo"]
    assert _writes(emu) == [
        ("POST", "/api/atlas/v2/types/typedefs"),
        ("PUT", "/api/atlas/v2/types/typedefs"),
    ]
    got = client.get_typedef_by_name("t_evo")
    assert got is not None
    assert {a["name"]: a["typeName"] for a in got["attributeDefs"]}["window"] == "t_window"


def test_lost_post_response_still_ends_with_every_type_registered(client: AtlasClient, emu: Emulator) -> None:
    # The POST is applied but its answer is lost; the client retries and meets "already exists".
    bundle = load_bundle("lineage")
    emu.inject_fault("lost_response", at=1, method="POST", path_prefix="/api/atlas/v2/types/typedefs")
    result = ensure_typedefs(client, bundle)
    assert sorted(result.created + result.unchanged) == bundle.names
    emu.clear_faults()
    emu.clear_log()
    assert ensure_typedefs(client, bundle).writes == 0
    assert _writes(emu) == []
