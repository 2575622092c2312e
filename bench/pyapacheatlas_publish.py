"""The baseline of bench/whole_process.py: a pyapacheatlas user's script publishing a lineage document.

It reads the same file as ``atlas-sync sync --from graph FILE`` (datasets with their columns,
processes, column edges) and publishes the same types and relationships as the ``lineage`` profile,
without atlas-sync's bookkeeping (no ``atlasSync*`` attribute):

* a ``lineage_dataset`` per dataset (qualifiedName, name, namespace, kind);
* a ``lineage_column`` per column (qualifiedName, name, displayName, dataType, position), in its
  dataset through the ``lineage_dataset_columns`` composition (relationship attribute ``dataset``);
* a ``lineage_process`` per process (qualifiedName, name, kind, queryText, inputs, outputs);
* a ``lineage_column_lineage`` per process and target column (qualifiedName, name, dependencyType,
  inputs, outputs), in its process through the ``lineage_process_column_lineages`` composition
  (relationship attribute ``process``).

Entities are pyapacheatlas's ``AtlasEntity`` / ``AtlasProcess`` with guids from its ``GuidTracker``;
references are by unique attribute (``typeName`` + ``uniqueAttributes.qualifiedName``), as its users
write them, and ``upload_entities(batch_size=B)`` is called once per dependency level (datasets; columns
and processes; column lineages): pyapacheatlas's batching follows negative guids only through
relationship attributes and reorders batches, so links by placeholder guid across batches fail.
Every run uploads everything again, as its users do.

    python bench/pyapacheatlas_publish.py URL GRAPH_FILE DOMAIN BATCH_SIZE
    (ATLAS_USERNAME and ATLAS_PASSWORD in the environment)
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from typing import Any

from pyapacheatlas.auth.basic import BasicAuthentication
from pyapacheatlas.core.client import AtlasClient
from pyapacheatlas.core.entity import AtlasEntity, AtlasProcess
from pyapacheatlas.core.util import GuidTracker

# the lineage profile's order of dependency kinds: the strongest names a column lineage of several
DIRECT = ("IDENTITY", "TRANSFORMATION", "AGGREGATION")


def ref(type_name: str, qualified_name: str) -> dict[str, Any]:
    return {"typeName": type_name, "uniqueAttributes": {"qualifiedName": qualified_name}}


def build(doc: dict[str, Any], domain: str) -> list[list[AtlasEntity]]:
    """The entities of the document, in dependency levels."""
    gt = GuidTracker()
    job = doc.get("job") or "default"
    datasets, columns, processes, lineages = [], [], [], []
    for ds in doc.get("datasets", []):
        ds_qn = f"{ds['id']}@{domain}"
        datasets.append(
            AtlasEntity(
                ds["name"],
                "lineage_dataset",
                ds_qn,
                guid=gt.get_guid(),
                attributes={"namespace": ds.get("namespace"), "kind": ds.get("kind", "table")},
            )
        )
        for pos, col in enumerate(ds.get("columns", [])):
            columns.append(
                AtlasEntity(
                    col["name"],
                    "lineage_column",
                    f"{ds['id']}.{col['name']}@{domain}",
                    guid=gt.get_guid(),
                    attributes={
                        "displayName": f"{ds['name']}.{col['name']}",
                        "dataType": col.get("type"),
                        "position": pos,
                    },
                    relationshipAttributes={"dataset": ref("lineage_dataset", ds_qn)},
                )
            )
    process_qn = {}
    for p in doc.get("processes", []):
        qn = process_qn[p["id"]] = f"{job}:{p['id']}@{domain}"
        processes.append(
            AtlasProcess(
                p.get("name") or p["id"],
                "lineage_process",
                qn,
                inputs=[ref("lineage_dataset", f"{d}@{domain}") for d in p.get("inputs", [])],
                outputs=[ref("lineage_dataset", f"{d}@{domain}") for d in p.get("outputs", [])],
                guid=gt.get_guid(),
                attributes={"kind": "job", "queryText": (p.get("attributes") or {}).get("queryText")},
            )
        )

    def column(dotted: str) -> str:
        ds_id, col = dotted.rsplit(".", 1)
        return f"{ds_id}.{col}@{domain}"

    # one column lineage per process, target column and kind (the direct kinds together)
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for e in doc.get("edges", []):
        kind = e.get("kind", "IDENTITY")
        if e.get("process") in process_qn:
            groups[(e["process"], e["target"], "DIRECT" if kind in DIRECT else kind)].append(e)
    for (pid, target, bucket), edges in groups.items():
        kinds = {e.get("kind", "IDENTITY") for e in edges}
        kind = next(k for k in reversed(DIRECT) if k in kinds) if bucket == "DIRECT" else bucket
        name = target if bucket == "DIRECT" else f"{target}:{kind}"
        local = process_qn[pid].rsplit("@", 1)[0]
        sources = list(dict.fromkeys(column(e["source"]) for e in edges))
        lineages.append(
            AtlasProcess(
                name,
                "lineage_column_lineage",
                f"{local}:{name}@{domain}",
                inputs=[ref("lineage_column", s) for s in sources],
                outputs=[ref("lineage_column", column(target))],
                guid=gt.get_guid(),
                attributes={"dependencyType": kind},
                relationshipAttributes={"process": ref("lineage_process", process_qn[pid])},
            )
        )
    return [datasets, columns + processes, lineages]


def main(argv: list[str]) -> int:
    url, path, domain, batch = argv[0], argv[1], argv[2], int(argv[3])
    auth = BasicAuthentication(username=os.environ["ATLAS_USERNAME"], password=os.environ["ATLAS_PASSWORD"])
    client = AtlasClient(url + "/api/atlas/v2", auth)
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    for level in build(doc, domain):
        if level:
            client.upload_entities(level, batch_size=batch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
