"""OpenLineage documentation, ownership and tags facets (dataset, job and field level) and schema field
descriptions fill the model's metadata; events written in the spec's facet shapes (1-0-0 / 1-1-0)."""

from __future__ import annotations

import copy
from typing import Any

from atlas_sync.lineage.openlineage import events_to_graph

P = "https://openlineage.io/spec/facets/1-0-0/"
EVENT: dict[str, Any] = {
    "eventType": "COMPLETE",
    "eventTime": "2026-01-01T00:00:00Z",
    "producer": "https://example.com/producer",
    "run": {"runId": "3f5e83fa-3480-44ff-99c5-ff943904e5e8"},
    "job": {
        "namespace": "etl",
        "name": "load_customers",
        "facets": {
            "documentation": {
                "_schemaURL": P + "DocumentationJobFacet.json",
                "description": "Loads customers",
            },
            "ownership": {"owners": [{"name": "team:data-eng", "type": "MAINTAINER"}]},
            "tags": {"tags": [{"key": "nightly", "value": "true", "source": "USER"}]},
        },
    },
    "inputs": [
        {
            "namespace": "postgres://db:5432",
            "name": "shop.public.customers",
            "facets": {
                "documentation": {"description": "Every customer"},
                "ownership": {"owners": [{"name": "user:ann"}, {"name": "user:bob", "type": "STEWARD"}]},
                "tags": {
                    "tags": [
                        {"key": "environment", "value": "production", "source": "CONFIG"},
                        {"key": "pii", "value": "true", "source": "CONFIG", "field": "email"},
                    ]
                },
                "schema": {
                    "fields": [
                        {"name": "id", "type": "INTEGER", "description": "customer id"},
                        {"name": "email", "type": "VARCHAR"},
                    ]
                },
            },
        }
    ],
    "outputs": [{"namespace": "postgres://db:5432", "name": "shop.public.contacts"}],
}


def test_dataset_job_and_field_facets_fill_the_model() -> None:
    g = events_to_graph([EVENT])
    (proc,) = g.processes
    assert proc.description == "Loads customers"
    assert proc.owners == ["team:data-eng"] and proc.tags == ["nightly"]
    (src,) = [d for d in g.datasets if d.name.endswith("customers")]
    assert src.description == "Every customer"
    assert src.owners == ["user:ann", "user:bob"]
    assert src.tags == ["environment:production"]
    cols = {c.name: c for c in src.columns}
    assert cols["id"].description == "customer id"
    assert list(cols["email"].tags) == ["pii"]  # the tag's `field` puts it on the column
    assert not [p for p in g.problems if p.code == "openlineage-bad-facet"]


def test_a_bad_owner_is_dropped_alone_and_the_other_owners_kept() -> None:
    ev = copy.deepcopy(EVENT)
    ev["inputs"][0]["facets"]["ownership"] = {
        "owners": [{"type": "MAINTAINER"}, {"name": "team:crm", "type": "STEWARD"}, {"name": 7}]
    }
    g = events_to_graph([ev])
    dropped = [p.message.split(" dropped")[0] for p in g.problems if p.code == "openlineage-bad-facet"]
    assert dropped == ["$.inputs[0].facets.ownership.owners[0]", "$.inputs[0].facets.ownership.owners[2]"]
    (src,) = [d for d in g.datasets if d.name.endswith("customers")]
    assert src.owners == ["team:crm"] and src.description == "Every customer"


def test_a_bad_tag_is_dropped_alone_and_a_broken_tags_facet_whole() -> None:
    ev = copy.deepcopy(EVENT)
    ev["job"]["facets"]["tags"] = {"tags": [{"key": "nightly"}, {"key": "team", "value": "crm"}]}
    ev["inputs"][0]["facets"]["tags"] = {"tags": {"key": "pii", "value": "true"}}  # not a list
    g = events_to_graph([ev])
    dropped = sorted(p.message.split(" dropped")[0] for p in g.problems if p.code == "openlineage-bad-facet")
    assert dropped == ["$.inputs[0].facets.tags", "$.job.facets.tags.tags[0]"]
    (proc,) = g.processes
    assert proc.tags == ["team:crm"]
    (src,) = [d for d in g.datasets if d.name.endswith("customers")]
    assert src.tags == []


def test_one_bad_column_lineage_entry_drops_that_entry_not_the_facet() -> None:
    ev = copy.deepcopy(EVENT)
    ns, name = "postgres://db:5432", "shop.public.customers"
    ev["outputs"][0]["facets"] = {
        "columnLineage": {
            "fields": {
                "id": {"inputFields": [{"namespace": ns, "name": name, "field": "id"}]},
                "email": {"inputFields": [{"namespace": ns, "field": "email"}]},  # no name
                "mail2": {"inputFields": "email"},  # not a list: the column's entry goes
                "both": {
                    "inputFields": [
                        {"namespace": ns, "name": name, "field": "id"},
                        {"namespace": ns, "name": name, "field": "email", "transformations": [{}]},
                    ]
                },
            },
            "dataset": [{"namespace": ns, "name": name, "field": "id"}, {"name": name}],
        }
    }
    g = events_to_graph([ev])
    dropped = sorted(p.message.split(" dropped")[0] for p in g.problems if p.code == "openlineage-bad-facet")
    base = "$.outputs[0].facets.columnLineage"
    assert dropped == [
        f"{base}.dataset[1]",
        f"{base}.fields.both.inputFields[1]",
        f"{base}.fields.email.inputFields[0]",
        f"{base}.fields.mail2",
    ]
    edges = {(e.source.column, e.target.column) for e in g.edges}
    assert edges == {("id", "id"), ("id", "both"), ("id", None)}
