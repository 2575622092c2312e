"""Fixtures for client tests: a client against a fake base URL with no real sleeping."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator

import pytest
from atlas_test_support import BASE, SleepRecorder

from atlas_sync.atlas import AtlasClient, RetryPolicy


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def client(sleeps: SleepRecorder) -> AtlasClient:
    policy = RetryPolicy(max_attempts=4, backoff_base=0.1, sleep=sleeps, rng=random.Random(1))
    return AtlasClient(BASE, auth=("alice", "s3cr3t-pw"), retry=policy)


@pytest.fixture(autouse=True)
def _atlas_sync_logger_unset() -> Iterator[None]:
    """The client's logs reach caplog whatever level a CLI run earlier in this process set on the
    ``atlas_sync`` logger (the CLI sets it from -v/-q; in-process CLI tests leave it at WARNING)."""
    logger = logging.getLogger("atlas_sync")
    level = logger.level
    logger.setLevel(logging.NOTSET)
    yield
    logger.setLevel(level)
