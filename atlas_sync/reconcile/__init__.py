"""Reconcile: desired vs actual -> Plan (one path for every input size, :mod:`.stream`); apply a Plan in batches."""

from atlas_sync.reconcile.apply import ApplyResult, apply_plan
from atlas_sync.reconcile.plan import (
    Plan,
    PlanItem,
    PlanOptions,
    PlanRefused,
    plan_text,
)

__all__ = [
    "ApplyResult",
    "Plan",
    "PlanItem",
    "PlanOptions",
    "PlanRefused",
    "apply_plan",
    "plan_text",
]
