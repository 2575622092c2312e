"""What a sync sends for an entity's metadata: only what atlas-sync added is changed or removed."""

from __future__ import annotations

from typing import Any

from atlas_sync.lineage.model import Classification, Column, Dataset
from atlas_sync.reconcile.metadata import (
    apply_metadata,
    encode_owned,
    held_metadata,
    owned_of,
    plan_metadata,
)
from atlas_sync.render.metadata import entity_metadata

GUID = "g-col"


def _held(**kw: Any) -> dict[str, Any]:
    return held_metadata({"guid": GUID, **kw})


def test_what_an_entity_to_create_gets_and_the_record_of_it() -> None:
    want = {
        "classifications": [{"typeName": "PII", "attributes": {}, "propagate": True}],
        "labels": ["gdpr"],
        "terms": ["Email@Glossary"],
        "business": {"Gov": {"costCentre": "CC-1"}},
    }
    ops, owned = plan_metadata(want, None, {}, {"Email@Glossary": "t1"})
    assert ops.add_classifications == [{"typeName": "PII", "attributes": {}, "propagate": True}]
    assert ops.add_labels == ["gdpr"] and ops.add_terms == {"Email@Glossary": "t1"}
    assert ops.set_business == {"Gov": {"costCentre": "CC-1"}}
    record = encode_owned(owned)
    assert owned_of(record) == {
        "c": ["PII"],
        "l": ["gdpr"],
        "t": {"Email@Glossary": "t1"},
        "b": {"Gov": ["costCentre"]},
    }
    assert [(c.attribute, c.after) for c in ops.changes()] == [
        ("classifications", "+PII"),
        ("labels", "+gdpr"),
        ("terms", "+Email@Glossary"),
        ("businessMetadata", "+Gov.costCentre"),
    ]


def test_nothing_to_do_when_the_entity_carries_what_is_wanted() -> None:
    want = {"classifications": [{"typeName": "PII", "attributes": {}}], "labels": ["gdpr"]}
    held = _held(
        classifications=[{"typeName": "PII", "entityGuid": GUID, "propagate": True}], labels=["gdpr"]
    )
    ops, owned = plan_metadata(want, held, {"c": ["PII"], "l": ["gdpr"]}, {})
    assert not ops
    assert owned["c"] == ["PII"] and owned["l"] == ["gdpr"]


def test_a_persons_classification_label_and_business_attribute_are_never_touched() -> None:
    held = _held(
        classifications=[
            {"typeName": "PII", "entityGuid": GUID},  # ours
            {"typeName": "Sensitive", "entityGuid": GUID},  # a person's
            {"typeName": "Finance", "entityGuid": "upstream-guid"},  # propagated from upstream
        ],
        labels=["gdpr", "reviewed"],
        businessAttributes={"Gov": {"costCentre": "CC-1", "steward": "ann"}},
    )
    owned = {"c": ["PII"], "l": ["gdpr"], "b": {"Gov": ["costCentre"]}}
    ops, new = plan_metadata(None, held, owned, {})  # every rule removed
    assert ops.remove_classifications == ["PII"]
    assert ops.remove_labels == ["gdpr"]
    assert ops.remove_business == {"Gov": ["costCentre"]}
    assert not ops.add_classifications and not ops.update_classifications
    assert encode_owned(new) is None


def test_a_wanted_classification_someone_else_added_stays_theirs() -> None:
    held = _held(classifications=[{"typeName": "PII", "entityGuid": GUID, "propagate": False}])
    want = {"classifications": [{"typeName": "PII", "attributes": {}, "propagate": True}]}
    ops, owned = plan_metadata(want, held, {}, {})
    assert not ops  # not added (it is there), not updated (not ours)
    assert owned["c"] == []  # so removing the rule later leaves it


def test_a_propagated_classification_does_not_count_as_the_entitys_own() -> None:
    held = _held(classifications=[{"typeName": "PII", "entityGuid": "upstream-guid"}])
    ops, owned = plan_metadata({"classifications": [{"typeName": "PII", "attributes": {}}]}, held, {}, {})
    assert [c["typeName"] for c in ops.add_classifications] == ["PII"] and owned["c"] == ["PII"]


def test_our_classification_with_other_settings_is_updated() -> None:
    held = _held(
        classifications=[
            {"typeName": "PII", "entityGuid": GUID, "propagate": True, "attributes": {"level": None}}
        ]
    )
    want = {"classifications": [{"typeName": "PII", "attributes": {}, "propagate": False}]}
    ops, _ = plan_metadata(want, held, {"c": ["PII"]}, {})
    assert ops.update_classifications == [{"typeName": "PII", "attributes": {}, "propagate": False}]
    assert [(c.attribute, c.after) for c in ops.changes()] == [("classifications", "~PII")]


def test_terms_are_compared_by_guid_and_removed_with_the_assignment_guid() -> None:
    held = _held(
        relationshipAttributes={
            "meanings": [
                {"guid": "t-old", "relationshipGuid": "r-old", "relationshipStatus": "ACTIVE"},
                {"guid": "t-hand", "relationshipGuid": "r-hand", "relationshipStatus": "ACTIVE"},
                {"guid": "t-gone", "relationshipGuid": "r-gone", "relationshipStatus": "DELETED"},
            ]
        }
    )
    owned = {"t": {"Old@G": "t-old"}}
    ops, new = plan_metadata({"terms": ["New@G"]}, held, owned, {"New@G": "t-new"})
    assert ops.add_terms == {"New@G": "t-new"}
    assert ops.remove_terms == {"Old@G": ["t-old", "r-old"]}  # the hand-assigned t-hand stays
    assert new["t"] == {"New@G": "t-new"}


