"""Reconcile: desired vs actual -> Plan; apply a Plan in batches."""

from atlas_sync.reconcile.apply import ApplyResult, apply_plan
from atlas_sync.reconcile.plan import (
    Plan,
    PlanItem,
    PlanOptions,
    PlanRefused,
    compute_plan,
    fetch_actual,
    plan_text,
)

__all__ = [
    "ApplyResult",
    "Plan",
    "PlanItem",
    "PlanOptions",
    "PlanRefused",
    "apply_plan",
    "compute_plan",
    "fetch_actual",
    "plan_text",
]
