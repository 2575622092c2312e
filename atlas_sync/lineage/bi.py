"""The BI part of the lineage model: BI datasets, charts and dashboards (docs/bi.md).

Readers of BI tools (``superset``, ``lookml``) build their graph with :class:`BiBuilder`:

* a **BI dataset** (kind ``bi_dataset``: a Superset dataset, a LookML view or explore) is fed by the
  warehouse tables its query reads, through a process of kind ``bi`` (its SQL as ``queryText``), with
  column edges from the tables' columns to its fields and metrics;
* a **chart** (kind ``chart``: a Superset chart, a LookML dashboard element) is fed by its BI
  dataset(s); its columns are the fields it shows, each with an edge from the dataset's field;
* a **dashboard** (kind ``dashboard``) is fed by its charts and lists them in ``facets["charts"]``,
  which the profiles publish as a containment relationship (a dashboard's Relationships tab).

So Atlas's lineage of a warehouse table reaches every chart and dashboard built on it. Ids are
``<tool>:<kind>:<stable id>`` (a Superset uuid, LookML ``project.model.explore``): a renamed chart is an
update of the same entity, not a delete and a create.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from atlas_sync.lineage.model import Column, ColumnEdge, ColumnRef, Dataset, LineageGraph, Process

BI_DATASET = "bi_dataset"
CHART = "chart"
DASHBOARD = "dashboard"
BI_KINDS: frozenset[str] = frozenset({BI_DATASET, CHART, DASHBOARD})

#: A column edge into a BI object: (source dataset id, source column or None, target column or None,
#: dependency kind, expression or None).
FieldEdge = tuple[str, str | None, str | None, str, str | None]


# A BI object's kind from its model kind or the type a profile publishes it as (what `show` reads back).
_KIND_OF_TYPE = {
    BI_DATASET: BI_DATASET,
    "lineage_bi_dataset": BI_DATASET,
    CHART: CHART,
    "lineage_chart": CHART,
    "bi_chart": CHART,
    DASHBOARD: DASHBOARD,
    "lineage_dashboard": DASHBOARD,
    "bi_dashboard": DASHBOARD,
}


def bi_kind(kind_or_type: str) -> str | None:
    """``bi_dataset``, ``chart`` or ``dashboard`` for a BI object's kind or Atlas type, else None."""
    return _KIND_OF_TYPE.get(kind_or_type)


def bi_id(tool: str, kind: str, key: str) -> str:
    """The dataset id of a BI object: ``<tool>:<kind>:<stable id>``."""
    return f"{tool}:{kind}:{key}"


def is_bi(dataset: Dataset) -> bool:
    return dataset.kind in BI_KINDS


class BiBuilder:
    """Builds the lineage graph of one BI tool's objects (see the module docs)."""

    def __init__(self, tool: str, job: str) -> None:
        self.tool = tool
        self.graph = LineageGraph(job=job, source=tool)

    def table(
        self,
        ident: str,
        *,
        namespace: str,
        name: str,
        kind: str = "table",
        connection: str | None = None,
        columns: Iterable[str] = (),
    ) -> Dataset:
        """A warehouse table (or view, file) a BI dataset reads, named as the other readers name it."""
        facets: dict[str, Any] = {"connection": connection} if connection else {}
        return self.graph.add_dataset(
            Dataset(
                id=ident,
                namespace=namespace,
                name=name,
                kind=kind,
                facets=facets,
                columns=[Column(name=c) for c in columns],
            )
        )

    def bi_object(
        self,
        kind: str,
        key: str,
        name: str,
        *,
        namespace: str = "",
        columns: Iterable[Column | str] = (),
        description: str | None = None,
        owners: Sequence[str] = (),
        facets: dict[str, Any] | None = None,
    ) -> Dataset:
        """A BI dataset, chart or dashboard (``kind``) with its stable ``key``."""
        cols = [c if isinstance(c, Column) else Column(name=c) for c in columns]
        return self.graph.add_dataset(
            Dataset(
                id=bi_id(self.tool, kind, key),
                namespace=namespace,
                name=name,
                kind=kind,
                columns=cols,
                description=description or None,
                owners=list(owners),
                facets={"tool": self.tool, **(facets or {})},
            )
        )

    def feed(
        self,
        target: Dataset,
        inputs: Iterable[str],
        *,
        edges: Iterable[FieldEdge] = (),
        query_text: str | None = None,
        source_file: str | None = None,
    ) -> Process | None:
        """The process from ``inputs`` (dataset ids) into ``target`` and its column edges; ``None`` (and
        nothing added) when there is no input. An edge whose source is not an input is left out."""
        ins = [i for i in dict.fromkeys(inputs) if i != target.id]
        if not ins:
            return None
        attributes: dict[str, Any] = {"tool": self.tool}
        if query_text:
            attributes["queryText"] = query_text
        if source_file:
            attributes["sourceFile"] = source_file
        process = self.graph.add_process(
            Process(
                id=target.id,
                # the tool's word for it when it has one (a LookML view or explore), else the kind
                name=f"{self.tool} {target.facets.get('objectType') or target.kind.replace('_', ' ')} {target.name}",
                kind="bi",
                inputs=ins,
                outputs=[target.id],
                attributes=attributes,
            )
        )
        allowed = set(ins)
        for src, scol, tcol, kind, expr in edges:
            if src not in allowed:
                continue
            if tcol is not None and not target.has_column(tcol):
                target.columns.append(Column(name=tcol))
            self.graph.add_edge(
                ColumnEdge(
                    source=ColumnRef(dataset=src, column=scol),
                    target=ColumnRef(dataset=target.id, column=tcol),
                    kind=kind,  # type: ignore[arg-type]
                    expression=expr,
                    process=process.id,
                )
            )
        return process

    def dashboard(
        self,
        key: str,
        name: str,
        charts: Sequence[str],
        *,
        namespace: str = "",
        description: str | None = None,
        owners: Sequence[str] = (),
        facets: dict[str, Any] | None = None,
        source_file: str | None = None,
    ) -> Dataset:
        """A dashboard holding ``charts`` (chart dataset ids), fed by them."""
        chart_ids = list(dict.fromkeys(charts))
        ds = self.bi_object(
            DASHBOARD,
            key,
            name,
            namespace=namespace,
            description=description,
            owners=owners,
            facets={**(facets or {}), "charts": chart_ids},
        )
        self.feed(ds, chart_ids, source_file=source_file)
        return ds

    def warn(self, message: str, *, code: str, file: str | None = None) -> None:
        """A warning of the graph (counted in the summary, listed by ``--json``)."""
        self.graph.problem(message, code=code, file=file)
