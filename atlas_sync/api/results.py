"""What a sync and a teardown return."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from atlas_sync.reconcile.apply import ApplyResult
from atlas_sync.reconcile.plan import Plan


@dataclass
class SyncResult:
    plan: Plan
    applied: ApplyResult | None
    typedef_writes: int = 0
    teardown: SyncResult | None = None  # a rebuild of one job: what its teardown did

    def to_json(self) -> dict[str, Any]:
        return {
            "domain": self.plan.domain,
            "job": self.plan.job,
            "profile": self.plan.profile,
            "plan": self.plan.counts,
            "applied": self.applied.to_json() if self.applied else None,
            "warnings": self.plan.warnings,
            # answered by the job's receipt (reconcile.receipt): nothing rendered, listed or compared
            "by_receipt": bool(getattr(self.plan, "by_receipt", False)),
        }


@dataclass
class TeardownResult:
    domain: str
    deleted: int = 0
    purged: int = 0
    typedefs_deleted: list[str] = field(default_factory=list)
    requests: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "deleted": self.deleted,
            "purged": self.purged,
            "typedefs_deleted": self.typedefs_deleted,
            "requests": self.requests,
        }
