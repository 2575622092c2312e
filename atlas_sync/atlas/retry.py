"""Retry policy: which failures are retried, how long to wait, and when to give up."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from urllib3.exceptions import InvalidHeader
from urllib3.util.retry import Retry

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass
class RetryPolicy:
    """Exponential backoff with full jitter, bounded in attempts and in total time.

    Only requests safe to repeat are retried (the client marks each call); everything atlas-sync
    sends to Atlas is idempotent (GETs, typedef and entity upserts matched by qualifiedName,
    deletes, purge), so in practice every call qualifies.
    """

    max_attempts: int = 5  # first try included
    backoff_base: float = 0.5  # seconds; attempt n waits up to base * 2**(n-1)
    backoff_max: float = 30.0  # cap of one wait
    max_total: float = 120.0  # give up when the next wait would pass this many seconds since the first try
    max_retry_after: float = 120.0  # cap on a server's Retry-After
    statuses: frozenset[int] = RETRY_STATUSES
    jitter: bool = True
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    @classmethod
    def none(cls) -> RetryPolicy:
        """A policy that never retries."""
        return cls(max_attempts=1)

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        ceiling = min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))
        # Full jitter spreads out clients that failed together (AWS architecture blog's recommendation).
        return self.rng.uniform(0, ceiling) if self.jitter else ceiling

    def retry_after(self, header: str | None) -> float | None:
        """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date), capped; None if absent/bad."""
        if not header:
            return None
        try:
            seconds = Retry().parse_retry_after(header)
        except InvalidHeader:
            return None
        return max(0.0, min(float(seconds), self.max_retry_after))

    def next_wait(self, attempt: int, started: float, retry_after: str | None = None) -> float | None:
        """The wait before the next attempt, or None when the policy says stop."""
        if attempt >= self.max_attempts:
            return None
        wait = self.retry_after(retry_after)
        if wait is None:
            wait = self.backoff(attempt)
        if time.monotonic() - started + wait > self.max_total:
            return None
        return wait


_CONTENTION_WORDS = ("lock", "commit", "transaction", "There was an error processing your request")


def signals_contention(status: int | None, body: str) -> bool:
    """Whether a failed write may have collided with another write in flight: no answer (timeout,
    reset), 503/504/429, or a 500 whose body speaks of locks or commits, or is Atlas's generic
    AllExceptionMapper answer (what a JanusGraph ``LockTimeoutException`` at commit becomes)."""
    if status is None or status in (429, 503, 504):
        return True
    return status == 500 and any(w.lower() in body.lower() for w in _CONTENTION_WORDS)
