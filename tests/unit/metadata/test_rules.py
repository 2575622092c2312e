"""Metadata rules: the TOML shape of the issue, strict checks naming rule and line, and matching."""

from __future__ import annotations

from typing import Any

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import Classification, LineageGraph
from atlas_sync.lineage.rules import check_names, parse_rules

ISSUE_SHAPE = """
# atlas-sync sync|plan ... --metadata-rules rules.toml
[[rules]]
columns = ["raw.customers.email", "*.*.ssn"]   # globs on db.table.column; `datasets` / `processes` likewise
classifications = [{ name = "PII", propagate = true }]
terms = ["Glossary@Customer Email"]            # term@glossary or the glossary's own qualifiedName form
owners = ["data-stewards"]
"""


def _graph() -> LineageGraph:
    return LineageGraph.from_document(
        {
            "datasets": [
                {"id": "raw.customers", "name": "customers", "columns": ["id", "email", "ssn"]},
                {
                    "id": "hr.people",
                    "name": "people",
                    "columns": [{"name": "SSN"}, {"name": "name", "tags": ["pii"]}],
                },
                {"id": "mart.x", "name": "x", "columns": ["email"], "tags": ["finance"]},
            ],
            "processes": [
                {"id": "job:load", "name": "load", "inputs": ["raw.customers"], "outputs": ["mart.x"]}
            ],
        }
    )


def test_the_issue_shape_parses_and_tags_the_named_columns() -> None:
    rules = parse_rules(ISSUE_SHAPE, file="rules.toml")
    g = _graph()
    assert rules.apply(g) == 3  # raw.customers.email, raw.customers.ssn, hr.people.SSN (case-insensitive)
    cols = {(d.id, c.name): c for d in g.datasets for c in d.columns}
    for key in [("raw.customers", "email"), ("raw.customers", "ssn"), ("hr.people", "SSN")]:
        assert list(cols[key].classifications) == [Classification(name="PII", propagate=True)]
        assert list(cols[key].terms) == ["Glossary@Customer Email"]
        assert list(cols[key].owners) == ["data-stewards"]
    assert not cols[("raw.customers", "id")].classifications
    assert not cols[("mart.x", "email")].classifications  # `raw.customers.email` is not a glob on mart
    assert all(not d.classifications for d in g.datasets)  # column rules leave datasets alone


def test_datasets_processes_regexes_and_tags_match() -> None:
    rules = parse_rules(
        """
[[rules]]
datasets = ["re:(raw|hr)\\\\..*"]
business = { Governance = { costCentre = "CC-1", retentionDays = 30 } }

[[rules]]
processes = ["job:*"]
labels = ["nightly"]

[[rules]]
tagged = ["pii"]
classifications = ["PII"]

[[rules]]
datasets = ["mart.*"]
tagged = ["finance"]
owners = ["finance-team"]
""",
        file="r.toml",
    )
    g = _graph()
    rules.apply(g)
    by_id = {d.id: d for d in g.datasets}
    assert by_id["raw.customers"].business == {"Governance": {"costCentre": "CC-1", "retentionDays": 30}}
    assert by_id["hr.people"].business and not by_id["mart.x"].business
    assert g.processes[0].labels == ["nightly"]
    name = next(c for c in by_id["hr.people"].columns if c.name == "name")
    assert [c.name for c in name.classifications] == ["PII"]  # matched by the reader's tag alone
    assert by_id["mart.x"].owners == ["finance-team"]  # pattern and tag both hold


