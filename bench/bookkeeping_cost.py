"""What bookkeeping costs the server: raw bulk uploads, one variable at a time (issue 40 item 1).

Every variant uploads the same lineage (issue 15's workload, bench/issue_workload.py: N processes, ~12.3 N
entities) in the ``lineage`` profile's shape: datasets, their columns (a composition: relationship
attribute ``dataset``), processes, one column-lineage process per target column (a composition:
relationship attribute ``process``), with the profile's own attributes (typedefs/lineage without the
``atlasSync*`` ones). Each variant registers its own throw-away types (``<prefix><8 hex>_dataset`` ...,
unique per variant and run; its entities' names end in ``@<prefix><8 hex>``), untimed, then uploads with ``POST /v2/entity/bulk`` (plain
``requests``, no library in between), one dependency level after the other (datasets; columns and
processes; column lineages), B entities per request. Timed: from the first request to the last answer, with the retries of a request answered 5xx (Atlas 2.1's
BerkeleyDB times out on locks under other writers; counted in the table).

The variables, one at a time against the baseline (no extra attribute, references by unique attribute,
500 per request):

* ``attrs-K``: K = 1..5 extra string attributes, not indexed, 32-character values;
* ``attrs-4-indexed``: the same four, all indexed; ``atlas-sync-4``: four of atlas-sync's lengths
  (5, 13, 21, 21 characters: job, digest, scope key, job key) of which three indexed, as atlas-sync's
  types had them before issue 40; ``atlas-sync-3``: the three it writes now (owner 5, key 42 indexed,
  digest 13 characters); ``declared-4-unset``: those four declared in the types, none set (what the
  ``lineage_*`` types cost a writer that leaves them unset);
* ``len-L``: four not-indexed attributes of L = 8, 128, 512 characters (32: ``attrs-4``);
* ``guid-refs``: references by guid (the guids the earlier levels' answers assigned) instead of by
  unique attribute;
* ``batch-B``: 100 or 1000 entities per request.

After ``--warmup`` untimed baseline uploads (the first upload into new types on a fresh server is slow),
the baseline runs first and last (``base`` / ``base-again``): their difference is the drift of the
server over the run (its graph grows, the machine's load moves); ratios are to the first baseline
unless ``--repeat`` gives several rounds (then medians, each ratio to its round's first baseline; odd
rounds take the variants between the first and the last in reverse order).

Each variant's entities and types stay in Atlas (their prefixes are printed); ``--cleanup`` deletes and
purges them and deletes the types at the end, untimed (slow on Atlas 2.1: purging 2,500 such entities
took minutes on a busy server). Targets ``--atlas-url`` or ``$ATLAS_URL`` (credentials ``ATLAS_USERNAME`` and
``ATLAS_PASSWORD`` or ``ATLAS_PASSWORD_FILE``); without either an emulator with issue 15's latency model
(a smoke test: its costs are not Atlas's).

    eval "$(.venv/bin/python -m tests.support.real_atlas env --home build/real-atlas/home)"
    .venv/bin/python bench/bookkeeping_cost.py --processes 1000          # ~12.3k entities a variant
    .venv/bin/python bench/bookkeeping_cost.py --processes 100 --variants base,attrs-4,base-again
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import sync_bench  # noqa: E402  (credentials, the emulator launcher)
from issue_workload import issue_graph  # noqa: E402

TYPEDEFS = HERE.parent / "typedefs" / "lineage" / "0010-lineage_model.json"
KINDS = ("dataset", "column", "process", "column_lineage")
RETRIES = 2  # of a request answered 5xx (Atlas 2.1 on BerkeleyDB: lock timeouts under other writers)
ATLAS_SYNC_LENGTHS = (5, 13, 21, 21)  # atlasSyncJob, atlasSyncDigest, atlasSyncScope, atlasSyncJobKey
# since issue 40: atlasSyncJob, atlasSyncKey (d<20 hex>j<20 hex>, the only one indexed), atlasSyncDigest
ATLAS_SYNC_3_LENGTHS = (5, 42, 13)


@dataclass(frozen=True)
class Variant:
    name: str
    attrs: int = 0  # extra string attributes set on every entity
    indexed: tuple[bool, ...] = ()  # per extra attribute
    lengths: tuple[int, ...] = ()  # value length per extra attribute
    declared_only: bool = False  # declared in the types but not set
    refs: str = "unique"  # "unique" or "guid"
    batch: int = 500
    what: str = ""


def _variants() -> list[Variant]:
    base = Variant("base", what="no extra attribute, refs by unique attribute, 500 per request")
    out = [base]
    for k in range(1, 6):
        out.append(
            Variant(f"attrs-{k}", k, (False,) * k, (32,) * k, what=f"+{k} string attributes, 32 chars")
        )
    out.append(Variant("attrs-4-indexed", 4, (True,) * 4, (32,) * 4, what="+4, 32 chars, all indexed"))
    out.append(
        Variant(
            "atlas-sync-4",
            4,
            (True, False, True, True),
            ATLAS_SYNC_LENGTHS,
            what="+4 of atlas-sync's lengths (5/13/21/21), 3 indexed",
        )
    )
    out.append(
        Variant(
            "atlas-sync-3",
            3,
            (False, True, False),
            ATLAS_SYNC_3_LENGTHS,
            what="+3 of atlas-sync's lengths now (5/42/13), the key indexed",
        )
    )
    out.append(
        Variant(
            "declared-4-unset",
            4,
            (True, False, True, True),
            ATLAS_SYNC_LENGTHS,
            declared_only=True,
            what="atlas-sync's 4 declared in the types, none set",
        )
    )
    for length in (8, 128, 512):
        out.append(Variant(f"len-{length}", 4, (False,) * 4, (length,) * 4, what=f"+4, {length} chars"))
    out.append(Variant("guid-refs", refs="guid", what="no extra attribute, refs by guid"))
    for b in (100, 1000):
        out.append(Variant(f"batch-{b}", batch=b, what=f"no extra attribute, {b} per request"))
    out.append(Variant("base-again", what="the baseline again (drift)"))
    return out


VARIANTS = {v.name: v for v in _variants()}


# --------------------------------------------------------------------------- types


def typedefs(prefix: str, v: Variant) -> dict[str, Any]:
    """The ``lineage`` profile's entity and relationship types, renamed under ``prefix``, without the
    ``atlasSync*`` attributes, plus the variant's extra attributes ``bk0``..."""
    src = json.loads(TYPEDEFS.read_text(encoding="utf-8"))
    names = {f"lineage_{k}": f"{prefix}_{k}" for k in KINDS}
    extra = [
        {
            "name": f"bk{i}",
            "typeName": "string",
            "isOptional": True,
            "cardinality": "SINGLE",
            "isUnique": False,
            "isIndexable": v.indexed[i],
        }
        for i in range(v.attrs)
    ]
    entity_defs = []
    for d in src["entityDefs"]:
        if d["name"] not in names:
            continue
        d = copy.deepcopy(d)
        d["name"] = names[d["name"]]
        d["serviceType"] = "atlas_sync_bench"
        d["attributeDefs"] = [a for a in d["attributeDefs"] if not a["name"].startswith("atlasSync")] + extra
        entity_defs.append(d)
    rel_defs = []
    for r in src.get("relationshipDefs", []):
        r = copy.deepcopy(r)
        r["name"] = prefix + "_" + r["name"]
        r["serviceType"] = "atlas_sync_bench"
        for end in ("endDef1", "endDef2"):
            r[end]["type"] = names[r[end]["type"]]
        rel_defs.append(r)
    return {"entityDefs": entity_defs, "relationshipDefs": rel_defs}


