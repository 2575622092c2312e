"""The atlas-hook write path against a real Apache Atlas and its own Kafka (run by .ci/real-atlas.sh).

Skipped without ``ATLAS_URL`` and ``ATLAS_HOOK_BOOTSTRAP_SERVERS`` (the launcher's ``env`` prints both: the
real Atlas starts with embedded Kafka). Writes go as ``ENTITY_CREATE_V2`` / ``ENTITY_FULL_UPDATE_V2`` /
``ENTITY_DELETE_V2`` messages to ``ATLAS_HOOK``; what Atlas then holds is read back through REST. Expected
counts are derived by hand from DOC and the lineage profile's rules (docs/profiles.md), as in
test_real_atlas_publish.py.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.atlas.hook import AtlasHookClient, HookConfig, HookProducer, wait_until
from atlas_sync.config import load_settings
from atlas_sync.factory import client_from_settings
from atlas_sync.lineage.model import LineageGraph

pytestmark = pytest.mark.skipif(
    not (os.environ.get("ATLAS_URL") and os.environ.get("ATLAS_HOOK_BOOTSTRAP_SERVERS")),
    reason="needs a real Atlas and its Kafka (ATLAS_URL, ATLAS_HOOK_BOOTSTRAP_SERVERS)",
)

DOC = {
    "datasets": [
        {
            "id": "raw.orders",
            "namespace": "raw",
            "name": "orders",
            "columns": [{"name": "id", "type": "int"}],
        },
        {"id": "mart.sums", "namespace": "mart", "name": "sums", "columns": [{"name": "id", "type": "int"}]},
        {"id": "mart.top", "namespace": "mart", "name": "top", "columns": [{"name": "id", "type": "int"}]},
    ],
    "processes": [
        {"id": "sum", "name": "sum", "inputs": ["raw.orders"], "outputs": ["mart.sums"]},
        {"id": "top", "name": "top", "inputs": ["mart.sums"], "outputs": ["mart.top"]},
    ],
    "edges": [
        {"source": "raw.orders.id", "target": "mart.sums.id", "kind": "IDENTITY", "process": "sum"},
        {"source": "mart.sums.id", "target": "mart.top.id", "kind": "IDENTITY", "process": "top"},
    ],
}
# 3 datasets + 3 columns + 2 processes + 2 column lineages
TOTAL = 10
WAIT = 180.0


def rest() -> AtlasClient:
    # ATLAS_URL, ATLAS_USERNAME, ATLAS_PASSWORD or ATLAS_PASSWORD_FILE, as the CLI reads them
    return client_from_settings(load_settings())


def hook_client() -> AtlasHookClient:
    config = HookConfig(bootstrap_servers=os.environ["ATLAS_HOOK_BOOTSTRAP_SERVERS"])
    return AtlasHookClient(rest(), HookProducer(config))


def graph(doc: dict[str, Any] = DOC) -> LineageGraph:
    g = LineageGraph.from_document(doc)
    g.job = "hooked"
    return g


def pending(domain: str, g: LineageGraph) -> int:
    plan = Publisher(rest(), domain=domain).plan(g, force=True)
    return sum(1 for i in plan.items if i.action != "unchanged")


def test_creates_updates_and_deletes_sent_to_atlas_hook_land_in_the_real_atlas() -> None:
    domain = f"hook{uuid.uuid4().hex[:8]}"
    client = hook_client()
    pub = Publisher(client, domain=domain, batch_size=4)  # several messages, referring across messages
    try:
        first = pub.sync(graph())
        assert first.plan.counts["create"] == TOTAL
        assert client.queued.created == TOTAL and client.queued.messages >= 3
        assert wait_until(lambda: pending(domain, graph()), WAIT) == 0
        atlas = rest()
        procs = list(
            atlas.search_basic("lineage_process", query=None, attributes=["qualifiedName", "inputs"])
        )
        mine = {
            h["attributes"]["qualifiedName"]: h
            for h in procs
            if h["attributes"]["qualifiedName"].endswith(domain)
        }
        assert sorted(mine) == [f"hooked:sum@{domain}", f"hooked:top@{domain}"]
        top = atlas.get_entity(mine[f"hooked:top@{domain}"]["guid"])
        assert [i["uniqueAttributes"]["qualifiedName"] for i in top["attributes"]["inputs"]] == [
            f"mart.sums@{domain}"
        ]

        # an update (a column's type) and a delete (the second process's column lineage)
        changed = json.loads(json.dumps(DOC))
        changed["datasets"][0]["columns"][0]["type"] = "bigint"
        changed["edges"] = changed["edges"][:1]
        second = Publisher(hook_client(), domain=domain).sync(graph(changed))
        assert second.plan.counts == {"create": 0, "update": 1, "delete": 1, "unchanged": TOTAL - 2}
        assert wait_until(lambda: pending(domain, graph(changed)), WAIT) == 0
        column = atlas.get_entity_by_unique("lineage_column", f"raw.orders.id@{domain}")
        assert column is not None and column["attributes"]["dataType"] == "bigint"
        gone = f"hooked:top:mart.top.id@{domain}"
        assert atlas.get_entity_by_unique("lineage_column_lineage", gone) is None
        # the same input again queues nothing
        hook = hook_client()
        again = Publisher(hook, domain=domain).sync(graph(changed))
        assert again.applied is None and hook.queued.messages == 0
    finally:
        Publisher(rest(), domain=domain).teardown(purge=True)


def test_openlineage_events_from_kafka_reach_the_real_atlas_through_atlas_hook(tmp_path: Any) -> None:
    """Kafka in (openlineage-python's KafkaTransport), ATLAS_HOOK out: the consumer group path end to end."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from kafka_broker.helpers import at_end, ol_client, run_event, wait_for

    from atlas_sync.openlineage_server.consumer import ConsumerConfig, KafkaLineageConsumer

    bootstrap = os.environ["ATLAS_HOOK_BOOTSTRAP_SERVERS"]
    domain = f"olhook{uuid.uuid4().hex[:8]}"
    topic = f"openlineage-{uuid.uuid4().hex[:8]}"
    client = ol_client(bootstrap, topic)
    for job in ("a", "b"):
        for run in (1, 2):
            client.emit(run_event(job, run))
    hook = hook_client()
    pub = Publisher(hook, domain=domain)
    config = ConsumerConfig(bootstrap, (topic,), group_id=topic, dead_letter_path=tmp_path / "dead.jsonl")
    worker = KafkaLineageConsumer(lambda g, job: pub.sync(g, job, force=True), config)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        assert wait_for(lambda: at_end(bootstrap, topic, topic), timeout=120)
    finally:
        worker.stop()
        thread.join(30)
    assert worker.metrics()["dead_lettered"] == 0
    atlas = rest()

    def live_outputs() -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for h in atlas.search_basic("lineage_process", attributes=["qualifiedName"]):
            qn = h["attributes"]["qualifiedName"]
            if not qn.endswith("@" + domain):
                continue
            entity = atlas.get_entity(h["guid"])
            out[qn] = sorted(
                o["uniqueAttributes"]["qualifiedName"]
                for o in entity["attributes"].get("outputs") or []
                if atlas.get_entity(o["guid"])["status"] == "ACTIVE"
            )
        return out

    expected = {
        f"spark-prod/a@{domain}": [f"mart.a_v2@{domain}"],
        f"spark-prod/b@{domain}": [f"mart.b_v2@{domain}"],
    }
    assert wait_for(lambda: live_outputs() == expected, timeout=WAIT, step=2.0), live_outputs()
    Publisher(rest(), domain=domain).teardown(purge=True)


def test_sync_command_queues_to_atlas_hook_and_waits_until_atlas_shows_it(tmp_path: Any) -> None:
    import subprocess

    domain = f"hookcli{uuid.uuid4().hex[:8]}"
    (tmp_path / "etl.sql").write_text("insert into mart.t select id, name from raw.s")
    cmd = [
        sys.executable, "-m", "atlas_sync.cli.main", "sync", "-d", domain, "--from", "sql", "etl.sql",
        "--write-path", "atlas-hook", "--wait", str(WAIT),
    ]  # fmt: skip
    env = dict(os.environ, ATLAS_SYNC_DATA_DIR=str(tmp_path / "data"))
    try:
        res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=WAIT + 60)
        assert res.returncode == 0, res.stdout + res.stderr
        # by hand: 2 tables + 4 columns (raw.s id/name, mart.t id/name) + 1 process + 2 column lineages
        assert (
            "Queued: 9 created, 0 updated, 0 deleted in 1 hook message to Kafka topic ATLAS_HOOK"
            in res.stdout
        )
        assert "Atlas shows every change." in res.stdout
        again = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
        assert again.returncode == 0 and "Nothing to do" in again.stdout, again.stdout + again.stderr
    finally:
        Publisher(rest(), domain=domain).teardown(purge=True)
