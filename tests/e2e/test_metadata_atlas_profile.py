"""Metadata rules under the `atlas` profile (Atlas's own types), over HTTP (the emulator; a real Atlas
when ``ATLAS_URL`` is set).

A catalog as the Hive hook writes it (hive_db ``default``, hive_table ``tab1`` with columns, carrying
a classification the hook's user gave it), then a SQL job creating ``tab5`` from it. A rule tags
atlas-sync's own ``tab5.age``; a rule for the hook's ``tab1.age`` applies only with ``foreign = true``,
and then only what atlas-sync added there is ever removed. Counts are written by hand from the design
(docs/metadata.md, "Under the atlas profile").
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.errors import AtlasSyncError, InputError

SQL = "CREATE TABLE default.tab5 AS SELECT id, age FROM default.tab1;\n"


@pytest.fixture
def names(client: AtlasClient) -> Iterator[dict[str, str]]:
    tag = uuid.uuid4().hex[:8]
    out = {
        "domain": "ap" + tag,
        "ns": "cm" + tag,
        "pii": "PII_" + tag,
        "hook": "HookTag_" + tag,
        "manual": "Manual_" + tag,
    }
    client.create_typedefs(
        {
            "classificationDefs": [
                {"name": out[k], "attributeDefs": [], "superTypes": []} for k in ("pii", "hook", "manual")
            ]
        }
    )
    ns = out["ns"]
    entities: list[dict[str, Any]] = [
        {
            "typeName": "hive_db",
            "guid": "-1",
            "attributes": {"qualifiedName": f"default@{ns}", "name": "default", "clusterName": ns},
        },
        {
            "typeName": "hive_table",
            "guid": "-2",
            "attributes": {"qualifiedName": f"default.tab1@{ns}", "name": "tab1", "owner": "hive"},
            "relationshipAttributes": {"db": {"guid": "-1", "typeName": "hive_db"}},
            "classifications": [{"typeName": out["hook"]}],
        },
    ]
    for pos, col in enumerate(["id", "age", "name"]):
        entities.append(
            {
                "typeName": "hive_column",
                "guid": f"-{10 + pos}",
                "attributes": {
                    "qualifiedName": f"default.tab1.{col}@{ns}",
                    "name": col,
                    "type": "int",
                    "position": pos,
                },
                "relationshipAttributes": {"table": {"guid": "-2", "typeName": "hive_table"}},
            }
        )
    made = client.upsert_entities(entities)
    hook = list(dict(made.guid_assignments).values())
    yield out
    Publisher(client, profile="atlas", domain=out["domain"]).teardown(purge=True)
    client.delete_entities(hook)
    client.purge_entities(hook)


def _rules(tmp_path: Path, names: dict[str, str], *, foreign: bool | None) -> Path:
    text = f'[[rules]]\ncolumns = ["default.tab5.age"]\nclassifications = ["{names["pii"]}"]\n'
    if foreign is not None:
        text += (
            f'\n[[rules]]\ncolumns = ["default.tab1.age"]\nclassifications = ["{names["pii"]}"]\n'
            'labels = ["gdpr"]\n' + ("foreign = true\n" if foreign else "")
        )
    path = tmp_path / "rules.toml"
    path.write_text(text)
    return path


def _sync(client: AtlasClient, names: dict[str, str], tmp_path: Path, rules: Path | None) -> dict[str, int]:
    sql = tmp_path / "etl.sql"
    sql.write_text(SQL)
    client.stats.reset()
    pub = Publisher(
        client, profile="atlas", domain=names["domain"], metadata_namespace=names["ns"], metadata_rules=rules
    )
    pub.sync(pub.read("sql", [str(sql)], dialect="hive"), job="etl")
    kinds = ("entity_write", "metadata_write", "typedef_write")
    return {k: client.stats[k].requests for k in kinds}


def _column(client: AtlasClient, names: dict[str, str], table: str) -> dict[str, Any]:
    got = client.get_entity_by_unique("hive_column", f"default.{table}.age@{names['ns']}")
    assert got is not None
    return got


def _own(ent: dict[str, Any]) -> set[str]:
    return {
        c["typeName"] for c in ent.get("classifications") or [] if c.get("entityGuid") in (None, ent["guid"])
    }


def test_rules_tag_our_own_entities_and_a_hooks_only_with_foreign(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    pii = names["pii"]
    hook_before = _column(client, names, "tab1")
    registered = client.get_typedef_by_name("atlasSync") is not None  # (a real Atlas keeps types)
    # the atlas profile also registers its BI types (typedefs/bi) on a first sync
    bi_registered = client.get_typedef_by_name("bi_process") is not None
    # without foreign = true: the hook's column is left as it is; ours gets PII
    first = _sync(client, names, tmp_path, _rules(tmp_path, names, foreign=False))
    # the record's business metadata registered once; our column's record, then its classification
    assert first["typedef_write"] == (0 if registered else 1) + (0 if bi_registered else 1)
    assert first["metadata_write"] == 2
    assert client.get_typedef_by_name("atlasSync") is not None
    assert _own(_column(client, names, "tab5")) == {pii}
    hook_col = _column(client, names, "tab1")
    assert _own(hook_col) == set() and not hook_col.get("labels") and not hook_col.get("businessAttributes")
    assert _sync(client, names, tmp_path, _rules(tmp_path, names, foreign=False)) == {
        "entity_write": 0,
        "metadata_write": 0,
        "typedef_write": 0,
    }

    # with foreign = true: the hook's column gets PII and gdpr (its record, the label; PII in the
    # bulk request that already tags nothing else new), and nothing of it is written as an entity
    with_foreign = _rules(tmp_path, names, foreign=True)
    assert _sync(client, names, tmp_path, with_foreign) == {
        "entity_write": 0,
        "metadata_write": 3,
        "typedef_write": 0,
    }
    hook_col = _column(client, names, "tab1")
    assert _own(hook_col) == {pii} and hook_col["labels"] == ["gdpr"]
    assert hook_col["attributes"] == hook_before["attributes"]
    nothing = {"entity_write": 0, "metadata_write": 0, "typedef_write": 0}
    for _ in range(2):
        assert _sync(client, names, tmp_path, with_foreign) == nothing

    # a person's classification on the hook's column, and the hook's on its table, survive
    client._call(
        "entity_write",
        "POST",
        f"/v2/entity/guid/{hook_col['guid']}/classifications",
        body=[{"typeName": names["manual"]}],
    )
    assert _sync(client, names, tmp_path, with_foreign) == nothing

    # the foreign rule removed: what atlas-sync added to the hook's column goes (DELETE PII, DELETE
    # the label, the record removed), nothing else
    assert _sync(client, names, tmp_path, _rules(tmp_path, names, foreign=None)) == {
        "entity_write": 0,
        "metadata_write": 3,
        "typedef_write": 0,
    }
    hook_col = _column(client, names, "tab1")
    assert _own(hook_col) == {names["manual"]} and not hook_col.get("labels")
    assert not hook_col.get("businessAttributes")
    table = client.get_entity_by_unique("hive_table", f"default.tab1@{names['ns']}")
    assert table is not None and _own(table) == {names["hook"]}
    assert _own(_column(client, names, "tab5")) == {pii}
    assert _sync(client, names, tmp_path, _rules(tmp_path, names, foreign=None)) == nothing


def test_what_cannot_be_done_is_refused_naming_the_rule(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "owners.toml"
    path.write_text('[[rules]]\ndatasets = ["default.tab1"]\nowners = ["stewards"]\nforeign = true\n')
    with pytest.raises(InputError, match=r"rule 1: owners cannot go on entities another tool created") as err:
        _sync(client, names, tmp_path, path)
    assert err.value.file == str(path) and err.value.line == 1
    # foreign = true means nothing under a profile whose entities are all atlas-sync's
    path.write_text(
        f'[[rules]]\ndatasets = ["raw.*"]\nclassifications = ["{names["pii"]}"]\nforeign = true\n'
    )
    client.stats.reset()
    pub = Publisher(client, domain=names["domain"], metadata_rules=path)
    with pytest.raises(AtlasSyncError, match=r"rule 1: foreign = true: the lineage profile's entities"):
        pub.sync(pub.read("sql", [str(tmp_path / "etl.sql")], dialect="hive"), job="etl")
    assert client.stats["entity_write"].requests == 0 and client.stats["metadata_write"].requests == 0


def test_the_plan_shows_a_hooks_column_tagged_and_a_saved_plan_applies_it(
    client: AtlasClient, names: dict[str, str], tmp_path: Path
) -> None:
    from atlas_sync.reconcile.plan import Plan, plan_text

    _sync(client, names, tmp_path, _rules(tmp_path, names, foreign=False))  # registers the record
    pub = Publisher(
        client,
        profile="atlas",
        domain=names["domain"],
        metadata_namespace=names["ns"],
        metadata_rules=_rules(tmp_path, names, foreign=True),
    )
    plan = pub.plan(pub.read("sql", [str(tmp_path / "etl.sql")], dialect="hive"), job="etl")
    qn = f"default.tab1.age@{names['ns']}"
    (item,) = [i for i in plan.items if i.qualified_name == qn]
    assert item.action == "update"
    assert [(c.attribute, c.after) for c in item.changes] == [
        ("classifications", f"+{names['pii']}"),
        ("labels", "+gdpr"),
    ]
    assert f"~ hive_column {qn}" in plan_text(plan)
    client.stats.reset()
    result = Publisher(client, profile="atlas", domain=names["domain"]).apply(Plan.from_json(plan.to_json()))
    assert result.metadata == 1
    assert client.stats["entity_write"].requests == 0 and client.stats["metadata_write"].requests == 3
    hook_col = _column(client, names, "tab1")
    assert _own(hook_col) == {names["pii"]} and hook_col["labels"] == ["gdpr"]
    # and the next sync finds it all in place
    assert _sync(client, names, tmp_path, _rules(tmp_path, names, foreign=True)) == {
        "entity_write": 0,
        "metadata_write": 0,
        "typedef_write": 0,
    }
