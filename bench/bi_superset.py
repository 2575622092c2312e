"""The `superset` reader at size (issue 41): a generated Superset export of D dashboards, C charts and
S datasets (format 1.0.0, as Superset 6.1.0 writes it), read and planned into an empty domain of the
embedded emulator; and the same objects imported into a live Superset and read through its REST API.

    .venv/bin/python bench/bi_superset.py export            # read + plan of the generated ZIP
    .venv/bin/python bench/bi_superset.py api --superset-url URL --import   # import it, then read via the API

Each mode runs in its own process (peak RSS is the process's); the API mode needs SUPERSET_USERNAME and
SUPERSET_PASSWORD_FILE. Prints wall, requests and peak RSS; not a test, asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import sys
import time
import uuid
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TABLES = ["customers", "fct_orders"]
COLUMNS = {
    "customers": [
        "customer_id",
        "first_name",
        "last_name",
        "first_order",
        "number_of_orders",
        "lifetime_value",
    ],
    "fct_orders": ["order_id", "customer_id", "order_date", "status", "product_name", "amount"],
}


def _id(kind: str, i: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"atlas-sync-bench/{kind}/{i}"))


def generate(
    dashboards: int = 100,
    charts: int = 1000,
    datasets: int = 300,
    physical_share: float = 2 / 3,
    unique_tables: bool = False,
) -> bytes:
    """An export ZIP: datasets over the two warehouse tables (a third virtual, joining them), charts
    round-robin over the datasets (group by two columns, one adhoc SUM), dashboards of C/D charts each."""
    buf = io.BytesIO()
    top = "dashboard_export_bench"
    db_uuid = _id("db", 0)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            f"{top}/metadata.yaml",
            "version: 1.0.0\ntype: Dashboard\ntimestamp: '2026-01-01T00:00:00+00:00'\n",
        )
        zf.writestr(
            f"{top}/databases/Warehouse.yaml",
            yaml.safe_dump(
                {
                    "database_name": "Warehouse",
                    "sqlalchemy_uri": "duckdb:////tmp/bench/jaffle.duckdb",
                    "uuid": db_uuid,
                    "version": "1.0.0",
                    "expose_in_sqllab": True,
                    "allow_ctas": False,
                    "allow_cvas": False,
                    "allow_dml": False,
                    "allow_run_async": False,
                    "cache_timeout": None,
                    "extra": {},
                }
            ),
        )
        ds_cols: list[list[str]] = []
        for i in range(datasets):
            table = TABLES[i % 2]
            physical = i < datasets * physical_share
            cols = COLUMNS[table] if physical else ["customer_id", "first_name", "amount"]
            sql = (
                None
                if physical
                else (
                    "SELECT c.customer_id, c.first_name, o.amount FROM main_marts.customers AS c "
                    f"JOIN main_marts.fct_orders AS o ON o.customer_id = c.customer_id WHERE o.order_id > {i}"
                )
            )
            ds_cols.append(cols)
            doc = {
                # (Superset's SQLite metadata keeps table names unique: an import needs one per dataset)
                "table_name": (f"{table}_{i}" if unique_tables else table) if physical else f"virtual_{i}",
                "schema": "main_marts",
                "sql": sql,
                "uuid": _id("ds", i),
                "database_uuid": db_uuid,
                "version": "1.0.0",
                "main_dttm_col": None,
                "description": None,
                "default_endpoint": None,
                "offset": 0,
                "cache_timeout": None,
                "catalog": None,
                "params": None,
                "template_params": None,
                "filter_select_enabled": True,
                "fetch_values_predicate": None,
                "extra": None,
                "normalize_columns": False,
                "always_filter_main_dttm": False,
                "metrics": [{"metric_name": "count", "expression": "COUNT(*)", "metric_type": "count"}],
                "columns": [
                    {
                        "column_name": c,
                        "type": "VARCHAR",
                        "is_dttm": False,
                        "is_active": True,
                        "groupby": True,
                        "filterable": True,
                        "expression": None,
                    }
                    for c in cols
                ],
            }
            zf.writestr(f"{top}/datasets/Warehouse/ds_{i}.yaml", yaml.safe_dump(doc))
        per_dash = max(1, charts // max(1, dashboards))
        for i in range(charts):
            d = i % datasets
            cols = ds_cols[d]
            params = {
                "viz_type": "table",
                "groupby": cols[:2],
                "metrics": [
                    {
                        "expressionType": "SIMPLE",
                        "column": {"column_name": cols[-1]},
                        "aggregate": "SUM",
                        "label": f"SUM({cols[-1]})",
                    }
                ],
            }
            doc = {
                "slice_name": f"chart {i}",
                "viz_type": "table",
                "params": params,
                "uuid": _id("chart", i),
                "dataset_uuid": _id("ds", d),
                "version": "1.0.0",
                "cache_timeout": None,
                "query_context": None,
                "description": None,
            }
            zf.writestr(f"{top}/charts/chart_{i}.yaml", yaml.safe_dump(doc))
        for j in range(dashboards):
            members = range(j * per_dash, min(charts, (j + 1) * per_dash))
            position: dict[str, object] = {
                "DASHBOARD_VERSION_KEY": "v2",
                "ROOT_ID": {"type": "ROOT", "id": "ROOT_ID", "children": ["GRID_ID"]},
                "GRID_ID": {"type": "GRID", "id": "GRID_ID", "children": [], "parents": ["ROOT_ID"]},
            }
            for i in members:
                key = f"CHART-{i}"
                position["GRID_ID"]["children"].append(key)  # type: ignore[index]
                position[key] = {
                    "type": "CHART",
                    "id": key,
                    "children": [],
                    "parents": ["ROOT_ID", "GRID_ID"],
                    "meta": {"uuid": _id("chart", i), "width": 4, "height": 50, "chartId": i + 1},
                }
            doc = {
                "dashboard_title": f"dashboard {j}",
                "uuid": _id("dash", j),
                "position": position,
                "metadata": {},
                "version": "1.0.0",
                "published": True,
                "slug": None,
                "css": None,
                "description": None,
                "certified_by": None,
                "certification_details": None,
            }
            zf.writestr(f"{top}/dashboards/dashboard_{j}.yaml", yaml.safe_dump(doc))
    return buf.getvalue()


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_export(args: argparse.Namespace) -> dict[str, object]:
    from atlas_sync.api import Publisher
    from atlas_sync.emulator import Emulator
    from atlas_sync.factory import embedded_client
    from atlas_sync.lineage import registry

    path = Path(args.out)
    path.write_bytes(generate(args.dashboards, args.charts, args.datasets))
    t0 = time.perf_counter()
    graph = registry.read("superset", [str(path)], connection_map={"Warehouse": "jaffle"})
    t_read = time.perf_counter() - t0
    emu = Emulator(None)
    pub = Publisher(embedded_client(emulator=emu), profile="lineage", domain="bench")
    t1 = time.perf_counter()
    plan = pub.plan(graph)
    t_plan = time.perf_counter() - t1
    return {
        "mode": "export",
        "zip_bytes": path.stat().st_size,
        "datasets": len(graph.datasets),
        "processes": len(graph.processes),
        "edges": len(graph.edges),
        "problems": len(graph.problems),
        "read_s": round(t_read, 2),
        "plan_s": round(t_plan, 2),
        "plan": plan.counts,
        "peak_rss_mb": round(_rss_mb(), 1),
    }


def run_api(args: argparse.Namespace) -> dict[str, object]:
    from atlas_sync.lineage.openlineage.naming import load_namespace_map
    from atlas_sync.lineage.superset import api as superset_api
    from atlas_sync.lineage.superset.build import SupersetGraph

    if args.do_import:
        client = superset_api.SupersetApi(args.superset_url)
        client.login(*superset_api.credentials())
        data = generate(args.dashboards, args.charts, args.datasets, unique_tables=True)
        t0 = time.perf_counter()
        r = client.session.post(
            f"{client.url}/api/v1/dashboard/import/",
            files={"formData": ("bench.zip", data, "application/zip")},
            data={"overwrite": "true", "passwords": json.dumps({"databases/Warehouse.yaml": ""})},
            timeout=1800,
        )
        print(
            f"import: HTTP {r.status_code} in {time.perf_counter() - t0:.1f} s {r.text[:200]}",
            file=sys.stderr,
        )
        r.raise_for_status()
    made: list[int] = []
    t1 = time.perf_counter()
    content = superset_api.read_api(
        args.superset_url,
        page_size=args.page_size,
        workers=args.workers,
        progress=False,
        on_api=lambda a: made.append(a.requests_made),
    )
    t_read = time.perf_counter() - t1
    graph = SupersetGraph(
        content,
        job="superset",
        connection_map=load_namespace_map({"Warehouse": "jaffle"}),
        base_url=args.superset_url,
    ).build()
    t_all = time.perf_counter() - t1
    from atlas_sync.api import Publisher
    from atlas_sync.emulator import Emulator
    from atlas_sync.factory import embedded_client

    t2 = time.perf_counter()
    plan = Publisher(embedded_client(emulator=Emulator(None)), profile="lineage", domain="bench").plan(graph)
    t_plan = time.perf_counter() - t2
    return {
        "mode": "api",
        "plan_s": round(t_plan, 2),
        "plan": plan.counts,
        "page_size": args.page_size,
        "workers": args.workers,
        "requests": made[0],
        "dashboards": len(content.dashboards),
        "charts": len(content.charts),
        "datasets": len(content.datasets),
        "fetch_s": round(t_read, 2),
        "fetch_and_build_s": round(t_all, 2),
        "processes": len(graph.processes),
        "peak_rss_mb": round(_rss_mb(), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["export", "api"])
    ap.add_argument("--dashboards", type=int, default=100)
    ap.add_argument("--charts", type=int, default=1000)
    ap.add_argument("--datasets", type=int, default=300)
    ap.add_argument("--out", default="/tmp/atlas-sync-bench-superset.zip")
    ap.add_argument("--superset-url")
    ap.add_argument("--import", dest="do_import", action="store_true")
    ap.add_argument("--page-size", type=int, default=100)
    ap.add_argument("--workers", type=int, default=4)
    args = ap.parse_args()
    result = run_export(args) if args.mode == "export" else run_api(args)
    print(json.dumps(result, indent=2))
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / f"bi_superset_{args.mode}.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
