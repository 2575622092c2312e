"""Metadata rules published and reconciled over HTTP (the emulator; a real Atlas when ``ATLAS_URL`` is set).

A two-statement SQL job (raw.customers -> stage.customers -> mart.contacts), a rules file tagging
``raw.customers.email`` PII and giving raw tables a cost centre. Counted per call kind: an unchanged
re-sync sends nothing, a changed rule exactly what its change needs, and what a person added stays.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.atlas import metadata as md
from atlas_sync.errors import InputError

SQL = """
INSERT INTO stage.customers SELECT id, email FROM raw.customers;
INSERT INTO mart.contacts SELECT id, lower(email) AS email FROM stage.customers;
"""
RULES = """
[[rules]]
columns = ["raw.customers.email"]
classifications = [{ name = "%(pii)s", propagate = true }]
labels = ["gdpr"]

[[rules]]
datasets = ["raw.*"]
business = { %(bm)s = { costCentre = "CC-42" } }
owners = ["data-stewards"]
"""


@pytest.fixture
def names(client: AtlasClient) -> Iterator[dict[str, str]]:
    """A domain and classification / business-metadata types of its own (a real Atlas keeps types)."""
    tag = uuid.uuid4().hex[:8]
    out = {"domain": "md" + tag, "pii": "PII_" + tag, "other": "Sensitive_" + tag, "bm": "Governance_" + tag}
    client.create_typedefs(
        {
            "classificationDefs": [
                {"name": out["pii"], "attributeDefs": [], "superTypes": []},
                {"name": out["other"], "attributeDefs": [], "superTypes": []},
            ],
            "businessMetadataDefs": [
                {
                    "name": out["bm"],
                    "attributeDefs": [
                        {
                            "name": "costCentre",
                            "typeName": "string",
                            "isOptional": True,
                            "cardinality": "SINGLE",
                            "options": {"applicableEntityTypes": '["Referenceable"]', "maxStrLength": "50"},
                        }
                    ],
                }
            ],
        }
    )
    yield out
    Publisher(client, domain=out["domain"]).teardown(purge=True)


def _files(tmp_path: Path, names: dict[str, str], rules: str = RULES) -> tuple[Path, Path]:
    sql = tmp_path / "job.sql"
    sql.write_text(SQL)
    path = tmp_path / "rules.toml"
    path.write_text(rules % names)
    return sql, path


def _sync(client: AtlasClient, names: dict[str, str], sql: Path, rules: Path | None) -> Any:
    client.stats.reset()
    pub = Publisher(client, domain=names["domain"], metadata_rules=rules)
    return pub.sync(pub.read("sql", [str(sql)], dialect="spark"), job="customers")


def _entity(client: AtlasClient, type_name: str, qn: str) -> dict[str, Any]:
    got = client.get_entity_by_unique(type_name, qn)
    assert got is not None, qn
    return got


def _own_classifications(ent: dict[str, Any]) -> set[str]:
    return {
        c["typeName"] for c in ent.get("classifications") or [] if c.get("entityGuid") in (None, ent["guid"])
    }


def test_rules_publish_classifications_labels_business_metadata_and_owners(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    sql, rules = _files(tmp_path, names)
    result = _sync(client, names, sql, rules)
    assert result.applied is not None and result.applied.metadata == 2  # the column and the table
    email = _entity(client, "lineage_column", f"raw.customers.email@{names['domain']}")
    assert _own_classifications(email) == {names["pii"]}
    (pii,) = [c for c in email["classifications"] if c["typeName"] == names["pii"]]
    assert pii["propagate"] is True
    assert email["labels"] == ["gdpr"]
    table = _entity(client, "lineage_dataset", f"raw.customers@{names['domain']}")
    assert table["businessAttributes"] == {names["bm"]: {"costCentre": "CC-42"}}
    assert table["attributes"]["owner"] == "data-stewards"
    # one bulk request for the classification, one per entity for the label and the business attribute
    assert client.stats["metadata_write"].requests == 3
    other = _entity(client, "lineage_dataset", f"stage.customers@{names['domain']}")
    assert not other.get("businessAttributes") and other["attributes"].get("owner") is None


def test_an_unchanged_resync_sends_no_metadata_request(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    sql, rules = _files(tmp_path, names)
    _sync(client, names, sql, rules)
    again = _sync(client, names, sql, rules)
    assert again.applied is None
    assert again.plan.counts["update"] == 0 and again.plan.counts["create"] == 0
    assert client.stats["metadata_write"].requests == 0
    assert client.stats["entity_write"].requests == 0
    assert client.stats["entity_read"].requests == 0


def test_what_a_person_added_survives_resyncs_and_the_rule_removal(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    sql, rules = _files(tmp_path, names)
    _sync(client, names, sql, rules)
    qn = f"raw.customers.email@{names['domain']}"
    email = _entity(client, "lineage_column", qn)
    # a person classifies the column and labels it, by hand
    client._call(
        "entity_write",
        "POST",
        f"/v2/entity/guid/{email['guid']}/classifications",
        body=[{"typeName": names["other"]}],
    )
    md.add_labels(client, email["guid"], ["reviewed"])
    for _ in range(2):
        _sync(client, names, sql, rules)
        now = _entity(client, "lineage_column", qn)
        assert _own_classifications(now) == {names["pii"], names["other"]}
        assert sorted(now["labels"]) == ["gdpr", "reviewed"]
    # the rule goes: only what atlas-sync added goes with it
    no_pii = "\n".join(RULES.split("\n")[5:])  # the second rule alone
    _, rules2 = _files(tmp_path, names, no_pii)
    changed = _sync(client, names, sql, rules2)
    (item,) = [i for i in changed.plan.items if i.qualified_name == qn]
    shown = {c.attribute: c.after for c in item.changes}
    assert shown["classifications"] == f"-{names['pii']}" and shown["labels"] == "-gdpr"
    # 1 classification removed + 1 labels request; the entity written once, after them (its record
    # keeps the claims until they are removed, so nothing is written before)
    assert client.stats["metadata_write"].requests == 2
    assert client.stats["entity_write"].requests == 1
    assert client.stats["entity_read"].requests == 1  # only the column whose metadata changed
    now = _entity(client, "lineage_column", qn)
    assert _own_classifications(now) == {names["other"]}
    assert now["labels"] == ["reviewed"]


def test_an_owner_a_rule_set_goes_with_the_rule_as_its_tags_do(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    sql, rules = _files(tmp_path, names)
    _sync(client, names, sql, rules)
    qn = f"raw.customers@{names['domain']}"
    assert _entity(client, "lineage_dataset", qn)["attributes"]["owner"] == "data-stewards"
    # the owners line goes (the cost centre stays): the owner goes, in the entity's one write
    _, rules2 = _files(tmp_path, names, RULES.replace('owners = ["data-stewards"]\n', ""))
    changed = _sync(client, names, sql, rules2)
    (item,) = [i for i in changed.plan.items if i.qualified_name == qn]
    assert ("owner", "data-stewards", None) in [(c.attribute, c.before, c.after) for c in item.changes]
    assert client.stats["entity_write"].requests == 1 and client.stats["metadata_write"].requests == 0
    table = _entity(client, "lineage_dataset", qn)
    assert table["attributes"].get("owner") is None
    assert table["businessAttributes"] == {names["bm"]: {"costCentre": "CC-42"}}
    assert _sync(client, names, sql, rules2).applied is None  # and then nothing to do


def test_an_owner_a_person_changed_stays_when_the_rule_goes(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    sql, rules = _files(tmp_path, names)
    _sync(client, names, sql, rules)
    qn = f"raw.customers@{names['domain']}"
    guid = _entity(client, "lineage_dataset", qn)["guid"]
    client.set_entity_attribute(guid, "owner", "jane")  # a person, in Atlas's UI
    _sync(client, names, sql, None)  # the rules file left out
    assert _entity(client, "lineage_dataset", qn)["attributes"]["owner"] == "jane"


def test_a_changed_rule_makes_exactly_the_requests_its_change_needs(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    sql, rules = _files(tmp_path, names)
    _sync(client, names, sql, rules)
    _, rules2 = _files(tmp_path, names, RULES.replace("propagate = true", "propagate = false"))
    changed = _sync(client, names, sql, rules2)
    assert changed.plan.counts["update"] == 1
    (item,) = changed.plan.by_action("update")
    assert [(c.attribute, c.after) for c in item.changes] == [("classifications", f"~{names['pii']}")]
    assert client.stats["metadata_write"].requests == 1  # one PUT of the entity's classifications
    assert client.stats["entity_write"].requests == 1  # the digest, written once the change is in
    email = _entity(client, "lineage_column", f"raw.customers.email@{names['domain']}")
    (pii,) = [c for c in email["classifications"] if c["typeName"] == names["pii"]]
    assert pii["propagate"] is False
    assert _sync(client, names, sql, rules2).applied is None


def test_a_classification_a_person_added_first_is_theirs(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    sql, _ = _files(tmp_path, names)
    _sync(client, names, sql, None)
    qn = f"raw.customers.email@{names['domain']}"
    guid = _entity(client, "lineage_column", qn)["guid"]
    md.classify(client, {"typeName": names["pii"]}, [guid])  # by hand, before any rule
    _, rules = _files(tmp_path, names)
    _sync(client, names, sql, rules)
    no_pii = "\n".join(RULES.split("\n")[5:])
    _, rules2 = _files(tmp_path, names, no_pii)
    _sync(client, names, sql, rules2)
    assert _own_classifications(_entity(client, "lineage_column", qn)) == {names["pii"]}  # still there


def test_an_unknown_classification_sends_nothing(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    sql, rules = _files(tmp_path, names, RULES.replace("%(pii)s", "NoSuchTag_x"))
    client.stats.reset()
    pub = Publisher(client, domain=names["domain"], metadata_rules=rules)
    with pytest.raises(InputError, match=r"rule 1: unknown classification 'NoSuchTag_x'") as err:
        pub.sync(pub.read("sql", [str(sql)], dialect="spark"), job="customers")
    assert err.value.file == str(rules) and err.value.line == 2
    assert client.stats["entity_write"].requests == 0 and client.stats["typedef_write"].requests == 0


def test_the_plan_shows_metadata_changes_and_a_saved_plan_applies_them(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    from atlas_sync.reconcile.plan import Plan, plan_text

    sql, rules = _files(tmp_path, names)
    _sync(client, names, sql, None)  # the job ran before the rules came
    pub = Publisher(client, domain=names["domain"], metadata_rules=rules)
    graph = pub.read("sql", [str(sql)], dialect="spark")
    plan = pub.plan(graph, job="customers")
    assert plan.counts["update"] == 2 and plan.counts["create"] == 0
    text = plan_text(plan)
    assert f"      ~ classifications: +{names['pii']}" in text
    assert "      ~ labels: +gdpr" in text
    assert f"      ~ businessMetadata: +{names['bm']}.costCentre" in text
    assert "atlasSyncMetadata" not in text  # the record is shown as what it records
    saved = Plan.from_json(plan.to_json())
    client.stats.reset()
    result = Publisher(client, domain=names["domain"]).apply(saved)
    assert result.metadata == 2 and client.stats["metadata_write"].requests == 3
    email = _entity(client, "lineage_column", f"raw.customers.email@{names['domain']}")
    assert _own_classifications(email) == {names["pii"]} and email["labels"] == ["gdpr"]
    # the next sync finds the metadata in place: it writes the two digests, no metadata request
    again = _sync(client, names, sql, rules)
    assert client.stats["metadata_write"].requests == 0
    assert again.plan.counts["update"] == 2
    assert _sync(client, names, sql, rules).applied is None


def _propagated(ent: dict[str, Any], name: str) -> bool:
    return any(
        c["typeName"] == name and c.get("entityGuid") not in (None, ent["guid"])
        for c in ent.get("classifications") or []
    )


def test_a_propagated_tag_reaches_downstream_columns_and_goes_with_the_rule(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    """The issue's walk-through: PII on raw.customers.email with propagation; Atlas propagates it along
    the column lineage; re-syncs never touch the propagated copies; removing the rule removes ours,
    and Atlas removes what it propagated."""
    sql, rules = _files(tmp_path, names)
    _sync(client, names, sql, rules)
    d = names["domain"]
    downstream = [f"stage.customers.email@{d}", f"mart.contacts.email@{d}"]
    for qn in downstream:
        assert _propagated(_entity(client, "lineage_column", qn), names["pii"]), qn
    # a person's classification on a downstream column, and two re-syncs
    target = _entity(client, "lineage_column", downstream[1])
    md.classify(client, {"typeName": names["other"]}, [target["guid"]])
    for _ in range(2):
        again = _sync(client, names, sql, rules)
        assert client.stats["metadata_write"].requests == 0 and again.applied is None
    now = _entity(client, "lineage_column", downstream[1])
    assert _propagated(now, names["pii"]) and names["other"] in _own_classifications(now)
    # the rule goes: our PII goes, Atlas takes back what it propagated, the person's stays
    _, rules2 = _files(tmp_path, names, "\n".join(RULES.split("\n")[5:]))
    _sync(client, names, sql, rules2)
    assert names["pii"] not in _own_classifications(
        _entity(client, "lineage_column", f"raw.customers.email@{d}")
    )
    now = _entity(client, "lineage_column", downstream[1])
    assert not _propagated(now, names["pii"])
    assert _own_classifications(now) == {names["other"]}


def test_a_graph_document_naming_an_unknown_classification_sends_nothing(
    client: AtlasClient, names: dict[str, str]
) -> None:
    from atlas_sync.lineage.model import LineageGraph

    doc = {
        "datasets": [
            {
                "id": "raw.a",
                "name": "a",
                "columns": [{"name": "x", "classifications": [{"name": "NoSuchTag_y"}]}],
            },
            {"id": "mart.b", "name": "b", "columns": ["y"], "classifications": [{"name": names["pii"]}]},
        ],
        "processes": [{"id": "p", "name": "p", "inputs": ["raw.a"], "outputs": ["mart.b"]}],
    }
    client.stats.reset()
    with pytest.raises(InputError, match="the input names classification 'NoSuchTag_y'"):
        Publisher(client, domain=names["domain"]).sync(LineageGraph.from_document(doc), job="g")
    assert client.stats["entity_write"].requests == 0 and client.stats["metadata_write"].requests == 0
    # known ones publish without a rules file
    del doc["datasets"][0]["columns"][0]["classifications"]
    Publisher(client, domain=names["domain"]).sync(LineageGraph.from_document(doc), job="g")
    assert _own_classifications(_entity(client, "lineage_dataset", f"mart.b@{names['domain']}")) == {
        names["pii"]
    }


def test_a_classification_shipped_in_the_profiles_typedef_bundle_is_registered_and_used(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    import dataclasses
    import json

    from atlas_sync.render.profile import load_profile

    shipped = "Shipped_" + names["domain"]
    bundle = tmp_path / "tags"
    bundle.mkdir()
    (bundle / "0100-tags.json").write_text(
        json.dumps({"classificationDefs": [{"name": shipped, "superTypes": [], "attributeDefs": []}]})
    )
    base = load_profile("lineage")
    profile = dataclasses.replace(base, typedef_sources=[*base.typedef_sources, str(bundle)])
    sql, _ = _files(tmp_path, names)
    rules = tmp_path / "shipped.toml"
    rules.write_text(f'[[rules]]\ncolumns = ["raw.customers.email"]\nclassifications = ["{shipped}"]\n')
    pub = Publisher(client, domain=names["domain"], profile=profile, metadata_rules=rules)
    pub.sync(pub.read("sql", [str(sql)], dialect="spark"), job="customers")
    email = _entity(client, "lineage_column", f"raw.customers.email@{names['domain']}")
    assert _own_classifications(email) == {shipped}
