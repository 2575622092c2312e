"""Test hooks: injected faults and latency.

A fault fires at the k-th matching request (``at=k``, once) or on each matching request with
probability ``p`` (seeded, so runs repeat). Kinds: ``status`` (answer with an HTTP status, request not
applied), ``reset`` (connection reset, not applied), ``timeout`` (no answer, not applied) and
``lost_response`` (applied, then the connection drops).
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

KINDS = ("status", "reset", "timeout", "lost_response")


class InjectedFault(Exception):
    """Raised by :meth:`Emulator.handle` for faults that have no HTTP response."""

    kind = "fault"


class ConnectionResetFault(InjectedFault):
    kind = "reset"


class TimeoutFault(InjectedFault):
    kind = "timeout"


class LostResponseFault(InjectedFault):
    kind = "lost_response"


@dataclass
class Fault:
    kind: str
    at: int | None = None
    probability: float | None = None
    seed: int = 0
    status: int | None = None
    retry_after: float | None = None
    path_prefix: str | None = None
    method: str | None = None
    seen: int = 0
    fired: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def matches(self, method: str, path: str) -> bool:
        if self.method and self.method.upper() != method.upper():
            return False
        return not (self.path_prefix and not path.startswith(self.path_prefix))

    def decide(self) -> bool:
        """Count one matching request and say whether the fault fires on it."""
        self.seen += 1
        if self.at is not None:
            hit = self.seen == self.at
        elif self.probability is not None:
            hit = self.rng.random() < self.probability
        else:
            hit = True
        if hit:
            self.fired += 1
        return hit


class FaultInjector:
    """The faults of one emulator; thread-safe."""

    def __init__(self) -> None:
        self.faults: list[Fault] = []
        self._lock = threading.Lock()

    def add(self, fault: Fault) -> Fault:
        if fault.kind not in KINDS:
            raise ValueError(f"unknown fault kind {fault.kind!r}; expected one of {', '.join(KINDS)}")
        if fault.kind == "status" and not fault.status:
            fault.status = 503
        if fault.at is not None and fault.at < 1:
            raise ValueError("fault 'at' counts requests from 1")
        if fault.probability is not None and not 0 <= fault.probability <= 1:
            raise ValueError("fault probability must be between 0 and 1")
        fault.rng = random.Random(fault.seed)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()

    def pick(self, method: str, path: str) -> Fault | None:
        with self._lock:
            chosen = None
            for f in self.faults:
                if f.matches(method, path) and f.decide() and chosen is None:
                    chosen = f
            return chosen


def parse_fault_spec(spec: str) -> Fault:
    """``KIND[,status=503][,at=3|,probability=0.1][,seed=1][,retry_after=2][,method=POST][,path=/api/...]``."""
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if not parts:
        raise ValueError("empty fault spec")
    values: dict[str, str] = {}
    kind = None
    for p in parts:
        if "=" in p:
            k, v = p.split("=", 1)
            values[k.strip().replace("-", "_")] = v.strip()
        elif kind is None:
            kind = p
        else:
            raise ValueError(f"bad fault spec part {p!r}")
    kind = values.pop("kind", kind)
    if kind is None or kind not in KINDS:
        raise ValueError(f"fault spec {spec!r}: kind must be one of {', '.join(KINDS)}")
    known = {"status", "at", "probability", "p", "seed", "retry_after", "method", "path", "path_prefix"}
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"fault spec {spec!r}: unknown key(s) {', '.join(sorted(unknown))}")
    try:
        return Fault(
            kind=kind,
            status=int(values["status"]) if "status" in values else None,
            at=int(values["at"]) if "at" in values else None,
            probability=float(values.get("probability", values.get("p", "")))
            if ("probability" in values or "p" in values)
            else None,
            seed=int(values.get("seed", 0)),
            retry_after=float(values["retry_after"]) if "retry_after" in values else None,
            method=values.get("method"),
            path_prefix=values.get("path_prefix", values.get("path")),
        )
    except ValueError as exc:
        raise ValueError(f"fault spec {spec!r}: {exc}") from exc


@dataclass
class Latency:
    fixed_ms: float = 0.0
    per_entity_ms: float = 0.0
    per_kib_ms: float = 0.0  # per KiB of request body (a slow link or proxy)

    def seconds(self, entity_count: int, body_bytes: int = 0) -> float:
        ms = self.fixed_ms + self.per_entity_ms * entity_count + self.per_kib_ms * body_bytes / 1024
        return max(0.0, ms / 1000.0)
