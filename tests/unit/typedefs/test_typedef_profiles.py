"""The built-in bundles carry exactly the type names and attributes the profile spec fixes
(the renderer depends on them). Expectations are transcribed from the spec, not from the files."""

from __future__ import annotations

import pytest

from atlas_sync.typedefs import ServerTypes, load_bundle
from atlas_sync.typedefs.model import EntityDef, RelationshipDef

S, INT, B, AS = "string", "int", "boolean", "array<string>"

PICO_ROOTS = {
    "pico_spark_data_type": (
        "DataSet",
        {
            "atlasSyncJob": S,
            "atlasSyncDigest": S,
            "atlasSyncMetadata": S,
            "atlasSyncKey": S,
            "levelExpr": S,
            "columns": AS,
        },
    ),
    "pico_spark_process_type": (
        "Process",
        {
            "atlasSyncJob": S,
            "atlasSyncDigest": S,
            "atlasSyncMetadata": S,
            "atlasSyncKey": S,
            "operator": S,
            "levelExpr": S,
            "levelNum": INT,
            "planText": S,
        },
    ),
}
PICO_OPERATORS = {
    "project": {"columns": AS},
    "filter": {"condition": S},
    "union": {"isAll": B, "byName": B},
    "logical_relation": {"columns": AS, "format": S, "location": S, "table": S},
    "local_relation": {"columns": AS},
    "join": {"joinType": S, "condition": S},
    "aggregate": {"groupingExpressions": AS, "aggregateExpressions": AS},
    "window": {"windowExpressions": AS, "partitionSpec": AS, "orderSpec": AS},
    "sort": {"order": AS, "isGlobal": B},
    "limit": {"limit": S},
    "generate": {"generator": S, "outputColumns": AS},
    "distinct": {"keys": AS},
    "subquery_alias": {"alias": S},
    "expand": {"projections": AS},
    "cte": {"cteId": S},
    "write": {"command": S, "target": S, "format": S, "mode": S, "columns": AS},
    "operator": {"arguments": S},
}
LINEAGE_ENTITIES = {
    "lineage_dataset": (
        "DataSet",
        {
            "atlasSyncJob": S,
            "atlasSyncDigest": S,
            "atlasSyncMetadata": S,
            "atlasSyncKey": S,
            "namespace": S,
            "kind": S,
            "format": S,
            "location": S,
        },
    ),
    "lineage_column": (
        "DataSet",
        {
            "atlasSyncJob": S,
            "atlasSyncDigest": S,
            "atlasSyncMetadata": S,
            "atlasSyncKey": S,
            "dataType": S,
            "position": INT,
        },
    ),
    "lineage_process": (
        "Process",
        {
            "atlasSyncJob": S,
            "atlasSyncDigest": S,
            "atlasSyncMetadata": S,
            "atlasSyncKey": S,
            "kind": S,
            "queryText": S,
            "sourceFile": S,
        },
    ),
    "lineage_column_lineage": (
        "Process",
        {
            "atlasSyncJob": S,
            "atlasSyncDigest": S,
            "atlasSyncMetadata": S,
            "atlasSyncKey": S,
            "dependencyType": S,
            "expression": S,
        },
    ),
}
LINEAGE_ENTITIES |= {  # the BI objects (lineage/bi.py): datasets, so their columns and lineage are a dataset's
    "lineage_bi_dataset": ("lineage_dataset", {"tool": S}),
    "lineage_chart": ("lineage_dataset", {"tool": S, "chartType": S}),
    "lineage_dashboard": ("lineage_dataset", {"tool": S}),
}
LINEAGE_RELATIONSHIPS = {
    "lineage_dashboard_charts": (
        ("lineage_dashboard", "charts", "SET", True),
        ("lineage_chart", "dashboards", "SET"),
    ),
    "lineage_dataset_columns": (
        ("lineage_dataset", "columns", "SET", True),
        ("lineage_column", "dataset", "SINGLE"),
    ),
    "lineage_process_column_lineages": (
        ("lineage_process", "columnLineages", "SET", True),
        ("lineage_column_lineage", "process", "SINGLE"),
    ),
}


def _attrs(bundle, name: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    d = bundle.entries[name].definition
    assert isinstance(d, EntityDef)
    assert all(a.isOptional for a in d.attributeDefs), f"{name}: every attribute must be optional"
    return {a.name: a.typeName for a in d.attributeDefs}


def test_pico_bundle_has_exactly_the_spec_types() -> None:
    bundle = load_bundle("pico")
    expected = set(PICO_ROOTS) | {f"pico_spark_{op}_type" for op in PICO_OPERATORS}
    assert set(bundle.names) == expected


@pytest.mark.parametrize("name", sorted(PICO_ROOTS))
def test_pico_root_types(name: str) -> None:
    bundle = load_bundle("pico")
    supertype, attrs = PICO_ROOTS[name]
    assert bundle.entries[name].super_types == [supertype]
    assert _attrs(bundle, name) == attrs


@pytest.mark.parametrize("op", sorted(PICO_OPERATORS))
def test_pico_operator_subtypes_declare_only_their_own_attributes(op: str) -> None:
    bundle = load_bundle("pico")
    name = f"pico_spark_{op}_type"
    assert bundle.entries[name].super_types == ["pico_spark_process_type"]
    assert _attrs(bundle, name) == PICO_OPERATORS[op]


def test_lineage_bundle_types_and_relationships() -> None:
    bundle = load_bundle("lineage")
    assert set(bundle.names) == set(LINEAGE_ENTITIES) | set(LINEAGE_RELATIONSHIPS)
    for name, (supertype, attrs) in LINEAGE_ENTITIES.items():
        assert bundle.entries[name].super_types == [supertype]
        assert _attrs(bundle, name) == attrs
    for name, (end1, end2) in LINEAGE_RELATIONSHIPS.items():
        r = bundle.entries[name].definition
        assert isinstance(r, RelationshipDef)
        # a chart may be on several dashboards: contained, not owned
        assert r.relationshipCategory == (
            "AGGREGATION" if name == "lineage_dashboard_charts" else "COMPOSITION"
        )
        assert r.propagateTags == "NONE"
        assert (r.endDef1.type, r.endDef1.name, r.endDef1.cardinality, r.endDef1.isContainer) == end1
        assert (r.endDef2.type, r.endDef2.name, r.endDef2.cardinality) == end2
        assert r.endDef2.isContainer is False


def test_both_builtin_bundles_combine_and_resolve_against_atlas_base_types() -> None:
    bundle = load_bundle("pico", "lineage")
    bundle.resolve(ServerTypes.builtin())
    assert bundle.external_references() == {"DataSet", "Process"}
