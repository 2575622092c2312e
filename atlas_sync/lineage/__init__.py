"""Lineage model and readers."""

from atlas_sync.lineage.model import (
    Column,
    ColumnEdge,
    ColumnRef,
    Dataset,
    LineageGraph,
    Problem,
    Process,
)

__all__ = ["Column", "ColumnEdge", "ColumnRef", "Dataset", "LineageGraph", "Problem", "Process"]
