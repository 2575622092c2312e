"""The BI part of the lineage model (lineage/bi.py) and how the lineage and atlas profiles render it:
table -> BI dataset -> chart -> dashboard, a dashboard's charts as a containment relationship, names
from stable ids. Expected names written by hand from docs/bi.md."""

from __future__ import annotations

from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.bi import BI_DATASET, CHART, BiBuilder
from atlas_sync.lineage.model import LineageGraph
from atlas_sync.render import load_profile, render


def _graph(chart_name: str = "Revenue", with_second_chart: bool = True) -> LineageGraph:
    b = BiBuilder("superset", "bi")
    t = b.table("jaffle.main.orders", namespace="jaffle.main", name="orders", columns=["amount", "day"])
    ds = b.bi_object(BI_DATASET, "ds-1", "orders", columns=["amount", "day"])
    b.feed(
        ds,
        [t.id],
        edges=[(t.id, "amount", "amount", "IDENTITY", None), (t.id, "day", "day", "IDENTITY", None)],
    )
    c1 = b.bi_object(CHART, "c-1", chart_name, facets={"chartType": "line"})
    b.feed(c1, [ds.id], edges=[(ds.id, "amount", "SUM(amount)", "AGGREGATION", "SUM(amount)")])
    charts = [c1.id]
    if with_second_chart:
        c2 = b.bi_object(CHART, "c-2", "Days", facets={"chartType": "table"})
        b.feed(c2, [ds.id], edges=[(ds.id, "day", "day", "IDENTITY", None)])
        charts.append(c2.id)
    b.dashboard("d-1", "Sales", charts)
    return b.graph


def test_lineage_profile_renders_bi_subtypes_named_by_stable_id_with_the_dashboard_holding_its_charts() -> (
    None
):
    state = render(_graph(), load_profile("lineage"), domain="demo", job="bi")
    keys = set(state.entities)
    assert {
        ("lineage_dataset", "jaffle.main.orders@demo"),
        ("lineage_bi_dataset", "superset:bi_dataset:ds-1@demo"),
        ("lineage_chart", "superset:chart:c-1@demo"),
        ("lineage_chart", "superset:chart:c-2@demo"),
        ("lineage_dashboard", "superset:dashboard:d-1@demo"),
        ("lineage_column", "superset:chart:c-1.SUM(amount)@demo"),
        ("lineage_process", "bi:superset:chart:c-1@demo"),
        ("lineage_process", "bi:superset:dashboard:d-1@demo"),
    } <= keys
    dash = state.entities[("lineage_dashboard", "superset:dashboard:d-1@demo")]
    assert dash.refs["charts"] == [
        ("lineage_chart", "superset:chart:c-1@demo"),
        ("lineage_chart", "superset:chart:c-2@demo"),
    ]
    assert "charts" in dash.rel_attrs
    chart = state.entities[("lineage_chart", "superset:chart:c-1@demo")]
    assert chart.attributes["name"] == "Revenue"
    assert chart.attributes["chartType"] == "line"
    assert chart.attributes["tool"] == "superset"
    feed = state.entities[("lineage_process", "bi:superset:bi_dataset:ds-1@demo")]
    assert feed.refs["inputs"] == [("lineage_dataset", "jaffle.main.orders@demo")]
    assert feed.refs["outputs"] == [("lineage_bi_dataset", "superset:bi_dataset:ds-1@demo")]
    # column level: orders.amount -> dataset.amount -> chart's SUM(amount)
    cl = state.entities[
        ("lineage_column_lineage", "bi:superset:chart:c-1:superset:chart:c-1.SUM(amount)@demo")
    ]
    assert cl.refs["inputs"] == [("lineage_column", "superset:bi_dataset:ds-1.amount@demo")]
    assert cl.attributes["dependencyType"] == "AGGREGATION"


def test_atlas_profile_renders_bi_types_next_to_the_hook_named_tables() -> None:
    state = render(_graph(), load_profile("atlas"), domain="demo", job="bi")
    keys = set(state.entities)
    assert {
        ("hive_table", "jaffle:main.orders@primary"),
        ("bi_dataset", "superset:bi_dataset:ds-1@primary"),
        ("bi_chart", "superset:chart:c-1@primary"),
        ("bi_dashboard", "superset:dashboard:d-1@primary"),
        ("bi_dataset_column", "superset:bi_dataset:ds-1.amount@primary"),
        ("bi_chart_column", "superset:chart:c-1.SUM(amount)@primary"),
        ("bi_process", "bi:superset:chart:c-1@primary"),
    } <= keys
    dash = state.entities[("bi_dashboard", "superset:dashboard:d-1@primary")]
    assert dash.refs["charts"] == [
        ("bi_chart", "superset:chart:c-1@primary"),
        ("bi_chart", "superset:chart:c-2@primary"),
    ]
    field = state.entities[("bi_chart_column", "superset:chart:c-1.SUM(amount)@primary")]
    assert field.refs["chart"] == ("bi_chart", "superset:chart:c-1@primary")
    feed = state.entities[("bi_process", "bi:superset:bi_dataset:ds-1@primary")]
    assert feed.refs["inputs"] == [("hive_table", "jaffle:main.orders@primary")]
    # column lineage of a BI step: bi_column_lineage in its bi_process (hive_column_lineage needs a hive_process)
    cl = state.entities[("bi_column_lineage", "bi:superset:chart:c-1@primary:superset:chart:c-1.SUM(amount)")]
    assert cl.refs["process"] == ("bi_process", "bi:superset:chart:c-1@primary")
    assert cl.refs["inputs"] == [("bi_dataset_column", "superset:bi_dataset:ds-1.amount@primary")]
    assert cl.attributes["dependencyType"] == "AGGREGATION"


def test_a_renamed_chart_is_an_update_and_a_removed_chart_is_deleted() -> None:
    emu = Emulator(None)
    from atlas_sync.api import Publisher

    pub = Publisher(embedded_client(emulator=emu), profile="lineage", domain="demo")
    pub.sync(_graph(), job="bi")
    second = pub.sync(_graph(), job="bi")
    assert not second.plan.has_changes
    renamed = pub.sync(_graph(chart_name="Revenue by day"), job="bi")
    # the chart, its process (named after it) and its fields' labels (`<chart>.<field>` in Atlas's UI)
    # are updated in place
    assert {i.key for i in renamed.plan.by_action("update")} == {
        ("lineage_chart", "superset:chart:c-1@demo"),
        ("lineage_process", "bi:superset:chart:c-1@demo"),
        ("lineage_column", "superset:chart:c-1.SUM(amount)@demo"),
    }
    assert not renamed.plan.by_action("create") and not renamed.plan.by_action("delete")
    dropped = pub.sync(_graph(chart_name="Revenue by day", with_second_chart=False), job="bi", force=True)
    deleted = {i.key for i in dropped.plan.by_action("delete")}
    assert ("lineage_chart", "superset:chart:c-2@demo") in deleted
    assert ("lineage_process", "bi:superset:chart:c-2@demo") in deleted
    assert not any(qn.startswith("superset:chart:c-1") for _t, qn in deleted)
