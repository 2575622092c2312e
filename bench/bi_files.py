"""The `powerbi` and `tableau` readers at size (issue 42): a generated PBIP project of T tables (each
navigating to a warehouse table, every 5th a native query, every 7th other a NestedJoin, 6 columns and 2 measures each; a report of one
page per 10 tables, a visual per table) and a generated workbook of D data sources (each a join of two
tables, every 4th custom SQL; a worksheet per data source, a dashboard per 10 sheets). Each is read in its
own process: wall time and peak RSS (bounded memory: the files are read one at a time).

    .venv/bin/python bench/bi_files.py powerbi --tables 500
    .venv/bin/python bench/bi_files.py tableau --datasources 200

Not a test; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

COLS = ["id", "customer_id", "order_date", "status", "amount", "region"]


def make_pbip(root: Path, tables: int) -> Path:
    model = root / "Big.SemanticModel" / "definition" / "tables"
    model.mkdir(parents=True)
    (root / "Big.SemanticModel" / "definition" / "expressions.tmdl").write_text(
        'expression Server = "warehouse.example.com" meta [IsParameterQuery=true, Type="Text"]\n\n'
        'expression Warehouse =\n\t\tlet\n\t\t    Source = Sql.Database(Server, "dw")\n\t\tin\n\t\t    Source\n'
    )
    for i in range(tables):
        cols = "".join(f"\tcolumn {c}\n\t\tdataType: string\n\t\tsourceColumn: {c}\n\n" for c in COLS)
        if i % 5 == 0:
            src = (
                f'\t\t\t\t    Q = Value.NativeQuery(Source, "SELECT o.id, o.customer_id, o.order_date, o.status, '
                f'o.amount, c.region FROM mart.t{i} o JOIN mart.c{i % 50} c ON c.id = o.customer_id")\n'
            )
        elif i % 7 == 0:  # a NestedJoin expanded: region from the joined table (column by column)
            src = (
                f'\t\t\t\t    O = Source{{[Schema="mart",Item="t{i}"]}}[Data],\n'
                f'\t\t\t\t    C = Source{{[Schema="mart",Item="c{i % 50}"]}}[Data],\n'
                '\t\t\t\t    J = Table.NestedJoin(O, {"customer_id"}, C, {"id"}, "c", JoinKind.LeftOuter),\n'
                '\t\t\t\t    Q = Table.ExpandTableColumn(J, "c", {"region"})\n'
            )
        else:
            src = f'\t\t\t\t    Q = Source{{[Schema="mart",Item="t{i}"]}}[Data]\n'
        (model / f"T{i}.tmdl").write_text(
            f"table T{i}\n\n\tmeasure 'Total {i}' = SUM(T{i}[amount])\n\n\tmeasure 'Avg {i}' = DIVIDE([Total {i}], COUNT('T{i}'[id]))\n\n"
            + cols
            + f"\tpartition T{i} = m\n\t\tmode: import\n\t\tsource =\n\t\t\t\tlet\n\t\t\t\t    Source = Warehouse,\n"
            + src
            + "\t\t\t\tin\n\t\t\t\t    Q\n"
        )
    rep = root / "Big.Report"
    (rep / "definition" / "pages").mkdir(parents=True)
    (rep / "definition.pbir").write_text(
        json.dumps({"datasetReference": {"byPath": {"path": "../Big.SemanticModel"}}})
    )
    for p in range((tables + 9) // 10):
        pdir = rep / "definition" / "pages" / f"p{p}"
        pdir.mkdir()
        (pdir / "page.json").write_text(json.dumps({"name": f"p{p}", "displayName": f"Page {p}"}))
        for i in range(p * 10, min(tables, p * 10 + 10)):
            vdir = pdir / "visuals" / f"v{i}"
            vdir.mkdir(parents=True)
            proj = [
                {
                    "field": {
                        "Column": {"Expression": {"SourceRef": {"Entity": f"T{i}"}}, "Property": "status"}
                    }
                },
                {
                    "field": {
                        "Measure": {
                            "Expression": {"SourceRef": {"Entity": f"T{i}"}},
                            "Property": f"Total {i}",
                        }
                    }
                },
            ]
            (vdir / "visual.json").write_text(
                json.dumps(
                    {
                        "name": f"v{i}",
                        "visual": {
                            "visualType": "bar",
                            "query": {"queryState": {"Y": {"projections": proj}}},
                        },
                    }
                )
            )
    return root


def make_twb(path: Path, datasources: int) -> Path:
    ds, ws, dash = [], [], []
    for i in range(datasources):
        conn = "<named-connections><named-connection name='pg'><connection class='postgres' server='warehouse.example.com' dbname='dw'/></named-connection></named-connections>"
        if i % 4 == 0:
            rel = f"<relation connection='pg' name='Custom SQL Query' type='text'>SELECT o.id, o.amount, c.region FROM mart.t{i} o JOIN mart.c{i % 50} c ON c.id = o.customer_id WHERE o.amount &gt; 0</relation>"
            meta = "".join(
                f"<metadata-record class='column'><remote-name>{c}</remote-name><local-name>[{c}]</local-name><parent-name>[Custom SQL Query]</parent-name></metadata-record>"
                for c in ("id", "amount", "region")
            )
        else:
            rel = (
                "<relation join='inner' type='join'><clause type='join'><expression op='='><expression op='[o].[customer_id]'/>"
                f"<expression op='[c].[id]'/></expression></clause><relation connection='pg' name='o' table='[mart].[t{i}]' type='table'/>"
                f"<relation connection='pg' name='c' table='[mart].[c{i % 50}]' type='table'/></relation>"
            )
            meta = (
                "".join(
                    f"<metadata-record class='column'><remote-name>{c}</remote-name><local-name>[{c}]</local-name><parent-name>[o]</parent-name></metadata-record>"
                    for c in ("id", "amount")
                )
                + "<metadata-record class='column'><remote-name>region</remote-name><local-name>[region]</local-name><parent-name>[c]</parent-name></metadata-record>"
            )
        ds.append(
            f"<datasource caption='DS {i}' name='federated.{i}'><connection class='federated'>{conn}{rel}<metadata-records>{meta}</metadata-records></connection>"
            "<column name='[amount]' datatype='real' role='measure'/><column caption='Big' name='[Calc_1]'><calculation class='tableau' formula='SUM([amount]) &gt; 100'/></column></datasource>"
        )
        ws.append(
            f"<worksheet name='Sheet {i}'><table><view><datasources><datasource name='federated.{i}'/></datasources>"
            f"<datasource-dependencies datasource='federated.{i}'><column name='[amount]'/><column name='[region]'/>"
            "<column-instance column='[amount]' derivation='Sum' name='[sum:amount:qk]'/></datasource-dependencies></view>"
            f"<rows>[federated.{i}].[none:region:nk]</rows><cols>[federated.{i}].[sum:amount:qk]</cols></table></worksheet>"
        )
    for d in range((datasources + 9) // 10):
        zones = "".join(
            f"<zone id='{i}' name='Sheet {i}'/>" for i in range(d * 10, min(datasources, d * 10 + 10))
        )
        dash.append(f"<dashboard name='Dash {d}'><zones><zone id='x{d}'>{zones}</zone></zones></dashboard>")
    path.write_text(
        "<?xml version='1.0' encoding='utf-8' ?><workbook version='18.1'><datasources>"
        + "".join(ds)
        + "</datasources><worksheets>"
        + "".join(ws)
        + "</worksheets><dashboards>"
        + "".join(dash)
        + "</dashboards></workbook>"
    )
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["powerbi", "tableau"])
    ap.add_argument("--tables", type=int, default=500)
    ap.add_argument("--datasources", type=int, default=200)
    args = ap.parse_args()
    from atlas_sync.lineage import registry

    cmap = {"warehouse.example.com/dw": "dw"}
    with tempfile.TemporaryDirectory() as tmp:
        if args.mode == "powerbi":
            src = make_pbip(Path(tmp) / "big", args.tables)
            size = sum(f.stat().st_size for f in src.rglob("*") if f.is_file())
        else:
            src = make_twb(Path(tmp) / "big.twb", args.datasources)
            size = src.stat().st_size
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        g = registry.read(args.mode, [str(src)], connection_map=cmap)
        wall = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        f"{args.mode}: input {size / 1e6:.1f} MB; read {wall:.2f} s; {len(g.datasets)} datasets, "
        f"{len(g.processes)} processes, {len(g.edges)} column edges, {len(g.problems)} warnings; "
        f"peak RSS {rss / 1024:.0f} MB (before the read {rss0 / 1024:.0f} MB)"
    )


if __name__ == "__main__":
    main()
