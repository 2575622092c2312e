"""Fixtures for client tests: a client against a fake base URL with no real sleeping."""

from __future__ import annotations

import random

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
