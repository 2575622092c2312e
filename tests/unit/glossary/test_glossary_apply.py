"""``atlas-sync glossary`` plan/apply/teardown against the emulator: idempotency, renames, ownership.

Expected counts are read off tests/data/glossary/bootstrap.toml by hand: 3 glossaries, 7 categories,
40 terms (50 objects)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.atlas.client import AtlasClient
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.glossary import (
    GlossaryConflictError,
    GlossaryInUseError,
    apply_glossary,
    load_glossary_file,
    plan_glossary,
    teardown_glossary,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "glossary"
BOOTSTRAP = DATA / "bootstrap.toml"


@pytest.fixture
def emu() -> Iterator[Emulator]:
    e = Emulator(None)
    yield e
    e.close()


@pytest.fixture
def client(emu: Emulator) -> AtlasClient:
    return embedded_client(emulator=emu)


def writes(emu: Emulator) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in emu.request_log if r.method != "GET"]


def apply(client: AtlasClient, path: Path, **kw: Any) -> Any:
    return apply_glossary(client, plan_glossary(client, load_glossary_file(path), **kw))


def rest(client: AtlasClient, path: str) -> Any:
    return client._call("test", "GET", path)


def glossary_named(client: AtlasClient, name: str) -> dict[str, Any]:
    [g] = [g for g in rest(client, "/v2/glossary?limit=-1") if g["name"] == name]
    return g


def term(client: AtlasClient, qualified_name: str) -> dict[str, Any]:
    found = client.get_entity_by_unique("AtlasGlossaryTerm", qualified_name)
    assert found is not None, qualified_name
    return rest(client, f"/v2/glossary/term/{found['guid']}")


def related(t: dict[str, Any], field: str) -> set[str]:
    return {h["displayText"] for h in t.get(field) or []}


def edited(tmp_path: Path, *replacements: tuple[str, str], source: Path = BOOTSTRAP) -> Path:
    text = source.read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    out = tmp_path / source.name  # same file name: the owner stays "bootstrap-test" anyway
    out.write_text(text, encoding="utf-8")
    return out


def test_second_apply_of_three_glossaries_and_forty_terms_writes_nothing(
    client: AtlasClient, emu: Emulator
) -> None:
    first = apply(client, BOOTSTRAP)
    assert first.summary() == "50 created, 0 updated, 0 unchanged"
    assert first.writes == len(writes(emu)) > 0
    emu.clear_log()
    second = apply(client, BOOTSTRAP)
    assert second.summary() == "0 created, 0 updated, 50 unchanged"
    assert writes(emu) == []
    # one list of glossaries, then the terms and the categories of each of the three
    assert len(emu.request_log) == 7


def test_apply_creates_what_the_file_states(client: AtlasClient) -> None:
    apply(client, BOOTSTRAP)
    customer = term(client, "Customer@Customer")
    assert related(customer, "synonyms") == {"Client"}
    assert related(customer, "seeAlso") == {"Account", "Prospect", "Invoice"}
    assert related(term(client, "Client@Customer"), "synonyms") == {"Customer"}
    assert related(term(client, "Fax Number@Customer"), "replacedBy") == {"Email Address"}
    assert related(term(client, "Email Address@Customer"), "replacementTerms") == {"Fax Number"}
    assert related(term(client, "Legacy Code@Product"), "replacedBy") == {"SKU"}
    dob = term(client, "Date of Birth@Customer")
    assert dob["additionalAttributes"]["pii"] == "yes"
    assert dob["additionalAttributes"]["atlas-sync.owner"] == "bootstrap-test"
    assert {c["displayText"] for c in dob["categories"]} == {"Identity"}
    email = term(client, "Email Address@Customer")
    assert (email["abbreviation"], email["examples"]) == ("email", ["jane@example.com"])
    finance = glossary_named(client, "Finance")
    parents = {c["displayText"]: c.get("parentCategoryGuid") for c in finance["categories"]}
    guid_of = {c["displayText"]: c["categoryGuid"] for c in finance["categories"]}
    assert parents == {"Accounting": None, "Ledger": guid_of["Accounting"], "Entries": guid_of["Ledger"]}
    entries = rest(client, f"/v2/glossary/category/{guid_of['Entries']}")
    assert entries["qualifiedName"] == "Entries.Ledger.Accounting@Finance"
    assert {t["displayText"] for t in entries["terms"]} == {"Journal Entry", "Debit", "Credit"}


def test_plan_shows_a_renamed_term_as_an_update_and_apply_keeps_its_guid_and_links(
    client: AtlasClient, emu: Emulator, tmp_path: Path
) -> None:
    apply(client, BOOTSTRAP)
    before = term(client, "Customer@Customer")
    renamed = edited(
        tmp_path,
        ('id = "customer"\nname = "Customer"', 'id = "customer"\nname = "Buyer"'),
        ('see_also = ["Customer"]', 'see_also = ["Buyer"]'),
        ('"Customer@Customer"', '"Buyer@Customer"'),
    )
    plan = plan_glossary(client, load_glossary_file(renamed))
    changed = [c.render() for c in plan.changes if c.op != "="]
    assert changed == ["~ term Customer/Buyer: renamed 'Customer' -> 'Buyer'"]
    emu.clear_log()
    result = apply_glossary(client, plan)
    assert result.summary() == "0 created, 1 updated, 49 unchanged"
    assert writes(emu) == [("PUT", f"/api/atlas/v2/glossary/term/{before['guid']}")]
    after = term(client, "Buyer@Customer")
    assert after["guid"] == before["guid"]
    assert related(after, "synonyms") == {"Client"}
    assert related(after, "seeAlso") == {"Account", "Prospect", "Invoice"}
    emu.clear_log()
    assert apply(client, renamed).summary() == "0 created, 0 updated, 50 unchanged"
    assert writes(emu) == []


def test_a_changed_relation_is_written_from_one_side_only(
    client: AtlasClient, emu: Emulator, tmp_path: Path
) -> None:
    apply(client, BOOTSTRAP)
    changed = edited(tmp_path, ('name = "Turnover"\n', 'name = "Turnover"\nsynonyms = ["Margin"]\n'))
    plan = plan_glossary(client, load_glossary_file(changed))
    assert {c.label: c.details for c in plan.changes if c.op == "~"} == {
        "Finance/Turnover": ["synonyms"],
        "Finance/Margin": ["synonyms"],
    }
    emu.clear_log()
    apply_glossary(client, plan)
    assert len(writes(emu)) == 1
    assert related(term(client, "Margin@Finance"), "synonyms") == {"Turnover"}
    assert related(term(client, "Turnover@Finance"), "synonyms") == {"Revenue", "Margin"}


def test_category_moved_to_another_parent_is_an_update(client: AtlasClient, tmp_path: Path) -> None:
    apply(client, BOOTSTRAP)
    moved = edited(
        tmp_path, ('name = "Digital"\nparent = "Contact"', 'name = "Digital"\nparent = "Identity"')
    )
    plan = plan_glossary(client, load_glossary_file(moved))
    assert [c.render() for c in plan.changes if c.op != "="] == ["~ category Customer/Digital: parent"]
    apply_glossary(client, plan)
    g = glossary_named(client, "Customer")
    guid_of = {c["displayText"]: c["categoryGuid"] for c in g["categories"]}
    assert {c["displayText"]: c.get("parentCategoryGuid") for c in g["categories"]}["Digital"] == guid_of[
        "Identity"
    ]
    assert plan_glossary(client, load_glossary_file(moved)).has_changes is False


def test_removed_term_is_deleted_but_not_while_assigned_unless_forced(
    client: AtlasClient, emu: Emulator, tmp_path: Path
) -> None:
    apply(client, BOOTSTRAP)
    client.create_typedefs(
        {"entityDefs": [{"name": "gl_ds", "superTypes": ["DataSet"], "attributeDefs": []}]}
    )
    res = client.upsert_entities(
        [{"typeName": "gl_ds", "guid": "-1", "attributes": {"qualifiedName": "t@x", "name": "t"}}]
    )
    guid = res.guid_assignments["-1"]
    household = term(client, "Household@Customer")
    client._call(
        "test", "POST", f"/v2/glossary/terms/{household['guid']}/assignedEntities", body=[{"guid": guid}]
    )
    without = edited(tmp_path, ('[[glossary.term]]\nname = "Household"\n', ""))
    plan = plan_glossary(client, load_glossary_file(without))
    assert [c.render() for c in plan.blocked] == [
        "! term Customer/Household: assigned to 1 entity: delete needs --force"
    ]
    emu.clear_log()
    with pytest.raises(GlossaryInUseError):
        apply_glossary(client, plan)
    assert writes(emu) == []
    forced = apply(client, without, force=True)
    assert forced.summary() == "0 created, 0 updated, 49 unchanged, 1 deleted"
    assert client.get_entity_by_unique("AtlasGlossaryTerm", "Household@Customer") is None
    header = rest(client, f"/v2/entity/guid/{guid}/header")
    assert header["meanings"] == []


def test_hand_made_terms_and_their_links_survive_apply(client: AtlasClient, tmp_path: Path) -> None:
    apply(client, BOOTSTRAP)
    g = glossary_named(client, "Product")
    mine = term(client, "Price@Product")
    hand = client._call(
        "test",
        "POST",
        "/v2/glossary/term",
        body={
            "name": "Hand Made",
            "anchor": {"glossaryGuid": g["guid"]},
            "synonyms": [{"termGuid": mine["guid"]}],
        },
    )
    changed = edited(tmp_path, ('name = "Price"\n', 'name = "Price"\nshort_description = "What we ask"\n'))
    apply(client, changed)
    price = term(client, "Price@Product")
    assert price["shortDescription"] == "What we ask"
    assert related(price, "synonyms") == {"Hand Made"}  # the PUT kept the link to the hand-made term
    assert term(client, "Hand Made@Product")["guid"] == hand["guid"]
    assert not plan_glossary(client, load_glossary_file(changed)).has_changes


def test_a_glossary_someone_else_made_is_refused_with_nothing_written(
    client: AtlasClient, emu: Emulator
) -> None:
    client._call("test", "POST", "/v2/glossary", body={"name": "Finance"})
    emu.clear_log()
    with pytest.raises(GlossaryConflictError, match="'Finance' exists in Atlas, created by another tool"):
        apply(client, BOOTSTRAP)
    assert writes(emu) == []


def test_teardown_removes_only_this_files_glossaries(client: AtlasClient, emu: Emulator) -> None:
    client._call("test", "POST", "/v2/glossary", body={"name": "Handmade"})
    apply(client, BOOTSTRAP)
    apply(client, DATA / "small.toml")
    result = teardown_glossary(client, load_glossary_file(BOOTSTRAP))
    assert sorted(result.deleted) == ["Customer", "Finance", "Product"]
    left = sorted(g["name"] for g in rest(client, "/v2/glossary?limit=-1"))
    assert left == ["Handmade", "Ops"]
    assert client.get_entity_by_unique("AtlasGlossaryTerm", "SKU@Product") is None
    again = teardown_glossary(client, load_glossary_file(BOOTSTRAP))
    assert (again.deleted, sorted(again.absent)) == ([], ["Customer", "Finance", "Product"])


def test_teardown_refuses_an_assigned_term_or_others_terms_unless_forced(
    client: AtlasClient, emu: Emulator
) -> None:
    apply(client, DATA / "small.toml")
    g = glossary_named(client, "Ops")
    client._call(
        "test", "POST", "/v2/glossary/term", body={"name": "Theirs", "anchor": {"glossaryGuid": g["guid"]}}
    )
    emu.clear_log()
    with pytest.raises(GlossaryInUseError, match="1 term or category not made by this file"):
        teardown_glossary(client, load_glossary_file(DATA / "small.toml"))
    assert writes(emu) == []
    assert teardown_glossary(client, load_glossary_file(DATA / "small.toml"), force=True).deleted == ["Ops"]


def test_yaml_and_toml_files_describe_the_same_glossary(client: AtlasClient, emu: Emulator) -> None:
    toml, yaml = load_glossary_file(DATA / "small.toml"), load_glossary_file(DATA / "small.yaml")
    for spec in (toml, yaml):
        spec.path = "x"
        for g in spec.glossaries:
            g.line = None
            for o in [*g.terms, *g.categories]:
                o.line = None
    assert toml == yaml
    apply(client, DATA / "small.toml")
    emu.clear_log()
    assert apply(client, DATA / "small.yaml").summary() == "0 created, 0 updated, 6 unchanged"
    assert writes(emu) == []


def test_atlas_import_csv_layout(client: AtlasClient, emu: Emulator) -> None:
    spec = load_glossary_file(DATA / "atlas-import.csv")
    assert spec.owner == "atlas-import"
    assert [g.name for g in spec.glossaries] == ["Retail", "Logistics"]
    assert apply(client, DATA / "atlas-import.csv").summary() == "6 created, 0 updated, 0 unchanged"
    store = term(client, "Store@Retail")
    assert store["shortDescription"] == "A physical shop"
    assert store["examples"] == ["Store 12", "Store 40"]
    assert {k: v for k, v in store["additionalAttributes"].items() if "." not in k} == {
        "region": "emea",
        "format": "big box",
    }
    assert related(store, "synonyms") == {"Shop"}
    assert related(store, "replacementTerms") == {"Outlet"}
    assert related(store, "seeAlso") == {"Warehouse"}
    assert related(term(client, "Outlet@Retail"), "seeAlso") == {"Shop"}
    assert term(client, "Warehouse@Logistics")["abbreviation"] == "WH"
    emu.clear_log()
    assert apply(client, DATA / "atlas-import.csv").writes == 0
    assert writes(emu) == []
