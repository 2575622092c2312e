"""OpenLineage's own test files (tests/data/openlineage/upstream/, origins in its README): the reader
takes the documentation, ownership and tags facets and schema field descriptions they carry.

Every expectation below was written by reading the file, not from the reader's output. The spec's
facet tests (``spec_*.json``) are facets alone; they are put into a minimal RunEvent here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atlas_sync.lineage.model import LineageGraph
from atlas_sync.lineage.openlineage import events_to_graph
from atlas_sync.lineage.registry import read

UP = Path(__file__).resolve().parents[2] / "data" / "openlineage" / "upstream"


def _read(name: str) -> LineageGraph:
    # dbt's expected-event files are templates (`"runId": "{{ any(result) }}"`): not spec-valid runIds
    return read("openlineage", [str(UP / name)], lenient_events=name.startswith("dbt_"))


def _described(g: LineageGraph) -> dict[str, str]:
    """``<dataset id>.<column>`` -> description, for every column that has one."""
    return {f"{d.id}.{c.name}": c.description for d in g.datasets for c in d.columns if c.description}


def _event(dataset_facets: dict[str, Any] | None = None, job_facets: dict[str, Any] | None = None) -> Any:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2025-01-01T00:00:00Z",
        "producer": "https://example.com/test",
        "run": {"runId": "0195a6c4-0000-7000-8000-000000000001"},
        "job": {"namespace": "ns", "name": "job", "facets": job_facets or {}},
        "inputs": [],
        "outputs": [{"namespace": "ns", "name": "db.users", "facets": dataset_facets or {}}],
    }


def _spec_facet(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((UP / f"spec_{name}_1.json").read_text(encoding="utf-8"))
    return data


def test_python_client_full_event_job_documentation_and_field_description() -> None:
    g = _read("python-client_example_full_event.json")
    (proc,) = g.processes
    assert proc.description == "string"
    (ds,) = g.datasets  # the same table is the input and the output
    assert ds.id == "instance.schema.table" and ds.description is None and not ds.owners and not ds.tags
    assert _described(g) == {"instance.schema.table.column1": "string"}
    assert proc.tags == []  # its tags facet is a run facet (TagsRunFacet), not the job's


def test_fluentd_full_event_dataset_and_job_documentation() -> None:
    g = _read("fluentd_event_full.json")
    (proc,) = g.processes
    assert proc.description == "string"
    (ds,) = g.datasets
    assert ds.description == "canonical representation of entity Foo"
    assert _described(g) == {"instance.schema.table.column1": "string"}
    assert not g.problems


def test_dbt_small_expected_events_documentation_and_ownership() -> None:
    g = _read("dbt_small_result.json")
    by = {d.name: d for d in g.datasets}
    assert by["source_table"].description == "A source table" and not by["source_table"].owners
    assert by["test_model"].description == "A starter dbt model"
    assert by["test_model"].owners == ["data_team"]
    assert _described(g) == {}  # the model's one field `id` has no description
    (proc,) = g.processes
    assert proc.description is None and not proc.owners


def test_dbt_postgres_expected_events_column_descriptions() -> None:
    g = _read("dbt_postgres_result.json")
    described = _described(g)
    per_dataset: dict[str, int] = {}
    for key in described:
        per_dataset[key.rsplit(".", 1)[0]] = per_dataset.get(key.rsplit(".", 1)[0], 0) + 1
    assert per_dataset == {"postgres.public.customers": 9, "postgres.public.orders": 9}
    assert described["postgres.public.customers.first_name"] == "Customer's first name. PII."
    assert described["postgres.public.orders.status"].startswith(
        "Orders can be one of the following statuses:"
    )
    assert "| returned       |" in described["postgres.public.orders.status"]  # the markdown table kept
    assert not [d for d in g.datasets if d.description or d.owners or d.tags]


def test_fluentd_invalid_ownership_drops_the_owner_without_name_with_a_warning() -> None:
    g = _read("fluentd_event_invalid_dataset_facet.json")
    (ds,) = g.datasets
    assert ds.owners == []
    (warning,) = [p for p in g.problems if p.code == "openlineage-bad-facet"]
    assert warning.message.startswith("$.outputs[0].facets.ownership.owners[0] dropped ('name' is required")
    assert warning.file is not None and warning.file.endswith("fluentd_event_invalid_dataset_facet.json")


def test_spec_tags_dataset_facet_puts_a_field_tag_on_its_column() -> None:
    g = events_to_graph([_event(dataset_facets=_spec_facet("TagsDatasetFacet"))])
    (ds,) = g.datasets
    assert ds.tags == ["test_tag2:test_value2"]
    cols = {c.name: c for c in ds.columns}
    assert list(cols["email"].tags) == ["test_tag:test_value"]  # `field: email`; not in any schema


def test_spec_tags_job_facet_and_ownership_dataset_facet() -> None:
    g = events_to_graph(
        [_event(dataset_facets=_spec_facet("OwnershipDatasetFacet"), job_facets=_spec_facet("TagsJobFacet"))]
    )
    (proc,) = g.processes
    assert proc.tags == ["test_tag:test_value", "test_tag2:test_value2"]
    (ds,) = g.datasets
    assert ds.owners == ["owner"]


def test_spec_schema_facet_nested_field_descriptions() -> None:
    g = events_to_graph([_event(dataset_facets=_spec_facet("SchemaDatasetFacet"))])
    (ds,) = g.datasets
    assert len(ds.columns) == 17  # 7 top-level fields, 10 nested ones (as parent.child)
    assert _described(g) == {
        "db.users.phones": "List of phone numbers",
        "db.users.phones._element": "Phone number",
        "db.users.addresses": "Has customer completed activation process",
        "db.users.addresses.type": "Address type, g.e. home, work, etc.",
        "db.users.addresses.country": "Country name",
        "db.users.addresses.zip": "Zip code",
        "db.users.addresses.state": "State name",
        "db.users.addresses.street": "Street name",
    }
