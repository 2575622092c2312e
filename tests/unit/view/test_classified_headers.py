"""What `show` reads of each header's classifications: own (entityGuid the entity) and propagated
(entityGuid another entity), from a search with includeClassificationAttributes."""

from __future__ import annotations

from atlas_sync.view.atlas_graph import _classifications


def test_own_and_propagated_are_told_apart_by_entity_guid() -> None:
    header = {
        "guid": "g1",
        "classificationNames": ["PII", "Reviewed"],
        "classifications": [
            {"typeName": "PII", "entityGuid": "g0"},
            {"typeName": "Reviewed", "entityGuid": "g1"},
            {"typeName": "PII", "entityGuid": "g9"},  # propagated from two sources: one mark
        ],
    }
    got = [(c.name, c.propagated) for c in _classifications(header)]
    assert got == [("Reviewed", False), ("PII", True)]


def test_one_name_can_be_both_own_and_propagated() -> None:
    header = {
        "guid": "g1",
        "classifications": [{"typeName": "PII", "entityGuid": "g1"}, {"typeName": "PII", "entityGuid": "g0"}],
    }
    assert [(c.name, c.propagated) for c in _classifications(header)] == [("PII", False), ("PII", True)]


def test_names_without_their_classifications_count_as_own() -> None:
    # a server that ignores includeClassificationAttributes answers names only
    assert [
        (c.name, c.propagated) for c in _classifications({"guid": "g", "classificationNames": ["A"]})
    ] == [("A", False)]