def test_applying_twice_changes_nothing_more() -> None:
    rules = parse_rules(ISSUE_SHAPE)
    g = _graph()
    rules.apply(g)
    assert rules.apply(g) == 0


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('[[rules]]\ncolumns = ["a.b.c"]\nclassification = ["PII"]\n', 1, "unknown key 'classification'"),
        ('x = 1\n[[rules]]\ncolumns = ["a.b.c"]\nowners = ["o"]\n', 1, "unknown top-level key 'x'"),
        (
            '[[rules]]\ndatasets = ["a"]\nowners = ["o"]\n\n[[rules]]\ndatasets = ["re:(x"]\nowners = ["o"]\n',
            5,
            "bad regular expression",
        ),
        ('[[rules]]\nowners = ["o"]\n', 1, "matches nothing"),
        ('[[rules]]\ndatasets = ["a"]\n', 1, "adds nothing"),
        ('[[rules]]\ncolumns = ["email"]\nowners = ["o"]\n', 1, "names no dataset"),
        ('[[rules]]\ndatasets = ["a"]\nterms = ["NoGlossary"]\n', 1, "term@glossary"),
        ('[[rules]]\ndatasets = ["a"]\nlabels = ["a b"]\n', 1, "label 'a b'"),
        (
            '[[rules]]\ndatasets = ["a"]\nclassifications = [{ name = "P", propagate = "yes" }]\n',
            1,
            "'propagate'",
        ),
        ('[[rules]]\ndatasets = ["a"]\nclassifications = ["P", "P"]\n', 1, "given twice"),
        ('[[rules]]\ndatasets = ["a"]\nbusiness = { bm = "x" }\n', 1, "table of tables"),
        ("[[rules]\n", 1, "not a valid TOML file"),
        ('[[rules]]\ndatasets = ["a"]\nlabels = ["x"]\nforeign = 1\n', 1, "'foreign' must be true or false"),
        (
            '[[rules]]\ndatasets = ["a"]\nlabels = ["x"]\n\n[[rules]]\ndatasets = ["b"]\nowners = ["o"]\nforeign = true\n',
            5,
            "owners cannot go on entities another tool created",
        ),
        ('[[rules]]\nprocesses = ["*"]\nlabels = ["x"]\nforeign = true\n', 1, "processes are always"),
    ],
)
def test_a_bad_file_is_an_error_naming_file_rule_and_line(text: str, line: int, message: str) -> None:
    with pytest.raises(InputError) as err:
        parse_rules(text, file="rules.toml")
    assert err.value.file == "rules.toml"
    assert err.value.line == line
    assert message in str(err.value)


_TYPES: dict[str, dict[str, Any]] = {
    "PII": {"category": "CLASSIFICATION", "attributeDefs": [{"name": "level"}], "superTypes": ["Base"]},
    "Base": {"category": "CLASSIFICATION", "attributeDefs": [{"name": "source"}]},
    "Governance": {"category": "BUSINESS_METADATA", "attributeDefs": [{"name": "costCentre"}]},
    "hive_table": {"category": "ENTITY"},
}


def test_names_are_checked_against_the_known_types() -> None:
    ok = parse_rules(
        '[[rules]]\ndatasets = ["a"]\nclassifications = [{ name = "PII", attributes = { level = "high", source = "x" } }]\n'
        'business = { Governance = { costCentre = "1" } }\n'
    )
    check_names(ok, _TYPES.get)  # an inherited attribute (source) is an attribute too
    for text, message in [
        ('[[rules]]\ndatasets = ["a"]\nclassifications = ["Nope"]\n', "unknown classification 'Nope'"),
        (
            '[[rules]]\ndatasets = ["a"]\nclassifications = ["hive_table"]\n',
            "unknown classification 'hive_table'",
        ),
        (
            '[[rules]]\ndatasets = ["a"]\nclassifications = [{ name = "PII", attributes = { x = 1 } }]\n',
            "no attribute 'x'",
        ),
        (
            '[[rules]]\ndatasets = ["a"]\nbusiness = { Nope = { a = 1 } }\n',
            "unknown business metadata 'Nope'",
        ),
        ('[[rules]]\ndatasets = ["a"]\nbusiness = { Governance = { owner = 1 } }\n', "no attribute 'owner'"),
    ]:
        with pytest.raises(InputError, match=message) as err:
            check_names(parse_rules(text, file="f.toml"), _TYPES.get)
        assert err.value.line == 1 and "rule 1" in str(err.value)


def test_foreign_rules_also_say_what_goes_on_another_tools_entities() -> None:
    rules = parse_rules(
        """
[[rules]]
columns = ["raw.customers.email"]
classifications = ["PII"]
labels = ["gdpr"]
foreign = true

[[rules]]
columns = ["raw.customers.*"]
classifications = [{ name = "PII", propagate = false }, "Internal"]
labels = ["ours"]

[[rules]]
datasets = ["raw.customers"]
business = { Gov = { costCentre = "CC-1" } }
foreign = true
""",
        file="rules.toml",
    )
    assert [r.index for r in rules.foreign] == [1, 3]
    g = _graph()
    rules.apply(g)
    raw = next(d for d in g.datasets if d.id == "raw.customers")
    email = next(c for c in raw.columns if c.name == "email")
    # everything, for atlas-sync's own entity; only what foreign rules add, for another tool's
    assert [c.name for c in email.classifications] == ["PII", "Internal"]
    assert sorted(email.labels) == ["gdpr", "ours"]
    assert email.foreign_metadata == {
        "classifications": [{"typeName": "PII", "attributes": {}}],
        "labels": ["gdpr"],
    }
    assert next(c for c in raw.columns if c.name == "id").foreign_metadata is None
    assert raw.foreign_metadata == {"business": {"Gov": {"costCentre": "CC-1"}}}
