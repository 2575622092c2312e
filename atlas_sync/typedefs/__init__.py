"""Typedef bundles: load and validate, resolve references, order, diff, and bootstrap/teardown.

Public API (used by the sync core and the CLI)::

    bundle = load_bundle("lineage")                 # or folders/files; several may be combined
    plan = plan_typedefs(client, bundle)            # one read per serviceType when in place; per-type create/update/...
    print(plan.render())
    result = apply_typedefs(client, plan)           # POST missing, PUT changed, nothing otherwise
    ensure_typedefs(client, bundle)                 # plan + apply; idempotent
    delete_typedefs(client, bundle, with_entities=False)
"""

from atlas_sync.typedefs.bundle import Bundle, BundleError, ServerTypes, TypeEntry, load_bundle
from atlas_sync.typedefs.diff import Incompatibility, TypeChange, TypedefPlan, plan_against
from atlas_sync.typedefs.engine import (
    ApplyResult,
    DeletePlan,
    DeleteResult,
    IncompatibleTypedefsError,
    TypedefsInUseError,
    apply_typedefs,
    delete_typedefs,
    ensure_typedefs,
    plan_delete,
    plan_typedefs,
)

__all__ = [
    "ApplyResult",
    "Bundle",
    "BundleError",
    "DeletePlan",
    "DeleteResult",
    "Incompatibility",
    "IncompatibleTypedefsError",
    "ServerTypes",
    "TypeChange",
    "TypeEntry",
    "TypedefPlan",
    "TypedefsInUseError",
    "apply_typedefs",
    "delete_typedefs",
    "ensure_typedefs",
    "load_bundle",
    "plan_against",
    "plan_delete",
    "plan_typedefs",
]
