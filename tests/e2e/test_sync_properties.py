"""Property tests of the sync core: any lineage graph syncs to exactly its desired state from any
previous state, and a second sync is empty (issue 5, Tests)."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.emulator import Emulator
from atlas_sync.factory import embedded_client
from atlas_sync.lineage.model import ColumnEdge, ColumnRef, Dataset, LineageGraph, Process
from atlas_sync.render import render

NAMES = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
    | st.sampled_from(['"', "\\", "\n", "@", "{", "}", "%"]),
    min_size=1,
    max_size=12,
).filter(lambda s: s.strip() == s and s != "*")


@st.composite
def graphs(draw: st.DrawFn) -> LineageGraph:
    n = draw(st.integers(1, 5))
    g = LineageGraph()
    names = draw(st.lists(NAMES.filter(lambda s: "@" not in s), min_size=n, max_size=n, unique=True))
    for i, name in enumerate(names):
        cols = draw(st.lists(NAMES, min_size=0, max_size=3, unique=True))
        g.add_dataset(Dataset(id=f"db{i}.t", namespace=f"db{i}", name=name, columns=cols))
    nproc = draw(st.integers(1, 3))
    for j in range(nproc):
        ins = draw(st.lists(st.sampled_from([d.id for d in g.datasets]), max_size=2, unique=True))
        outs = draw(st.lists(st.sampled_from([d.id for d in g.datasets]), max_size=2, unique=True))
        g.add_process(Process(id=f"p{j}", name=draw(NAMES), inputs=ins, outputs=outs))
        for o in outs:
            od = g.dataset(o)
            for i in ins:
                idd = g.dataset(i)
                if od is not None and idd is not None and od.columns and idd.columns:
                    kind = draw(
                        st.sampled_from(["IDENTITY", "TRANSFORMATION", "AGGREGATION", "FILTER", "JOIN"])
                    )
                    tgt = None if kind in ("FILTER", "JOIN") else draw(st.sampled_from(od.column_names()))
                    g.add_edge(
                        ColumnEdge(
                            source=ColumnRef(dataset=i, column=draw(st.sampled_from(idd.column_names()))),
                            target=ColumnRef(dataset=o, column=tgt),
                            kind=kind,
                            process=f"p{j}",
                        )
                    )
    return g


def _holdings(client: AtlasClient, domain: str) -> Counter[tuple[str, str]]:
    return Counter(
        (h["typeName"], h["attributes"]["qualifiedName"])
        for h in client.search_basic(
            "lineage_dataset,lineage_column,lineage_process,lineage_column_lineage",
            entity_filters={
                "attributeName": "qualifiedName",
                "operator": "endsWith",
                "attributeValue": "@" + domain,
            },
            attributes=["qualifiedName"],
        )
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=graphs(), after=graphs())
def test_sync_reaches_exactly_the_desired_state_from_any_previous_state(
    before: LineageGraph, after: LineageGraph
) -> None:
    client = embedded_client(emulator=Emulator(None))
    pub = Publisher(client, profile="lineage", domain="prop", max_delete_percent=100)
    pub.sync(before, job="job")
    pub.sync(after, job="job")
    desired = render(after, pub.profile, domain="prop", job="job")
    assert _holdings(client, "prop") == Counter(desired.entities.keys())
    second = pub.plan(after, job="job")
    assert not second.has_changes, [
        (i.action, i.qualified_name, i.changes) for i in second.items if i.action != "unchanged"
    ]
    # names came back unchanged
    for d in after.datasets:
        ent = client.get_entity_by_unique("lineage_dataset", f"{d.id}@prop")
        assert ent is not None
        got = ent.get("entity", ent)
        assert got["attributes"]["name"] == d.name