# --------------------------------------------------------------------------- entities


def entity_levels(doc: dict[str, Any], prefix: str, run: str, v: Variant) -> list[list[dict[str, Any]]]:
    """The document's entities in dependency levels, references by unique attribute (``{"typeName",
    "uniqueAttributes"}``; :func:`to_guid_refs` turns them into guids)."""
    t = {k: f"{prefix}_{k}" for k in KINDS}
    sfx = "@" + run
    guid = iter(range(-1, -(10**9), -1))

    def ref(kind: str, qn: str) -> dict[str, Any]:
        return {"typeName": t[kind], "uniqueAttributes": {"qualifiedName": qn}}

    def ent(kind: str, qn: str, attrs: dict[str, Any], rels: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "typeName": t[kind],
            "guid": str(next(guid)),
            "attributes": {"qualifiedName": qn, **attrs},
        }
        if not v.declared_only:
            # values unique per entity (as a digest is), of the variant's lengths
            seed = uuid.uuid5(uuid.NAMESPACE_URL, qn).hex * 16
            for i in range(v.attrs):
                body["attributes"][f"bk{i}"] = seed[i : i + v.lengths[i]]
        if rels:
            body["relationshipAttributes"] = rels
        return body

    datasets, level1, lineages = [], [], []
    for ds in doc["datasets"]:
        dqn = ds["id"] + sfx
        datasets.append(
            ent("dataset", dqn, {"name": ds["name"], "namespace": ds["namespace"], "kind": "table"})
        )
        for pos, c in enumerate(ds["columns"]):
            level1.append(
                ent(
                    "column",
                    f"{ds['id']}.{c['name']}{sfx}",
                    {
                        "name": c["name"],
                        "displayName": f"{ds['name']}.{c['name']}",
                        "dataType": c["type"],
                        "position": pos,
                    },
                    {"dataset": ref("dataset", dqn)},
                )
            )
    job = doc.get("job") or "bench"
    for p in doc["processes"]:
        level1.append(
            ent(
                "process",
                f"{job}:{p['id']}{sfx}",
                {
                    "name": p["name"],
                    "kind": "job",
                    "queryText": p["attributes"].get("queryText"),
                    "inputs": [ref("dataset", d + sfx) for d in p["inputs"]],
                    "outputs": [ref("dataset", d + sfx) for d in p["outputs"]],
                },
            )
        )
    for e in doc["edges"]:
        lineages.append(
            ent(
                "column_lineage",
                f"{job}:{e['process']}:{e['target']}{sfx}",
                {
                    "name": e["target"],
                    "dependencyType": e["kind"],
                    "inputs": [ref("column", e["source"] + sfx)],
                    "outputs": [ref("column", e["target"] + sfx)],
                },
                {"process": ref("process", f"{job}:{e['process']}{sfx}")},
            )
        )
    return [datasets, level1, lineages]


