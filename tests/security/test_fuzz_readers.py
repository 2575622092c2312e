"""Fuzz the text readers: any input gives a graph or an InputError, never another exception.

Inputs are random mixes of each format's own tokens and arbitrary text, plus mutations (cuts,
duplications) of real example files, so the fuzzer reaches past the first syntax check.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry

ROOT = Path(__file__).resolve().parents[2]
TOKENS = {
    "spark-plan": [
        "Project [",
        "]",
        "+- ",
        ":- ",
        "   ",
        "\n",
        "Filter (",
        ")",
        "Join Inner, (",
        "a#1",
        "b#2L",
        " AS ",
        "Relation[",
        "] parquet",
        "LocalRelation [",
        "Aggregate [",
        "SubqueryAlias ",
        "Union",
        "== Analyzed Logical Plan ==",
        "InsertIntoHadoopFsRelationCommand ",
        "cast(",
        " as string)",
        ", ",
        "sum(",
        "count(1)",
        "Window [",
        "Sort [",
        " ASC NULLS FIRST",
        "Generate explode(",
    ],
    "sql": [
        "SELECT ",
        "INSERT INTO ",
        "CREATE TABLE ",
        " AS ",
        " FROM ",
        " JOIN ",
        " ON ",
        " WHERE ",
        " GROUP BY ",
        "(",
        ")",
        ",",
        ";",
        "'",
        '"',
        "`",
        "a",
        "t.b",
        "*",
        " + ",
        "CASE WHEN ",
        " THEN ",
        " END",
        " UNION ALL ",
        "WITH x AS (",
        "--",
        "/*",
        "*/",
        "\n",
        "OVER (PARTITION BY ",
        "MERGE INTO ",
    ],
    "seatunnel": [
        "env {",
        "source {",
        "sink {",
        "transform {",
        "}",
        "Jdbc {",
        "Sql {",
        "query = ",
        '"',
        "'",
        "plugin_input = ",
        "plugin_output = ",
        "table_path = ",
        "${",
        "[",
        "]",
        "=",
        ":",
        "\n",
        "#",
        "include ",
        "fields {",
        "a = string",
        "schema {",
        '"""',
        ",",
    ],
    "openlineage": [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        '"eventType"',
        '"COMPLETE"',
        '"job"',
        '"run"',
        '"runId"',
        '"inputs"',
        '"outputs"',
        '"namespace"',
        '"name"',
        '"facets"',
        '"schema"',
        '"fields"',
        '"columnLineage"',
        '"inputFields"',
        "null",
        "1",
        '"x"',
        "\n",
    ],
}
EXAMPLES = {
    "spark-plan": ROOT / "tests/data/spark/spark-plan-to-atlas.logical.txt",
    "seatunnel": ROOT / "tests/data/seatunnel/mysql_to_pg.conf",
    "openlineage": ROOT / "tests/data/openlineage/spark_complete.json",
}
SQL_EXAMPLE = (
    "CREATE TABLE mart.rev AS SELECT r.name AS region, sum(o.amount) AS total\n"
    "FROM raw.orders o JOIN raw.regions r ON o.region = r.id WHERE o.amount > 0 GROUP BY r.name;\n"
    "INSERT INTO mart.top SELECT region, total FROM mart.rev ORDER BY total DESC LIMIT 10;\n"
)
SUFFIX = {"spark-plan": ".plan.txt", "sql": ".sql", "seatunnel": ".conf", "openlineage": ".ol.json"}


def _example(reader: str) -> str:
    if reader == "sql":
        return SQL_EXAMPLE
    return EXAMPLES[reader].read_text(encoding="utf-8")


def inputs(reader: str) -> st.SearchStrategy[str]:
    tokens = st.lists(st.one_of(st.sampled_from(TOKENS[reader]), st.text(max_size=5)), max_size=40).map(
        "".join
    )
    base = _example(reader)

    @st.composite
    def mutated(draw: st.DrawFn) -> str:
        text = base
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.integers(0, len(text)))
            j = draw(st.integers(i, min(len(text), i + 80)))
            op = draw(st.sampled_from(["cut", "dup", "insert"]))
            if op == "cut":
                text = text[:i] + text[j:]
            elif op == "dup":
                text = text[:j] + text[i:j] + text[j:]
            else:
                text = text[:i] + draw(st.sampled_from(TOKENS[reader])) + text[i:]
        return text

    return st.one_of(tokens, mutated())


def _read(reader: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"fuzz{SUFFIX[reader]}"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        with contextlib.suppress(InputError):
            registry.read(reader, [str(path)])


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(inputs("spark-plan"))
def test_fuzz_spark_text_plan_reader(text: str) -> None:
    _read("spark-plan", text)


@FUZZ
@given(inputs("sql"))
def test_fuzz_sql_reader(text: str) -> None:
    _read("sql", text)


@FUZZ
@given(inputs("seatunnel"))
def test_fuzz_seatunnel_hocon_reader(text: str) -> None:
    _read("seatunnel", text)


@FUZZ
@given(inputs("openlineage"))
def test_fuzz_openlineage_reader(text: str) -> None:
    _read("openlineage", text)
