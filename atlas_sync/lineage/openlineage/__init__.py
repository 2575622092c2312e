"""OpenLineage RunEvents -> LineageGraph (used by the ``openlineage`` reader and the endpoint)."""

from atlas_sync.lineage.openlineage.convert import EventSource, events_to_graph, job_key
from atlas_sync.lineage.openlineage.naming import NamespaceMap, load_namespace_map
from atlas_sync.lineage.openlineage.parse import parse_events
from atlas_sync.lineage.openlineage.schema import FacetIssue, drop_bad_facets, validate_event

__all__ = [
    "EventSource",
    "FacetIssue",
    "NamespaceMap",
    "drop_bad_facets",
    "events_to_graph",
    "job_key",
    "load_namespace_map",
    "parse_events",
    "validate_event",
]
