"""OpenLineage's own test files synced into Atlas (the emulator; a real Atlas when ``ATLAS_URL`` is set):
what their documentation, ownership and tags facets and schema field descriptions state lands on the
entities. Files and origins: tests/data/openlineage/upstream/README.md; the counts are read off the files.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.lineage.openlineage import events_to_graph

UP = Path(__file__).resolve().parents[1] / "data" / "openlineage" / "upstream"
EVENT_FILES = [
    "python-client_example_full_event.json",
    "fluentd_event_full.json",
    "dbt_small_result.json",
    "dbt_postgres_result.json",
]


@pytest.fixture
def domain(client: AtlasClient) -> Iterator[str]:
    name = "olup" + uuid.uuid4().hex[:8]
    yield name
    Publisher(client, domain=name).teardown(purge=True)


def _landed(client: AtlasClient, pub: Publisher) -> dict[str, dict[str, Any]]:
    """qualifiedName (without the domain) -> the entity's attributes, for everything of the domain."""
    headers = pub.list_domain()
    ents = client.get_entities([h.guid for h in headers.values()])
    return {e["attributes"]["qualifiedName"].rsplit("@", 1)[0]: {**e["attributes"], "_e": e} for e in ents}


def test_documentation_ownership_and_field_descriptions_land_on_the_entities(
    client: AtlasClient, domain: str
) -> None:
    pub = Publisher(client, domain=domain)
    # (dbt's expected-event files are templates: `"runId": "{{ any(result) }}"`, not spec-valid values)
    files = [str(UP / f) for f in EVENT_FILES]
    pub.sync(pub.read("openlineage", files, lenient_events=True), job="upstream")
    got = _landed(client, pub)
    datasets = {k: a for k, a in got.items() if a["_e"]["typeName"] == "lineage_dataset"}
    described = {k: a["description"] for k, a in datasets.items() if a.get("description")}
    assert described == {
        "instance.schema.table": "canonical representation of entity Foo",  # fluentd's documentation
        '"random-gcp-project".dbt_test1.source_table': "A source table",
        '"random-gcp-project".dbt_test1.test_model': "A starter dbt model",
    }
    owned = {k: a["owner"] for k, a in datasets.items() if a.get("owner")}
    assert owned == {'"random-gcp-project".dbt_test1.test_model': "data_team"}
    columns = {k: a for k, a in got.items() if a["_e"]["typeName"] == "lineage_column"}
    col_desc = {k: a["description"] for k, a in columns.items() if a.get("description")}
    assert len(col_desc) == 1 + 9 + 9  # column1; customers' and orders' fields
    assert col_desc["instance.schema.table.column1"] == "string"
    assert col_desc["postgres.public.customers.last_name"] == "Customer's last name. PII."
    assert (
        col_desc["postgres.public.orders.gift_card_amount"]
        == "Amount of the order (AUD) paid for by gift card"
    )
    procs = {k: a for k, a in got.items() if a["_e"]["typeName"] == "lineage_process"}
    proc_desc = {a["name"]: a["description"] for a in procs.values() if a.get("description")}
    assert proc_desc == {"myjob.mytask": "string"}  # both client files document the job so
    # a re-sync of the same files writes nothing
    client.stats.reset()
    assert pub.sync(pub.read("openlineage", files, lenient_events=True), job="upstream").applied is None
    assert client.stats["entity_write"].requests == 0


def _spec(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((UP / f"spec_{name}_1.json").read_text(encoding="utf-8"))
    return data


def test_spec_tags_and_ownership_facets_publish_owner_and_feed_rules(
    client: AtlasClient, domain: str, tmp_path: Path
) -> None:
    """The spec's facet tests in one event: its owner lands as the dataset's owner; its tags
    (``key:value`` forms, not valid Atlas labels) stay in the model, where a rule turns the field-level
    one into a classification on that column."""
    pii = "Tagged_" + domain
    client.create_typedefs({"classificationDefs": [{"name": pii, "attributeDefs": [], "superTypes": []}]})
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2025-01-01T00:00:00Z",
        "producer": "https://example.com/test",
        "run": {"runId": "0195a6c4-0000-7000-8000-000000000002"},
        "job": {"namespace": "ns", "name": "job", "facets": _spec("TagsJobFacet")},
        "inputs": [],
        "outputs": [
            {
                "namespace": "ns",
                "name": "db.users",
                "facets": {**_spec("OwnershipDatasetFacet"), **_spec("TagsDatasetFacet")},
            }
        ],
    }
    rules = tmp_path / "rules.toml"
    rules.write_text(f'[[rules]]\ntagged = ["test_tag:test_value"]\nclassifications = ["{pii}"]\n')
    pub = Publisher(client, domain=domain, metadata_rules=rules)
    pub.sync(events_to_graph([event]), job="spec")
    got = _landed(client, pub)
    assert got["db.users"]["owner"] == "owner"
    classified = {  # its own classification (Atlas propagates the process's to its output)
        k
        for k, a in got.items()
        if any(
            c["typeName"] == pii and c.get("entityGuid") in (None, a["_e"]["guid"])
            for c in a["_e"].get("classifications") or []
        )
    }
    # the field tag is on `email`; the job has the same tag, so the process is classified too
    assert classified == {"db.users.email", next(k for k, a in got.items() if a.get("name") == "job")}
    assert not any(a["_e"].get("labels") for a in got.values())
