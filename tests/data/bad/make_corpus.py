"""Regenerate the bad-input corpus: ``python tests/data/bad/make_corpus.py``.

Every file here is an input atlas-sync must reject with a clean error (no traceback, non-zero exit,
the file and place named) and without writing anything to Atlas. Folders:

* ``<reader>/``  - inputs of one reader (``atlas-sync sync --from <reader> FILE``);
* ``profiles/``  - user profile folders (bad templates, bad typedefs: cycles, dangling references);
* ``configs/``   - ``atlas-sync.toml`` files with wrong types or unknown keys.

Huge files (a 20 MB line, 100,000-deep nesting) are made by the test at run time, not stored.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SPARK = ROOT / "tests/data/spark/fixtures/cars_union_filter"
SEED_PLAN = ROOT / "tests/data/spark/spark-plan-to-atlas.logical.txt"
SEATUNNEL = ROOT / "tests/data/seatunnel/mysql_to_pg.conf"
WHALE = ROOT / "tests/data/seatunnel/whaletunnel-minimal.json"
OL = ROOT / "tests/data/openlineage/spark_complete.json"
BINARY = bytes(range(256)) * 4
UTF16 = "SELECT a FROM t".encode("utf-16")
LATIN1 = "INSERT INTO t SELECT 'café' AS x FROM s".encode("latin-1")


def w(rel: str, data: str | bytes) -> None:
    path = HERE / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)


def spark_plan() -> None:
    plan = SEED_PLAN.read_text(encoding="utf-8")
    w("spark-plan/empty.plan.txt", "")
    w("spark-plan/whitespace.plan.txt", "   \n\n\t\n")
    w("spark-plan/binary.plan.txt", BINARY)
    w("spark-plan/utf16.plan.txt", plan.encode("utf-16"))
    w("spark-plan/truncated.plan.txt", plan[: len(plan) // 2].rsplit(",", 1)[0] + ", [")
    w("spark-plan/not-a-plan.plan.txt", "hello world\nthis is not a spark plan\n")
    w(
        "spark-plan/bad-indent.plan.txt",
        "Project [a#1]\n      +- Filter (a#1 > 1)\n  +- LocalRelation [a#1]\n",
    )
    w("spark-plan/unbalanced.plan.txt", "Project [a#1, (b#2 + 1) AS c#3\n+- LocalRelation [a#1, b#2]\n")
    w("spark-plan/orphan-child.plan.txt", "+- Project [a#1]\n   +- LocalRelation [a#1]\n")


def spark_json() -> None:
    good = (SPARK / "logical.json").read_text(encoding="utf-8")
    w("spark-json/empty.plan.json", "")
    w("spark-json/truncated.plan.json", good[: len(good) // 2])
    w("spark-json/object-not-array.plan.json", json.dumps({"class": "x"}))
    w("spark-json/array-of-numbers.plan.json", "[1, 2, 3]")
    w("spark-json/missing-class.plan.json", json.dumps([{"num-children": 0}]))
    w("spark-json/children-overflow.plan.json",
      json.dumps([{"class": "org.apache.spark.sql.catalyst.plans.logical.Project", "num-children": 3,
                   "projectList": []}]))  # fmt: skip
    w("spark-json/num-children-string.plan.json",
      json.dumps([{"class": "org.apache.spark.sql.catalyst.plans.logical.Project", "num-children": "two"}]))  # fmt: skip
    w("spark-json/binary.plan.json", BINARY)
    w("spark-json/nan.plan.json", "[NaN]")


def sql() -> None:
    w("sql/empty.sql", "")
    w("sql/only-comments.sql", "-- nothing here\n/* still nothing */\n")
    w("sql/unterminated-string.sql", "INSERT INTO t SELECT 'abc FROM s;\n")
    w("sql/unbalanced-paren.sql", "INSERT INTO t SELECT (a + (b FROM s;\n")
    w("sql/garbage.sql", "SELEKT FROM WHERE;;; ))) (((\n")
    w("sql/select-without-columns.sql", "INSERT INTO t SELECT FROM s;\n")
    w("sql/ctas-without-query.sql", "CREATE TABLE t AS;\n")
    w("sql/second-statement-bad.sql", "INSERT INTO t SELECT a FROM s;\nINSERT INTO u SELECT a, FROM;\n")
    w("sql/binary.sql", BINARY)
    w("sql/utf16.sql", UTF16)
    w("sql/latin1.sql", LATIN1)
    w("sql/unterminated-comment.sql", "INSERT INTO t SELECT a FROM s; /* no end\n")


def query_log() -> None:
    w("query-log/empty.querylog.csv", "")
    w("query-log/no-query-column.querylog.csv", "user_name,start_time\nbob,2026-01-01\n")
    # the open quote swallows the following rows into one query text that is not SQL
    w("query-log/unclosed-quote.querylog.csv",
      'query_text,user_name\n"INSERT INTO t SELECT a FROM s WHERE x = ,bob\n'
      '"INSERT INTO u SELECT b FROM v",alice\n')  # fmt: skip
    w("query-log/binary.querylog.csv", BINARY)
    w("query-log/all-invalid.querylog.csv",
      'query_text\n"SELEKT FROM ((("\n"INSERT INTO t SELECT a, FROM"\n')  # fmt: skip
    w("query-log/utf16.querylog.csv", "query_text\nSELECT 1\n".encode("utf-16"))


def hive() -> None:
    w("hive-lineage/empty.lineage.log", "")
    w("hive-lineage/truncated.hive-lineage.json", '{"version": "1.0", "edges": [{"sources": [0], ')
    w("hive-lineage/array-of-strings.hive-lineage.json", '["a", "b"]')
    w("hive-lineage/edges-not-list.hive-lineage.json", json.dumps({"edges": "x", "vertices": []}))
    w("hive-lineage/vertex-missing.hive-lineage.json",
      json.dumps({"queryText": "insert into t select a from s", "edges": [
          {"sources": [0], "targets": [7], "edgeType": "PROJECTION"}],
          "vertices": [{"id": 0, "vertexType": "COLUMN", "vertexId": "s.a"}]}))  # fmt: skip
    w("hive-lineage/bad-line.lineage.log",
      json.dumps({"queryText": "q", "edges": [], "vertices": []}) + "\n{not json}\n")  # fmt: skip
    w("hive-lineage/binary.lineage.log", BINARY)


def openlineage() -> None:
    good = OL.read_text(encoding="utf-8")
    w("openlineage/empty.ol.json", "")
    w("openlineage/truncated.ol.json", good[: len(good) // 2])
    w("openlineage/number.ol.json", "42")
    w("openlineage/no-job.ol.json", json.dumps({"eventType": "COMPLETE", "run": {"runId": "x"}}))
    w("openlineage/inputs-not-list.ol.json",
      json.dumps({"eventType": "COMPLETE", "job": {"namespace": "n", "name": "j"}, "run": {"runId": "r"},
                  "inputs": {"name": "x"}}))  # fmt: skip
    w("openlineage/bad-line.ol.jsonl", good.replace("\n", " ") + "\n{oops\n")
    w("openlineage/binary.ol.json", BINARY)
    w("openlineage/dataset-without-name.ol.json",
      json.dumps({"eventType": "COMPLETE", "job": {"namespace": "n", "name": "j"}, "run": {"runId": "r"},
                  "inputs": [{"namespace": "x"}], "outputs": []}))  # fmt: skip


def seatunnel() -> None:
    good = SEATUNNEL.read_text(encoding="utf-8")
    w("seatunnel/empty.conf", "")
    w("seatunnel/truncated.conf", good[: len(good) // 2])
    w("seatunnel/unbalanced-braces.conf", "env {\n  parallelism = 1\n\nsource {\n  FakeSource { }\n}\n")
    w("seatunnel/source-not-object.conf", "env { }\nsource = 42\nsink { Console {} }\n")
    w("seatunnel/binary.conf", BINARY)
    w("seatunnel/bad-substitution.conf", "env { }\nsource { Jdbc { table_path = ${undefined.var} } }\n")
    w("seatunnel/json-wrong-shape.conf", "[1, 2, 3]\n")


def whaletunnel() -> None:
    good = WHALE.read_text(encoding="utf-8")
    w("whaletunnel/empty.whaletunnel.json", "")
    w("whaletunnel/truncated.whaletunnel.json", good[: len(good) // 2])
    w("whaletunnel/list-not-object.whaletunnel.json", "[]")
    w("whaletunnel/jobs-not-list.whaletunnel.json", json.dumps({"syncJobDefinitionDtoList": "x"}))
    w("whaletunnel/bad-option-json.whaletunnel.json",
      good.replace('"{\\"schema\\":\\"sales\\",\\"table\\":\\"customer\\"}"', '"{not json"', 1))  # fmt: skip
    w("whaletunnel/binary.whaletunnel.json", BINARY)


def graph() -> None:
    w("graph/empty.lineage.json", "")
    w("graph/truncated.lineage.json", '{"datasets": [{"id": "a", "name": "a"}, ')
    w("graph/list.lineage.json", "[]")
    w("graph/dangling-edge.lineage.json",
      json.dumps({"datasets": [{"id": "a.t", "name": "t", "columns": ["x"]}],
                  "edges": [{"source": "a.t.x", "target": "b.u.y"}]}))  # fmt: skip
    w("graph/unknown-kind.lineage.json",
      json.dumps({"datasets": [{"id": "a.t", "name": "t", "columns": ["x", "y"]}],
                  "edges": [{"source": "a.t.x", "target": "a.t.y", "kind": "TELEPATHY"}]}))  # fmt: skip
    w(
        "graph/columns-wrong-type.lineage.json",
        json.dumps({"datasets": [{"id": "a", "name": "a", "columns": 5}]}),
    )
    w("graph/duplicate-ids.lineage.json",
      json.dumps({"datasets": [{"id": "a", "name": "a"}, {"id": "a", "name": "b"}]}))  # fmt: skip
    w("graph/process-unknown-input.lineage.json",
      json.dumps({"datasets": [{"id": "a", "name": "a"}],
                  "processes": [{"id": "p", "name": "p", "inputs": ["nope"], "outputs": ["a"]}]}))  # fmt: skip
    w("graph/binary.lineage.json", BINARY)
    w("graph/latin1.lineage.json", '{"datasets": [{"id": "caf\xe9", "name": "x"}]}'.encode("latin-1"))
    w("graph/bom-then-garbage.lineage.json", b"\xef\xbb\xbf{,}")
    w("graph/error-problems-only.lineage.json",
      json.dumps({"problems": [{"message": "could not parse", "severity": "error", "line": 3}]}))  # fmt: skip


LINEAGE_TEMPLATES = ROOT / "templates/lineage"


def profile(name: str, *, templates: dict[str, str] | None = None, typedefs: dict[str, object] | None = None,
            toml: str | None = None) -> None:  # fmt: skip
    """A copy of the built-in lineage profile with some files replaced."""
    folder = HERE / "profiles" / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for f in LINEAGE_TEMPLATES.iterdir():
        if f.is_file():
            shutil.copy(f, folder / f.name)
    text = (folder / "profile.toml").read_text(encoding="utf-8")
    text = text.replace('name = "lineage"', f'name = "{name}"')
    if typedefs is not None:
        text = text.replace('typedefs = ["lineage"]', 'typedefs = ["lineage", "typedefs"]')
        (folder / "typedefs").mkdir()
        for fname, body in typedefs.items():
            (folder / "typedefs" / fname).write_text(json.dumps(body, indent=1), encoding="utf-8")
    (folder / "profile.toml").write_text(toml if toml is not None else text, encoding="utf-8")
    for fname, body in (templates or {}).items():
        (folder / fname).write_text(body, encoding="utf-8")


def _entity(name: str, supers: list[str], attrs: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {"name": name, "superTypes": supers, "attributeDefs": attrs or [], "typeVersion": "1.0"}


def profiles() -> None:
    col = (LINEAGE_TEMPLATES / "column.json.j2").read_text(encoding="utf-8")
    ds = (LINEAGE_TEMPLATES / "dataset.json.j2").read_text(encoding="utf-8")
    profile("template-syntax", templates={"dataset.json.j2": ds.replace("}}", "}", 1)})
    profile("template-not-json", templates={"column.json.j2": col.replace("| tojson", "", 1)})
    profile("template-unknown-attribute",
            templates={"column.json.j2": col.replace('"name":', '"no_such_attribute": 1,\n    "name":', 1)})  # fmt: skip
    profile("template-reads-file",
            templates={"dataset.json.j2": ds.replace("{", "{# #}{{ ''.__class__.__mro__[1].__subclasses__() }}", 1)})  # fmt: skip
    profile(
        "template-undefined",
        templates={"column.json.j2": col.replace("column.name", "column.nope.deeper", 1)},
    )
    profile("template-missing-file", toml=(LINEAGE_TEMPLATES / "profile.toml").read_text(encoding="utf-8")
            .replace('"column.json.j2"', '"no-such-file.json.j2"'))  # fmt: skip
    profile("toml-syntax", toml="name = \n[templates\n")
    profile("typedef-cycle", typedefs={"0010-cycle.json": {"entityDefs": [
        _entity("bad_cycle_a", ["bad_cycle_b"]), _entity("bad_cycle_b", ["bad_cycle_a"])]}})  # fmt: skip
    profile("typedef-dangling-supertype", typedefs={"0010-dangling.json": {"entityDefs": [
        _entity("bad_dangling", ["no_such_type"])]}})  # fmt: skip
    profile("typedef-dangling-attribute-type", typedefs={"0010-dangling.json": {"entityDefs": [
        _entity("bad_attr", ["DataSet"], [{"name": "x", "typeName": "no_such_type", "isOptional": True,
                                          "cardinality": "SINGLE"}])]}})  # fmt: skip
    profile("typedef-bad-json", typedefs={})
    (HERE / "profiles/typedef-bad-json/typedefs/0010-bad.json").write_text(
        '{"entityDefs": [', encoding="utf-8"
    )


def configs() -> None:
    w("configs/batch-size-string.toml", 'batch_size = "many"\n')
    w("configs/batch-size-zero.toml", "batch_size = 0\n")
    w("configs/parallel-negative.toml", "parallel = -3\n")
    w("configs/unknown-key.toml", 'domian = "demo"\n')
    w("configs/password-in-file.toml", 'password = "hunter2"\n')
    w("configs/table-value.toml", "[url]\nhost = 'x'\n")
    w("configs/bad-toml.toml", "url = 'http://x\n")
    w("configs/url-not-http.toml", 'url = "ftp://atlas"\n')
    w("configs/timeout-list.toml", "read_timeout = [1, 2]\n")


def glossaries() -> None:
    """``atlas-sync glossary apply FILE`` inputs; the line each error must name is in test_bad_inputs.py."""
    head = '[[glossary]]\nname = "Sales"\n'
    w(
        "glossaries/duplicate-term.toml",
        head + '[[glossary.term]]\nname = "Deal"\n\n[[glossary.term]]\nname = "Deal"\n',
    )
    w("glossaries/category-cycle.toml", head + '[[glossary.category]]\nname = "A"\nparent = "B"\n'
      '[[glossary.category]]\nname = "B"\nparent = "A"\n')  # fmt: skip
    w(
        "glossaries/unknown-related-term.toml",
        head + '[[glossary.term]]\nname = "Deal"\nsynonyms = ["Nope"]\n',
    )
    w("glossaries/unknown-category.yaml", "glossary:\n  - name: Sales\n    term:\n      - name: Deal\n"
      "        categories: [Nowhere]\n")  # fmt: skip
    w("glossaries/duplicate-term.yaml", "glossary:\n  - name: Sales\n    term:\n      - name: Deal\n"
      "      - name: Lead\n      - name: Deal\n")  # fmt: skip
    w("glossaries/name-with-dot.toml", head + '[[glossary.term]]\nname = "v1.0"\n')
    w("glossaries/bad-syntax.toml", head + 'short_description = "unterminated\n')
    w("glossaries/bad-syntax.yaml", "glossary:\n  - name: Sales\n   term: [\n")
    csv_head = (
        "GlossaryName,TermName,ShortDescription,LongDescription,Examples,Abbreviation,Usage,"
        "AdditionalAttributes,TranslationTerms,ValidValuesFor,Synonyms,ReplacedBy,ValidValues,ReplacementTerms,SeeAlso\n"
    )
    w("glossaries/duplicate-term.csv", csv_head + "Sales,Deal,a\nSales,Lead,b\nSales,Deal,c\n")
    w("glossaries/unknown-related-term.csv", csv_head + "Sales,Deal,a,,,,,,,,Sales:Nope\n")
    w("glossaries/bad-relation-format.csv", csv_head + "Sales,Deal,a,,,,,,,,Nope\n")
    w("glossaries/unknown-key.toml", head + '[[glossary.term]]\nname = "Deal"\nsynonym = ["x"]\n')


def main() -> None:
    for fn in (spark_plan, spark_json, sql, query_log, hive, openlineage, seatunnel, whaletunnel, graph,
               profiles, configs, glossaries):  # fmt: skip
        fn()
    n = sum(1 for p in HERE.rglob("*") if p.is_file() and p.name != "make_corpus.py")
    print(f"{n} files in {HERE}")


if __name__ == "__main__":
    main()
