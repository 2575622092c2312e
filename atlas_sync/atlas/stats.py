"""Request counters per call kind, kept by the client for benchmarks and ``--verbose``."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field


@dataclass
class CallStats:
    """Counters of one call kind (e.g. ``entity_write``)."""

    requests: int = 0  # HTTP requests sent, retries included
    retries: int = 0  # requests that were repeats of a failed attempt
    errors: int = 0  # calls that ended in an error after retries
    bytes_sent: int = 0  # request bodies
    bytes_received: int = 0  # response bodies
    seconds: float = 0.0  # wall time spent in requests and backoff sleeps

    def add(self, other: CallStats) -> None:
        for name in ("requests", "retries", "errors", "bytes_sent", "bytes_received", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class ClientStats:
    """Counters per call kind. ``stats["entity_write"].requests``; unknown kinds read as zero.

    Kinds: ``admin``, ``typedef_read``, ``typedef_write``, ``entity_read``, ``entity_write``,
    ``entity_delete``, ``purge``, ``search``, ``lineage``, ``metadata_read``, ``metadata_write``
    (classifications, labels, business attributes, term assignments: atlas.metadata).
    """

    kinds: dict[str, CallStats] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __getitem__(self, kind: str) -> CallStats:
        return self.kinds.get(kind, CallStats())

    def record(self, kind: str, **deltas: float) -> None:
        """Add ``deltas`` (field name -> increment) to the counters of ``kind``; thread-safe."""
        with self._lock:
            stats = self.kinds.setdefault(kind, CallStats())
            for name, value in deltas.items():
                setattr(stats, name, getattr(stats, name) + value)

    def total(self) -> CallStats:
        out = CallStats()
        with self._lock:
            for stats in self.kinds.values():
                out.add(stats)
        return out

    def reset(self) -> None:
        with self._lock:
            self.kinds.clear()

    def as_dict(self) -> dict[str, dict[str, float]]:
        with self._lock:
            out = {kind: asdict(stats) for kind, stats in sorted(self.kinds.items())}
        out["total"] = asdict(self.total())
        return out

    def format(self) -> str:
        """A small table, one line per kind plus a total, for ``--verbose``."""
        rows = self.as_dict()
        lines = [
            f"{'call kind':<14} {'requests':>8} {'retries':>7} {'errors':>6} {'sent':>10} {'received':>10} {'s':>7}"
        ]
        for kind, s in rows.items():
            lines.append(
                f"{kind:<14} {int(s['requests']):>8} {int(s['retries']):>7} {int(s['errors']):>6} "
                f"{_size(s['bytes_sent']):>10} {_size(s['bytes_received']):>10} {s['seconds']:>7.2f}"
            )
        return "\n".join(lines)


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} MB"
