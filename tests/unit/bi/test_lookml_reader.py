"""The `lookml` reader on LookML projects: the hand-written `shop` project (tests/data/lookml/shop) and
lkml's own test files (MIT, tests/data/lookml/lkml_resources). Expected lineage written by hand from
the files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from atlas_sync.errors import InputError
from atlas_sync.lineage import registry
from atlas_sync.lineage.lookml.project import render_liquid

DATA = Path(__file__).resolve().parents[2] / "data" / "lookml"
SHOP = DATA / "shop"
V = "lookml:bi_dataset:shop."
E = "lookml:bi_dataset:shop.shop."
MAP = {"warehouse": "jaffle"}


def _edges(g) -> set[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return {(str(e.source), str(e.target), e.kind) for e in g.edges}


def _inputs(g) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    return {p.id: p.inputs for p in g.processes}


def test_shop_project_views_explores_derived_tables_and_dashboard() -> None:
    g = registry.read("lookml", [str(SHOP)], connection_map=MAP)
    assert g.job == "lookml-shop"
    assert _inputs(g) == {
        # @{marts} = main_marts (manifest), connection warehouse -> jaffle: dbt's names
        V + "orders": ["jaffle.main_marts.fct_orders"],
        V + "customers": ["jaffle.main_marts.customers"],
        # ${orders.SQL_TABLE_NAME} is orders' table
        V + "big_orders": ["jaffle.main_marts.fct_orders", "jaffle.main_marts.customers"],
        E + "orders": [V + "orders", V + "customers"],
        # the native derived table reads its explore
        V + "customer_facts": [E + "orders"],
        E + "big_orders": [V + "big_orders"],
        E + "customer_facts": [V + "customer_facts"],
        "lookml:chart:shop.overview.amount_by_month": [E + "orders"],
        "lookml:chart:shop.overview.top_customers": [E + "orders"],
        "lookml:dashboard:shop.overview": [
            "lookml:chart:shop.overview.amount_by_month",
            "lookml:chart:shop.overview.top_customers",
            "lookml:chart:shop.overview.lost",
        ],
    }
    edges = _edges(g)
    t = "jaffle.main_marts.fct_orders"
    expected = {
        (f"{t}.order_id", V + "orders.order_id", "IDENTITY"),
        (f"{t}.status", V + "orders.status", "IDENTITY"),  # a dimension without sql: ${TABLE}.status
        (f"{t}.order_date", V + "orders.ordered", "IDENTITY"),  # dimension_group ordered
        (f"{t}.amount", V + "orders.card_share", "TRANSFORMATION"),  # through ${amount_value}
        (f"{t}.credit_card_amount", V + "orders.card_share", "TRANSFORMATION"),
        (f"{t}.amount", V + "orders.total_amount", "AGGREGATION"),  # type: sum of ${amount_value}
        (f"{t}.amount", V + "orders.is_big", "TRANSFORMATION"),  # from the refinement view: +orders
        ("jaffle.main_marts.customers.first_name", V + "customers.full_name", "TRANSFORMATION"),
        ("jaffle.main_marts.customers.last_name", V + "customers.full_name", "TRANSFORMATION"),
        # derived SQL, with {% condition %} kept as a filter on its column
        (f"{t}.amount", V + "big_orders.amount", "AGGREGATION"),
        ("jaffle.main_marts.customers.first_name", V + "big_orders.first_name", "IDENTITY"),
        (f"{t}.status", V + "big_orders.*", "FILTER"),
        # explore fields and the join
        (V + "orders.total_amount", E + 'orders."orders.total_amount"', "IDENTITY"),
        (V + "customers.full_name", E + 'orders."customers.full_name"', "IDENTITY"),
        (V + "orders.customer_id", E + "orders.*", "JOIN"),
        (V + "customers.customer_id", E + "orders.*", "JOIN"),
        # native derived table columns, and its measure over one
        (E + 'orders."orders.total_amount"', V + "customer_facts.total_amount", "IDENTITY"),
        (E + 'orders."orders.total_amount"', V + "customer_facts.spend", "AGGREGATION"),
        # dashboard elements' fields (a timeframe of the dimension group)
        (
            E + 'orders."orders.ordered"',
            'lookml:chart:shop.overview.amount_by_month."orders.ordered_month"',
            "IDENTITY",
        ),
        (
            E + 'orders."customers.lifetime_value"',
            'lookml:chart:shop.overview.top_customers."customers.lifetime_value"',
            "IDENTITY",
        ),
    }
    assert expected <= edges
    dash = g.dataset("lookml:dashboard:shop.overview")
    assert dash is not None and dash.name == "Shop overview"
    assert g.dataset("lookml:chart:shop.overview.note") is None  # a text tile is no chart
    assert g.dataset(V + "+orders") is None  # a refinement is its view
    codes = sorted(p.code or "" for p in g.problems)
    assert codes == ["lookml-liquid", "lookml-liquid", "lookml-unresolved"]
    assert all(p.severity == "warning" for p in g.problems)
    messages = " | ".join(p.message for p in g.problems)
    assert "first branch" in messages and "user attribute 'region'" in messages
    assert "element 'lost'" in messages


def test_user_attributes_given_leave_nothing_to_report() -> None:
    g = registry.read("lookml", [str(SHOP)], connection_map=MAP, user_attributes="region=EU")
    assert not any("region" in p.message for p in g.problems)


def test_a_connection_the_map_does_not_name_keeps_sql_names_with_one_warning() -> None:
    g = registry.read("lookml", [str(SHOP)])
    tables = {d.id for d in g.datasets if d.kind == "table"}
    assert tables == {"main_marts.fct_orders", "main_marts.customers"}
    assert [p.code for p in g.problems].count("lookml-unmapped-connection") == 1


def test_lkml_test_view_gives_its_table_and_fields() -> None:
    g = registry.read("lookml", [str(DATA / "lkml_resources" / "dimensions")])
    view = "lookml:bi_dataset:dimensions.view_name"
    assert _inputs(g) == {view: ["schema.table_name"]}
    assert _edges(g) == {
        (f"schema.table_name.{c}", f"{view}.{c}", "IDENTITY")
        for c in ("a_dimension", "another_dimension", "yet_another_dimension", "a_dimension_group")
    }
    assert not g.problems


def test_lkml_every_keyword_files_are_read_with_what_cannot_be_resolved_reported() -> None:
    g = registry.read("lookml", [str(DATA / "lkml_resources" / "all_fields")])
    codes = {p.code for p in g.problems}
    assert "lookml-unresolved" in codes  # its native derived table's explore_name does not exist
    assert all(p.severity == "warning" for p in g.problems)


def test_an_unparseable_file_is_an_error_naming_it_and_the_other_files_are_read(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    shutil.copytree(SHOP, project)
    (project / "views" / "broken.view.lkml").write_text("view: broken {\n  sql_table_name: x ;;\n")
    (project / "dashboards" / "bad.dashboard.lookml").write_text("- dashboard: bad\n  elements: [\n")
    g = registry.read("lookml", [str(project)], connection_map=MAP)
    errors = [p for p in g.problems if p.severity == "error"]
    assert sorted(Path(p.file or "").name for p in errors) == ["bad.dashboard.lookml", "broken.view.lkml"]
    assert all("invalid LookML" in p.message for p in errors)
    assert g.dataset(V + "orders") is not None and g.dataset("lookml:dashboard:shop.overview") is not None


def test_auto_detection_picks_lookml_for_a_project_folder() -> None:
    assert registry.detect(str(SHOP)).name == "lookml"


def test_an_only_broken_file_is_an_input_error(tmp_path: Path) -> None:
    f = tmp_path / "x.view.lkml"
    f.write_text("view: x {")
    with pytest.raises(InputError) as exc:
        registry.read("lookml", [str(f)])
    assert str(f) in str(exc.value)


def test_liquid_and_constants() -> None:
    r = render_liquid(
        "SELECT * FROM @{db}.t WHERE {% condition f %} a.x {% endcondition %} AND y = {% parameter p %} "
        "AND z = '{{ _user_attributes['k'] }}' AND m = '{{ _model._name }}' {% if a %}AND 1{% elsif b %}AND 2{% endif %} @{nope}",
        constants={"db": "@{inner}", "inner": "prod"},
        names={"model": "shop"},
    )
    assert r.text == (
        "SELECT * FROM prod.t WHERE (a.x) IS NOT NULL AND y = NULL AND z = 'NULL' AND m = 'shop' AND 1 @{nope}"
    )
    assert r.unknown_constants == ["nope"]
    assert len(r.notes) == 2
