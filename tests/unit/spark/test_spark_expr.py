"""Spark expression text: parsing, outputs and the dependency kind of every attribute."""

from __future__ import annotations

import pytest

from atlas_sync.lineage.spark.expr import (
    ExprSyntaxError,
    analyze,
    conjuncts,
    output_of,
    parse_expr,
    parse_list,
    render,
    split_top,
    strip_brackets,
)


def test_attributes_aliases_and_type_suffixes() -> None:
    a, b, c = parse_list("model#17, qty#8L AS n#9L, max(age#33) AS max(age)#40")
    assert output_of(a) == ("model", 17, None)
    assert output_of(b) == ("n", 9, "long")
    assert output_of(c) == ("max(age)", 40, None)  # generated names keep their brackets


def test_generated_attribute_names_with_brackets_are_one_attribute() -> None:
    [e] = parse_list("max(age)#43")
    assert (e.kind, e.name, e.id) == ("attr", "max(age)", 43)
    assert analyze(e).direct == {43: "IDENTITY"}


def test_python_udf_result_id_keeps_the_inputs() -> None:
    """``<lambda>(name#1)#2``: a UDF call with its result id is not an attribute named ``<lambda>(name#1)``."""
    [e] = parse_list("<lambda>(name#1)#2 AS uname#3")
    assert output_of(e) == ("uname", 3, None)
    assert analyze(e).direct == {1: "TRANSFORMATION"}


def test_backquoted_names_may_hold_commas_and_spaces() -> None:
    items = parse_list("`a, b`#5, `c d`#6 AS x#7")
    assert [output_of(e) for e in items] == [("`a, b`", 5, None), ("x", 7, None)]


def test_unresolved_attributes_have_no_id() -> None:
    [e] = parse_list("'e.dept_id")
    assert (e.kind, e.name, e.id) == ("attr", "e.dept_id", None)
    [f] = parse_list("'sum('`*`('qty, 'price)) AS revenue#10")
    assert f.kind == "alias" and f.args[0].kind == "call" and f.args[0].name == "sum" and f.args[0].agg


@pytest.mark.parametrize(
    ("text", "direct", "indirect"),
    [
        ("a#1", {1: "IDENTITY"}, {}),
        ("a#1 AS b#2", {1: "IDENTITY"}, {}),
        ("outer(a#1)", {1: "IDENTITY"}, {}),
        ("cast(a#1 as double) AS b#2", {1: "TRANSFORMATION"}, {}),
        ("(a#1 * b#2) AS c#3", {1: "TRANSFORMATION", 2: "TRANSFORMATION"}, {}),
        ("sum((cast(q#8L as double) * p#6)) AS r#10", {8: "AGGREGATION", 6: "AGGREGATION"}, {}),
        ("(max(a#1) + b#2) AS c#3", {1: "AGGREGATION", 2: "TRANSFORMATION"}, {}),
        ("count(1) AS n#11L", {}, {}),
        ("current_timestamp() AS t#21", {}, {}),
        (
            "CASE WHEN (c#1 >= 1000.0) THEN gold WHEN (d#2 = EU) THEN e#3 ELSE f#4 END AS tier#5",
            {3: "TRANSFORMATION", 4: "TRANSFORMATION"},
            {1: "CONDITIONAL", 2: "CONDITIONAL"},
        ),
        # a CASE nested in a CASE value: its own condition is conditional too
        (
            "CASE WHEN a#1 THEN CASE WHEN b#2 THEN c#3 END ELSE d#4 END AS x#9",
            {3: "TRANSFORMATION", 4: "TRANSFORMATION"},
            {1: "CONDITIONAL", 2: "CONDITIONAL"},
        ),
        (
            "if ((a#1 > 500)) b#2 else c#3 AS x#9",
            {2: "TRANSFORMATION", 3: "TRANSFORMATION"},
            {1: "CONDITIONAL"},
        ),
        ("if((a#1 > 500), b#2, c#3) AS x#9", {2: "TRANSFORMATION", 3: "TRANSFORMATION"}, {1: "CONDITIONAL"}),
        (
            "row_number() windowspecdefinition(d#19, s#20 DESC NULLS LAST, "
            "specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$())) AS rn#7",
            {},
            {19: "WINDOW", 20: "WINDOW"},
        ),
        (
            "sum(s#20) windowspecdefinition(d#19, specifiedwindowframe(RowFrame, unboundedpreceding$(), "
            "unboundedfollowing$())) AS t#8L",
            {20: "AGGREGATION"},
            {19: "WINDOW"},
        ),
        (
            "rank(x#1) windowspecdefinition(d#2, x#1 ASC NULLS FIRST, specifiedwindowframe(RangeFrame, "
            "unboundedpreceding$(), currentrow$())) AS r#3",
            {},
            {1: "WINDOW", 2: "WINDOW"},
        ),
        ("s#222.a AS sa#223", {222: "TRANSFORMATION"}, {}),
        ("items#7[0] AS first#8", {7: "TRANSFORMATION"}, {}),
    ],
)
def test_dependency_kinds(text: str, direct: dict[int, str], indirect: dict[int, str]) -> None:
    deps = analyze(parse_expr(text))
    assert deps.direct == direct
    assert deps.indirect == indirect


def test_subquery_markers_carry_their_outer_references() -> None:
    e = parse_expr("(dept_id#44 IN (list#40 []) AND exists#41 [emp_id#42])")
    deps = analyze(e)
    assert [(s.name, s.id, [a.id for a in s.args]) for s, _, _ in deps.subqueries] == [
        ("list", 40, []),
        ("exists", 41, [42]),
    ]
    # the outer reference list is not a value read by the predicate itself
    assert deps.direct == {44: "TRANSFORMATION"}


def test_conjuncts_split_top_level_and() -> None:
    parts = conjuncts(parse_expr("((isnotnull(a#1) AND (a#1 > 1)) AND (b#2 = c#3))"))
    # outer parentheses are dropped
    assert [render(p) for p in parts] == ["isnotnull(a#1)", "a#1 > 1", "b#2 = c#3"]
    assert [render(p) for p in conjuncts(parse_expr("(a#1 OR b#2)"))] == ["a#1 OR b#2"]


def test_literals_with_tree_markers_and_commas_are_just_words() -> None:
    deps = analyze(parse_expr("(b#2 = a +- b :- c)"))
    assert deps.direct == {2: "TRANSFORMATION"}


@pytest.mark.parametrize("text", ["upper(a#1", "a#1)", "[a#1, (b#2]"])
def test_unbalanced_brackets_raise(text: str) -> None:
    with pytest.raises(ExprSyntaxError):
        parse_list(text)


def test_split_top_and_strip_brackets() -> None:
    assert split_top("a, [b, c], `d,e`, (f, g)") == ["a", "[b, c]", "`d,e`", "(f, g)"]
    assert split_top("") == []
    assert strip_brackets(" [a, [b]] ") == "a, [b]"
    assert strip_brackets("[a], [b]") is None
    assert strip_brackets("a") is None


def test_render_gives_back_the_parsed_text() -> None:
    text = "concat(name#42, name#35) AS name#27"
    [e] = parse_list(text)
    assert render(e) == text
    assert render(e.args[0]) == "concat(name#42, name#35)"
