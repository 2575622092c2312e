"""Constants and helpers shared by the client tests (imported by name: tests/ has no packages)."""

from __future__ import annotations

BASE = "http://atlas.test:21000"
API = BASE + "/api/atlas"


class SleepRecorder:
    """Stands in for time.sleep: records the waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
