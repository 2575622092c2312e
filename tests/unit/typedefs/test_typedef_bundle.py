"""Loading, validation, reference resolution and order of typedef bundles (no server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.typedefs import BundleError, ServerTypes, load_bundle

DATA = Path(__file__).resolve().parents[2] / "data" / "typedefs"


def _problems(exc: BundleError) -> list[str]:
    return [str(p) for p in exc.problems]


def test_builtin_profiles_load_by_name() -> None:
    for profile in ("lineage", "pico"):
        bundle = load_bundle(profile)
        assert len(bundle) > 0
        bundle.resolve(ServerTypes.builtin())  # every reference resolves against Atlas's base model


def test_folder_bundle_loads_all_files_in_name_order() -> None:
    bundle = load_bundle(DATA / "base")
    assert set(bundle.names) == {"t_tier", "t_schedule", "t_dataset", "t_job", "t_job_targets"}
    assert bundle.entries["t_job"].file.endswith("0020-process.json")
    assert bundle.entries["t_job"].path == "$.entityDefs[0]"


def test_order_puts_every_type_after_its_dependencies() -> None:
    bundle = load_bundle(DATA / "base", DATA / "ext")
    order = bundle.order()
    pos = {n: i for i, n in enumerate(order)}
    # Expected dependencies, read off the test files by hand.
    must_precede = [
        ("t_tier", "t_dataset"),  # attribute type
        ("t_schedule", "t_job"),  # struct attribute
        ("t_dataset", "t_job_targets"),  # relationship end
        ("t_job", "t_job_targets"),
        ("t_dataset", "t_table"),  # supertype across bundles
        ("t_schedule", "t_table"),  # inside array<map<..>>
    ]
    for before, after in must_precede:
        assert pos[before] < pos[after], (before, after, order)


def test_mutually_referencing_types_are_allowed_and_kept_together() -> None:
    bundle = load_bundle(DATA / "mutual")
    assert sorted(bundle.order()) == ["t_person", "t_team"]


def test_cross_bundle_reference_fails_without_the_other_bundle() -> None:
    bundle = load_bundle(DATA / "ext")  # offline load lets unknown names through (they may be on the server)
    with pytest.raises(BundleError) as err:
        bundle.resolve(ServerTypes.builtin())
    text = str(err.value)
    assert "t_table" in text and "t_dataset" in text and "0010-ext.json" in text


def test_supertype_cycle_is_an_error_naming_type_and_file() -> None:
    with pytest.raises(BundleError) as err:
        load_bundle(DATA / "bad_cycle")
    e = err.value
    assert "circular supertypes" in e.message
    assert e.file is not None and e.file.endswith("0010-cycle.json")
    assert "t_a" in e.message and "t_b" in e.message and "t_c" in e.message
    assert len(e.problems) == 1  # one cycle, reported once


def test_dangling_reference_names_type_attribute_and_file() -> None:
    bundle = load_bundle(DATA / "bad_dangling")
    with pytest.raises(BundleError) as err:
        bundle.resolve(ServerTypes.builtin())
    e = err.value
    assert "t_orphan" in e.message and "owner_ref" in e.message and "t_no_such_type" in e.message
    assert e.file is not None and e.file.endswith("0010-dangling.json")
    assert e.path == "$.entityDefs[0].attributeDefs[0].typeName"


def test_seed_style_process_subtype_redeclaring_inputs_is_refused() -> None:
    with pytest.raises(BundleError) as err:
        load_bundle(DATA / "bad_redeclare")
    msgs = _problems(err.value)
    assert len(msgs) == 2
    assert any("t_seed_process.inputs" in m and "Process" in m and "ATLAS-400-00-09E" in m for m in msgs)
    assert any("t_seed_process.outputs" in m for m in msgs)


def test_misspelt_key_is_an_error_with_a_did_you_mean_hint() -> None:
    with pytest.raises(BundleError) as err:
        load_bundle(DATA / "bad_unknown_key")
    e = err.value
    assert e.path == "$.entityDefs[0].attributeDefs[0].isOptinal"
    assert e.hint is not None and "isOptional" in e.hint


def test_invalid_type_name_is_refused() -> None:
    with pytest.raises(BundleError) as err:
        load_bundle(DATA / "bad_name")
    assert "ATLAS-400-00-019" in err.value.message
    assert err.value.path == "$.entityDefs[0].name"


def test_composition_child_end_with_set_is_refused() -> None:
    with pytest.raises(BundleError) as err:
        load_bundle(DATA / "bad_relationship")
    assert "ATLAS-400-00-033" in err.value.message
    assert err.value.path == "$.relationshipDefs[0].endDef2.cardinality"


def test_invalid_json_reports_line_and_column() -> None:
    with pytest.raises(InputError) as err:
        load_bundle(DATA / "bad_json")
    assert err.value.line == 4
    assert err.value.file is not None and err.value.file.endswith("0010-broken.json")


def test_type_defined_twice_differently_is_an_error_naming_both_files() -> None:
    with pytest.raises(BundleError) as err:
        load_bundle(DATA / "bad_duplicate")
    text = str(err.value)
    assert "t_dup" in text and "0010-one.json" in text and "0020-two.json" in text


def test_same_type_defined_identically_in_two_bundles_is_accepted(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    doc = {"entityDefs": [{"name": "t_same", "superTypes": ["DataSet"], "attributeDefs": []}]}
    (a / "x.json").write_text(json.dumps(doc))
    (b / "y.json").write_text(json.dumps(doc))
    assert load_bundle(a, b).names == ["t_same"]


def test_unknown_source_says_which_profiles_exist() -> None:
    with pytest.raises(InputError) as err:
        load_bundle("no_such_profile")
    assert err.value.hint is not None and "lineage" in err.value.hint and "pico" in err.value.hint


def test_unknown_top_level_key_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps({"entityDef": []}))
    with pytest.raises(BundleError) as err:
        load_bundle(tmp_path)
    assert err.value.hint is not None and "entityDefs" in err.value.hint


def test_list_cardinality_on_non_array_is_refused(tmp_path: Path) -> None:
    doc = {
        "entityDefs": [
            {
                "name": "t_card",
                "superTypes": ["DataSet"],
                "attributeDefs": [
                    {"name": "x", "typeName": "string", "cardinality": "SET", "isOptional": True}
                ],
            }
        ]
    }
    (tmp_path / "x.json").write_text(json.dumps(doc))
    with pytest.raises(BundleError) as err:
        load_bundle(tmp_path)
    assert "ATLAS-400-00-012" in err.value.message


def test_supertype_of_the_wrong_category_is_refused(tmp_path: Path) -> None:
    doc = {
        "structDefs": [{"name": "t_struct", "attributeDefs": []}],
        "entityDefs": [{"name": "t_ent", "superTypes": ["t_struct"], "attributeDefs": []}],
    }
    (tmp_path / "x.json").write_text(json.dumps(doc))
    with pytest.raises(BundleError) as err:
        load_bundle(tmp_path)
    assert "ATLAS-400-00-003" in err.value.message


def test_reference_to_a_server_type_resolves_against_the_server(tmp_path: Path) -> None:
    doc = {"entityDefs": [{"name": "t_hive_child", "superTypes": ["hive_table"], "attributeDefs": []}]}
    (tmp_path / "x.json").write_text(json.dumps(doc))
    bundle = load_bundle(tmp_path)
    with pytest.raises(BundleError):
        bundle.resolve(ServerTypes.builtin())
    server = ServerTypes(
        {"entityDefs": [{"name": "hive_table", "superTypes": ["DataSet"], "attributeDefs": []}]}
    )
    bundle.resolve(server)  # no error