def to_guid_refs(obj: Any, guids: dict[str, str]) -> Any:
    """``obj`` with each ``{"typeName", "uniqueAttributes"}`` reference replaced by ``{"typeName",
    "guid"}`` (``guids``: qualifiedName -> guid from the earlier levels' answers)."""
    if isinstance(obj, dict):
        if "uniqueAttributes" in obj:
            return {"typeName": obj["typeName"], "guid": guids[obj["uniqueAttributes"]["qualifiedName"]]}
        return {k: to_guid_refs(x, guids) for k, x in obj.items()}
    if isinstance(obj, list):
        return [to_guid_refs(x, guids) for x in obj]
    return obj


# --------------------------------------------------------------------------- one variant


def upload(session: Any, url: str, levels: list[list[dict[str, Any]]], v: Variant) -> dict[str, Any]:
    """Upload ``levels`` as the variant says; the guids Atlas assigned, requests, bytes and seconds."""
    guids: dict[str, str] = {}  # qualifiedName -> guid
    requests_sent = bytes_sent = retries = 0
    t0 = time.perf_counter()
    for level in levels:
        for i in range(0, len(level), v.batch):
            chunk = level[i : i + v.batch]
            if v.refs == "guid":
                chunk = [to_guid_refs(b, guids) for b in chunk]
            body = json.dumps({"entities": chunk}).encode()
            for attempt in range(RETRIES + 1):
                resp = session.post(
                    url + "/api/atlas/v2/entity/bulk",
                    data=body,
                    headers={"Content-Type": "application/json"},
                    timeout=(10, 900),
                )
                requests_sent += 1
                bytes_sent += len(body)
                if resp.status_code < 500 or attempt == RETRIES:
                    break
                retries += 1  # a lock timeout under other writers rolls the whole request back
            if resp.status_code != 200:
                raise RuntimeError(f"{v.name}: HTTP {resp.status_code}: {resp.text[:300]}")
            assigned = resp.json().get("guidAssignments") or {}
            for b in chunk:
                if b["guid"] in assigned:
                    guids[b["attributes"]["qualifiedName"]] = assigned[b["guid"]]
    wall = time.perf_counter() - t0
    return {
        "wall_s": round(wall, 2),
        "requests": requests_sent,
        "kib_sent": round(bytes_sent / 1024),
        "guids": guids,
    }