def test_a_record_that_does_not_parse_counts_as_nothing_ours() -> None:
    assert owned_of("not json") == {} and owned_of(None) == {} and owned_of('["x"]') == {}


def test_reader_tags_publish_as_labels_when_atlas_accepts_them() -> None:
    col = Column(
        name="email", tags=["pii", "environment:production"], classifications=[Classification(name="PII")]
    )
    assert entity_metadata(col) == {
        "classifications": [{"typeName": "PII", "attributes": {}}],
        "labels": ["pii"],
    }
    assert entity_metadata(Dataset(id="a", name="a")) is None


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    def call(self, kind: str, method: str, path: str, **kw: Any) -> None:
        self.calls.append((method, path, kw.get("body")))


def test_one_request_per_classification_added_and_per_term_for_all_entities() -> None:
    want = {"classifications": [{"typeName": "PII", "attributes": {}}], "labels": ["gdpr"], "terms": ["E@G"]}
    todo = [(g, plan_metadata(want, None, {}, {"E@G": "t1"})[0]) for g in ("a", "b", "c")]
    client = _Recorder()
    assert apply_metadata(client, todo) == 5  # 1 bulk classification + 3 label PUTs + 1 term assignment
    bulk = [c for c in client.calls if c[1] == "/v2/entity/bulk/classification"]
    assert bulk == [
        (
            "POST",
            "/v2/entity/bulk/classification",
            {"classification": {"typeName": "PII", "attributes": {}}, "entityGuids": ["a", "b", "c"]},
        )
    ]
    assert (
        "POST",
        "/v2/glossary/terms/t1/assignedEntities",
        [{"guid": "a"}, {"guid": "b"}, {"guid": "c"}],
    ) in client.calls


def test_the_record_keeps_each_jobs_claims() -> None:
    from atlas_sync.reconcile.metadata import encode_record, read_record

    text = encode_record({"jA": {"c": ["PII"]}, "jB": {"l": ["gdpr"], "c": []}, "jC": {}})
    assert text == '{"j":{"jA":{"c":["PII"]},"jB":{"l":["gdpr"]}},"v":2}'
    assert read_record(text) == {"jA": {"c": ["PII"]}, "jB": {"l": ["gdpr"]}}
    assert read_record('{"c":["PII"],"l":["gdpr"]}') == {}  # (no version: not a record atlas-sync writes)
    assert read_record("not json") == {} and read_record('{"v":2,"j":[]}') == {}
    assert encode_record({"jA": {}}) is None


def test_a_wanted_item_another_job_added_is_joined_without_a_request() -> None:
    held = _held(classifications=[{"typeName": "PII", "entityGuid": GUID}], labels=["gdpr"])
    want = {"classifications": [{"typeName": "PII", "attributes": {}}], "labels": ["gdpr"]}
    ops, mine = plan_metadata(want, held, {}, {}, {"c": ["PII"], "l": ["gdpr"]})
    assert not ops
    assert mine["c"] == ["PII"] and mine["l"] == ["gdpr"]


def test_a_claim_dropped_removes_the_item_only_when_no_other_job_claims_it() -> None:
    held = _held(
        classifications=[{"typeName": "PII", "entityGuid": GUID}, {"typeName": "Old", "entityGuid": GUID}],
        labels=["gdpr", "x"],
        businessAttributes={"Gov": {"costCentre": "CC-1", "tier": "gold"}},
        relationshipAttributes={"meanings": [{"guid": "t1", "relationshipGuid": "r1"}]},
    )
    mine = {"c": ["PII", "Old"], "l": ["gdpr", "x"], "b": {"Gov": ["costCentre", "tier"]}, "t": {"E@G": "t1"}}
    others = {"c": ["PII"], "l": ["gdpr"], "b": {"Gov": ["tier"]}, "t": {"E@G": "t1"}}
    ops, new = plan_metadata(None, held, mine, {}, others)
    assert ops.remove_classifications == ["Old"] and ops.remove_labels == ["x"]
    assert ops.remove_business == {"Gov": ["costCentre"]} and not ops.remove_terms
    assert new == {"c": [], "l": [], "t": {}, "b": {}}


def test_settings_several_jobs_claim_are_not_changed_by_either() -> None:
    held = _held(
        classifications=[{"typeName": "PII", "entityGuid": GUID, "propagate": True}],
        businessAttributes={"Gov": {"costCentre": "CC-1"}},
    )
    want = {
        "classifications": [{"typeName": "PII", "attributes": {}, "propagate": False}],
        "business": {"Gov": {"costCentre": "CC-2"}},
    }
    shared = {"c": ["PII"], "b": {"Gov": ["costCentre"]}}
    ops, _ = plan_metadata(want, held, shared, {}, shared)
    assert not ops  # (each would undo the other's on every sync)
    ops, _ = plan_metadata(want, held, shared, {}, {})  # alone now: its settings apply
    assert ops.update_classifications and ops.set_business == {"Gov": {"costCentre": "CC-2"}}
