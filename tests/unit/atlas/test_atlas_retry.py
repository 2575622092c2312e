"""Retries: which failures are repeated, how long the client waits, when it gives up."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
import requests
import responses
from atlas_test_support import API, BASE

from atlas_sync.atlas import AtlasClient, BadRequestError, RetryPolicy, ServerError, TransportError

STATUS = API + "/admin/status"


@responses.activate
def test_get_is_retried_on_503_until_it_succeeds(client: AtlasClient, sleeps) -> None:
    responses.get(STATUS, status=503, body="busy")
    responses.get(STATUS, status=503, body="busy")
    responses.get(STATUS, json={"Status": "ACTIVE"})
    assert client.status() == "ACTIVE"
    assert len(responses.calls) == 3
    assert len(sleeps.waits) == 2
    assert client.stats["admin"].requests == 3
    assert client.stats["admin"].retries == 2
    assert client.stats["admin"].errors == 0


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
@responses.activate
def test_each_retryable_status_is_retried(client: AtlasClient, status: int) -> None:
    responses.get(STATUS, status=status)
    responses.get(STATUS, json={"Status": "ACTIVE"})
    assert client.status() == "ACTIVE"
    assert len(responses.calls) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409])
@responses.activate
def test_client_errors_are_not_retried(client: AtlasClient, status: int) -> None:
    responses.get(API + "/admin/version", status=status, json={"errorCode": "X", "errorMessage": "no"})
    with pytest.raises(Exception):  # noqa: B017 - the class is checked in test_atlas_errors
        client.version()
    assert len(responses.calls) == 1


@responses.activate
def test_429_waits_as_long_as_retry_after_says(client: AtlasClient, sleeps) -> None:
    responses.get(STATUS, status=429, headers={"Retry-After": "7"})
    responses.get(STATUS, json={"Status": "ACTIVE"})
    client.status()
    assert sleeps.waits == [7.0]


@responses.activate
def test_retry_after_as_http_date_is_honoured(client: AtlasClient, sleeps) -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    responses.get(STATUS, status=503, headers={"Retry-After": format_datetime(when, usegmt=True)})
    responses.get(STATUS, json={"Status": "ACTIVE"})
    client.status()
    assert 25 <= sleeps.waits[0] <= 31


@responses.activate
def test_gives_up_after_max_attempts_with_server_error(client: AtlasClient) -> None:
    responses.get(STATUS, status=503, body="Service Unavailable")
    with pytest.raises(ServerError) as info:
        client.status()
    assert len(responses.calls) == 4  # max_attempts of the fixture
    assert info.value.status == 503
    assert "4 times" in (info.value.hint or "")
    assert client.stats["admin"].errors == 1


@responses.activate
def test_total_retry_time_is_bounded(sleeps) -> None:
    policy = RetryPolicy(max_attempts=10, max_total=5, sleep=sleeps)
    client = AtlasClient(BASE, retry=policy)
    responses.get(STATUS, status=503, headers={"Retry-After": "60"})
    with pytest.raises(ServerError):
        client.status()
    # The server asked for 60 s, more than the 5 s budget: no retry at all.
    assert len(responses.calls) == 1
    assert sleeps.waits == []


def test_backoff_doubles_up_to_the_cap_without_jitter() -> None:
    policy = RetryPolicy(backoff_base=1, backoff_max=5, jitter=False)
    assert [policy.backoff(n) for n in range(1, 6)] == [1, 2, 4, 5, 5]


def test_backoff_with_jitter_stays_under_the_exponential_ceiling() -> None:
    policy = RetryPolicy(backoff_base=1, backoff_max=100, rng=random.Random(7))
    for attempt in range(1, 8):
        waits = [policy.backoff(attempt) for _ in range(50)]
        assert all(0 <= w <= 2 ** (attempt - 1) for w in waits)
        assert len(set(waits)) > 1  # jittered, not constant


@responses.activate
def test_connection_errors_are_retried(client: AtlasClient) -> None:
    responses.get(STATUS, body=requests.exceptions.ConnectionError("Connection reset by peer"))
    responses.get(STATUS, json={"Status": "ACTIVE"})
    assert client.status() == "ACTIVE"
    assert client.stats["admin"].retries == 1


@responses.activate
def test_read_timeouts_are_retried_then_reported_as_transport_error(client: AtlasClient) -> None:
    responses.get(STATUS, body=requests.exceptions.ReadTimeout("read timed out"))
    with pytest.raises(TransportError) as info:
        client.status()
    assert len(responses.calls) == 4
    err = info.value
    assert err.status is None
    assert "no answer within 60 s" in str(err)
    assert "after 4 attempts" in str(err)
    assert "--timeout" in (err.hint or "")


@responses.activate
def test_upsert_is_retried_after_a_lost_response(client: AtlasClient) -> None:
    # A reset after the server applied the batch: the repeat is matched by qualifiedName (idempotent).
    url = API + "/v2/entity/bulk"
    responses.post(url, body=requests.exceptions.ConnectionError("Connection aborted"))
    responses.post(url, json={"guidAssignments": {"-1": "g1"}})
    entity = {"typeName": "DataSet", "guid": "-1", "attributes": {"qualifiedName": "a@d", "name": "a"}}
    result = client.upsert_entities([entity])
    assert result.guid_assignments == {"-1": "g1"}
    assert len(responses.calls) == 2


@responses.activate
def test_create_typedefs_recovers_when_the_first_answer_was_lost(client: AtlasClient) -> None:
    # 503 after the server applied the POST; the retry then meets 409 "already exists".
    url = API + "/v2/types/typedefs"
    responses.post(url, status=503)
    responses.post(url, status=409, json={"errorCode": "ATLAS-409-00-001", "errorMessage": "exists"})
    stored = {"name": "t1", "category": "ENTITY", "guid": "tg", "version": 1}
    responses.get(API + "/v2/types/typedef/name/t1", json=stored)
    out = client.create_typedefs({"entityDefs": [{"name": "t1"}]})
    assert out["entityDefs"] == [stored]


@responses.activate
def test_create_typedefs_conflict_without_earlier_attempt_is_raised(client: AtlasClient) -> None:
    from atlas_sync.atlas import ConflictError

    responses.post(API + "/v2/types/typedefs", status=409, json={"errorCode": "ATLAS-409-00-001"})
    with pytest.raises(ConflictError):
        client.create_typedefs({"entityDefs": [{"name": "t1"}]})


@responses.activate
def test_no_retry_policy_sends_once(sleeps) -> None:
    client = AtlasClient(BASE, retry=RetryPolicy.none())
    responses.get(STATUS, status=503)
    with pytest.raises(ServerError):
        client.status()
    assert len(responses.calls) == 1


@responses.activate
def test_timeouts_are_passed_to_every_request() -> None:
    seen = []

    def callback(request):
        seen.append(request.req_kwargs["timeout"])
        return (200, {}, '{"Status": "ACTIVE"}')

    responses.add_callback(responses.GET, STATUS, callback=callback)
    AtlasClient(BASE, timeout=(3, 42)).status()
    assert seen == [(3, 42)]


@responses.activate
def test_bad_request_is_raised_at_once(client: AtlasClient) -> None:
    responses.post(API + "/v2/search/basic", status=400, json={"errorCode": "ATLAS-400-00-029"})
    with pytest.raises(BadRequestError):
        list(client.search_basic("t"))
    assert len(responses.calls) == 1