def cleanup(client: Any, prefix: str, guids: list[str]) -> float:
    """Delete and purge a variant's entities, then its types; seconds taken."""
    t0 = time.perf_counter()
    for i in range(0, len(guids), 500):
        client.delete_entities(guids[i : i + 500])
    for i in range(0, len(guids), 100):  # Atlas 2.1 purges slowly: a long request holds its locks
        client.purge_entities(guids[i : i + 100])
    body = typedefs(prefix, Variant("x"))
    client.delete_typedefs({"relationshipDefs": [{"name": r["name"]} for r in body["relationshipDefs"]]})
    client.delete_typedefs({"entityDefs": [{"name": d["name"]} for d in body["entityDefs"]]})
    return time.perf_counter() - t0


def run_variant(
    url: str, real: bool, doc: dict[str, Any], run: str, v: Variant
) -> tuple[dict[str, Any], list[str]]:
    import requests

    prefix = run  # the same length for every variant: equal type names, equal bytes
    client = sync_bench._client(url, real)
    client.create_typedefs(typedefs(prefix, v))
    levels = entity_levels(doc, prefix, run, v)
    session = requests.Session()
    session.auth = sync_bench._auth(real)
    row = upload(session, url, levels, v)
    guids = list(row.pop("guids").values())
    row.update(variant=v.name, what=v.what, entities=sum(len(lv) for lv in levels), created=len(guids))
    return row, guids


def remove_left(client: Any, prefix: str) -> int:
    """Delete, purge and remove what earlier runs left: every type set named ``<prefix><8 hex>_...``;
    how many sets."""
    runs = sorted(
        {
            h["name"][: len(prefix) + 8]
            for h in client.get_typedef_headers()
            if h.get("name", "").startswith(prefix) and h["name"].endswith("_column_lineage")
        }
    )
    for run in runs:
        guids = [
            h["guid"]
            for kind in KINDS
            for h in client.search_basic(f"{run}_{kind}", exclude_deleted=False, attributes=["qualifiedName"])
        ]
        cleanup(client, run, guids)
        print(f"removed {run}: {len(guids)} entities", file=sys.stderr, flush=True)
    return len(runs)


# --------------------------------------------------------------------------- driver


