"""The dbt reader and openlineage-dbt name the project's tables alike: syncing both into one domain
gives one entity per table.

``tests/data/dbt/artifacts/1.10/openlineage.jsonl`` is what ``dbt-ol build`` (openlineage-dbt, file
transport) emitted in the run that wrote that folder's artifacts (tests/data/dbt/README.md);
test_regenerate.py makes such a run again when dbt-ol is installed.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from atlas_sync.api import Publisher
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage import registry

DATA = Path(__file__).resolve().parents[2] / "data" / "dbt"
RUN = DATA / "artifacts" / "1.10"
# What openlineage-dbt names that is no table: the ephemeral model, which it lists as an input of
# `orders` (it does not resolve ephemeral models), and the CTE `orders` of customers.sql, which its
# SQL parser takes for a table in the column lineage facet (it does not see through `select *`).
OPENLINEAGE_ONLY = {"jaffle.main.int_order_payments", "orders"}


def ids(graph) -> set[str]:
    return {d.id for d in graph.datasets}


def openlineage(path: Path):
    return registry.read("openlineage", [str(path)], event_types=["COMPLETE"])


def test_openlineage_dbt_names_every_table_as_the_dbt_reader_does():
    dbt, ol = registry.read("dbt", [str(RUN)]), openlineage(RUN / "openlineage.jsonl")
    assert ids(ol) - ids(dbt) == OPENLINEAGE_ONLY
    # every model, snapshot and source openlineage-dbt saw is a dataset of the dbt reader
    assert len(ids(ol) & ids(dbt)) == 14
    for p in ol.processes:  # and reads and writes the same tables as dbt's processes
        assert set(p.outputs) <= ids(dbt)


def test_syncing_both_into_one_domain_gives_one_entity_per_table():
    client = embedded_client(emulator=Emulator(None))
    dbt, ol = registry.read("dbt", [str(RUN)]), openlineage(RUN / "openlineage.jsonl")
    Publisher(client, profile="lineage", domain="shop").sync(dbt)
    Publisher(client, profile="lineage", domain="shop").sync(ol, job="dbt-ol")
    names = Counter(
        h["attributes"]["qualifiedName"]
        for h in client.search_basic("lineage_dataset", attributes=["qualifiedName"])
    )
    assert set(names.values()) == {1}
    assert set(names) == {f"{i}@shop" for i in ids(dbt) | OPENLINEAGE_ONLY}