def report(rows: list[dict[str, Any]]) -> str:
    """Median seconds per variant and the median ratio to its round's first baseline."""
    names = list(dict.fromkeys(r["variant"] for r in rows))
    base = {r["round"]: r["wall_s"] for r in rows if r["variant"] == "base" and "wall_s" in r}
    head = (
        f"{'variant':<18} {'what':<52} {'entities':>8} {'requests':>8} {'KiB sent':>8} {'seconds':>8} "
        f"{'ratio':>6} {'retries':>7}"
    )
    lines = [head, "-" * len(head)]
    for name in names:
        mine = [r for r in rows if r["variant"] == name and "wall_s" in r]
        if not mine:
            errs = {r["error"] for r in rows if r["variant"] == name}
            lines.append(f"{name:<18} error: {'; '.join(errs)[:200]}")
            continue
        wall = statistics.median(r["wall_s"] for r in mine)
        ratios = [r["wall_s"] / base[r["round"]] for r in mine if base.get(r["round"])]
        ratio = f"{statistics.median(ratios):>6.3f}" if ratios else f"{'-':>6}"
        r0 = mine[0]
        lines.append(
            f"{name:<18} {r0['what'][:52]:<52} {r0['entities']:>8} {r0['requests']:>8} {r0['kib_sent']:>8} "
            f"{wall:>8.2f} {ratio} {sum(r.get('retries', 0) for r in mine):>7}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--processes", type=int, default=1000, help="workload size N (~12.3 N entities a variant)"
    )
    ap.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"comma-separated, in order: {', '.join(VARIANTS)}"
    )
    ap.add_argument("--repeat", type=int, default=1, help="rounds of the whole sweep (medians reported)")
    ap.add_argument(
        "--atlas-url", default=os.environ.get("ATLAS_URL"), help="an Atlas [$ATLAS_URL]; none: an emulator"
    )
    ap.add_argument("--prefix", default="bkc", help="type and domain prefix (a run id is added)")
    ap.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed baseline uploads first (a fresh server's first is slow)",
    )
    ap.add_argument(
        "--cleanup",
        action="store_true",
        help="at the end, delete and purge every variant's entities and delete its types (slow on Atlas 2.1)",
    )
    ap.add_argument(
        "--remove-left",
        action="store_true",
        help="only delete, purge and remove the types and entities earlier runs with --prefix left, then exit",
    )
    ap.add_argument("--out", help="JSON results file [bench/results/bookkeeping_cost-<time>.json]")
    args = ap.parse_args(argv)
    chosen = [VARIANTS[n] for n in args.variants.split(",") if n]
    real = bool(args.atlas_url)
    if args.remove_left:
        if not real:
            print("--remove-left needs --atlas-url or $ATLAS_URL", file=sys.stderr)
            return 2
        print(f"{remove_left(sync_bench._client(args.atlas_url, real), args.prefix)} type sets removed")
        return 0
    server = None if real else sync_bench.Server(5.0, 0.0, 2.0)
    url = args.atlas_url or server.url  # type: ignore[union-attr]
    doc = json.loads(json.dumps(issue_graph(args.processes).to_document()))
    rows: list[dict[str, Any]] = []
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    made: list[tuple[str, list[str]]] = []  # (type prefix, guids) of every upload
    try:
        for _ in range(args.warmup):
            run = f"{args.prefix}{uuid.uuid4().hex[:8]}"
            row, guids = run_variant(url, real, doc, run, VARIANTS["base"])
            made.append((run, guids))
            print(json.dumps({"warmup": row}), file=sys.stderr, flush=True)
        for rnd in range(args.repeat):
            # odd rounds take the variants between the first and the last in reverse (drift cancels)
            order = chosen if rnd % 2 == 0 or len(chosen) < 3 else [chosen[0], *chosen[-2:0:-1], chosen[-1]]
            for v in order:
                run = f"{args.prefix}{uuid.uuid4().hex[:8]}"
                try:
                    row, guids = run_variant(url, real, doc, run, v)
                except Exception as exc:  # one failed variant: said in its row, the sweep goes on
                    row, guids = {"variant": v.name, "what": v.what, "error": str(exc)[:300]}, []
                made.append((run, guids))
                row.update(round=rnd, at=time.strftime("%H:%M:%S", time.gmtime()), load=os.getloadavg()[0])
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
        if args.cleanup:
            client = sync_bench._client(url, real)
            took = sum(cleanup(client, run, guids) for run, guids in made)
            print(f"cleanup: {len(made)} type sets deleted in {took:.0f} s", file=sys.stderr)
        else:
            print(
                f"left in Atlas: the types and entities of {', '.join(r for r, _ in made)}", file=sys.stderr
            )
    finally:
        if server is not None:
            server.stop()
    target = f"Atlas at {url}" if real else "the emulator (5 ms/request + 2 ms/KiB)"
    print(f"{target}, N = {args.processes} processes, started {started}, {args.repeat} round(s)")
    print(report(rows))
    out = Path(args.out or HERE / "results" / f"bookkeeping_cost-{time.strftime('%Y%m%d-%H%M%S')}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"settings": vars(args), "rows": rows}, indent=1), encoding="utf-8")
    print(f"results: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
