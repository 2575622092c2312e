"""Chunked bulk reads/deletes/purge, search paging, lineage and typedef calls: the requests sent."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import responses
from atlas_test_support import API

from atlas_sync.atlas import AtlasClient


def query(call: Any) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(call.request.url).query)


def guid_list(n: int) -> list[str]:
    return [f"{i:08d}-0000-4000-8000-000000000000" for i in range(n)]


def test_get_entities_chunks_guids_below_the_url_limit(client: AtlasClient) -> None:
    guids = guid_list(700)
    with responses.RequestsMock() as mock:

        def answer(request: Any) -> tuple[int, dict[str, str], str]:
            asked = [v for k, v in parse_qsl(urlsplit(request.url).query) if k == "guid"]
            return 200, {}, json.dumps({"entities": [{"guid": g} for g in asked], "referredEntities": {}})

        mock.add_callback(responses.GET, API + "/v2/entity/bulk", callback=answer)
        entities = client.get_entities(guids + guids[:5])  # duplicates asked once
        calls = list(mock.calls)
    assert [e["guid"] for e in entities] == guids
    sizes = [sum(1 for k, _ in query(c) if k == "guid") for c in calls]
    assert sizes == [300, 300, 100]
    for call in calls:
        # Jetty's request buffer is 16192 bytes for the whole request head.
        assert len(call.request.url) < 14_000
        assert ("minExtInfo", "false") in query(call) and ("ignoreRelationships", "false") in query(call)


def test_get_entities_skips_unknown_guids_by_bisecting(client: AtlasClient) -> None:
    known = set(guid_list(40)[::3])
    asked_sizes: list[int] = []

    def answer(request: Any) -> tuple[int, dict[str, str], str]:
        asked = [v for k, v in parse_qsl(urlsplit(request.url).query) if k == "guid"]
        asked_sizes.append(len(asked))
        if any(g not in known for g in asked):  # like Atlas: one unknown guid fails the whole GET
            return 404, {}, json.dumps({"errorCode": "ATLAS-404-00-005"})
        return 200, {}, json.dumps({"entities": [{"guid": g} for g in asked]})

    with responses.RequestsMock() as mock:
        mock.add_callback(responses.GET, API + "/v2/entity/bulk", callback=answer)
        got = client.get_entities(guid_list(40))
    assert [e["guid"] for e in got] == [g for g in guid_list(40) if g in known]
    assert len(asked_sizes) < 2 * 40  # bisection, not worse than one GET per guid plus the splits


def test_get_entities_by_unique_chunks_by_bytes_and_renumbers_attr_keys(client: AtlasClient) -> None:
    names = [f"db.table_{i:04d}.{'c' * 150}@demo" for i in range(250)]
    url = API + "/v2/entity/bulk/uniqueAttribute/type/demo_dataset"
    with responses.RequestsMock() as mock:

        def answer(request: Any) -> tuple[int, dict[str, str], str]:
            pairs = [(k, v) for k, v in parse_qsl(urlsplit(request.url).query) if k.startswith("attr_")]
            # Keys run attr_0:..attr_N: in each request.
            assert [k for k, _ in pairs] == [f"attr_{i}:qualifiedName" for i in range(len(pairs))]
            found = [
                {"attributes": {"qualifiedName": v}} for _, v in pairs if not v.startswith("db.table_0000")
            ]
            return 200, {}, json.dumps({"entities": found})

        mock.add_callback(responses.GET, url, callback=answer)
        out = client.get_entities_by_unique("demo_dataset", names)
        calls = list(mock.calls)
    assert len(calls) > 1  # ~190 encoded bytes per name: 250 of them exceed one request
    assert all(len(c.request.url) < 14_000 for c in calls)
    assert [e["attributes"]["qualifiedName"] for e in out] == names[1:]  # the missing one is skipped


def test_get_entity_by_unique_sends_attr_param(client: AtlasClient) -> None:
    with responses.RequestsMock() as mock:
        mock.get(API + "/v2/entity/uniqueAttribute/type/demo%20type", json={"entity": {"guid": "g"}})
        assert client.get_entity_by_unique("demo type", "a b@d", ignore_relationships=True) == {"guid": "g"}
        assert ("attr:qualifiedName", "a b@d") in query(mock.calls[0])
        assert ("ignoreRelationships", "true") in query(mock.calls[0])


def test_delete_entities_is_chunked_and_merged(client: AtlasClient) -> None:
    guids = guid_list(650)
    with responses.RequestsMock() as mock:

        def answer(request: Any) -> tuple[int, dict[str, str], str]:
            asked = [v for k, v in parse_qsl(urlsplit(request.url).query) if k == "guid"]
            return 200, {}, json.dumps({"mutatedEntities": {"DELETE": [{"guid": g} for g in asked]}})

        mock.add_callback(responses.DELETE, API + "/v2/entity/bulk", callback=answer)
        result = client.delete_entities(guids)
    assert result.requests == 3
    assert result.deleted_guids == guids


def test_delete_of_nothing_sends_nothing(client: AtlasClient) -> None:
    with responses.RequestsMock():
        assert client.delete_entities([]).requests == 0
        assert client.purge_entities([]).requests == 0


def test_purge_is_sent_in_chunks_of_at_most_1000(client: AtlasClient) -> None:
    guids = guid_list(2500)
    with responses.RequestsMock() as mock:

        def answer(request: Any) -> tuple[int, dict[str, str], str]:
            asked = json.loads(request.body)
            return 200, {}, json.dumps({"mutatedEntities": {"PURGE": [{"guid": g} for g in asked]}})

        mock.add_callback(responses.PUT, API + "/admin/purge", callback=answer)
        result = client.purge_entities(guids)
        bodies = [json.loads(c.request.body) for c in mock.calls]
    assert [len(b) for b in bodies] == [1000, 1000, 500]
    assert result.purged_guids == guids


class SearchServer:
    """Answers basic search from a list of n headers, honouring limit/offset."""

    def __init__(self, n: int) -> None:
        self.items = [{"guid": f"g{i}"} for i in range(n)]
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> tuple[int, dict[str, str], str]:
        body = json.loads(request.body)
        self.bodies.append(body)
        page = self.items[body["offset"] : body["offset"] + body["limit"]]
        out: dict[str, Any] = {"queryType": "BASIC", "approximateCount": len(self.items)}
        if page:
            out["entities"] = page
        return 200, {}, json.dumps(out)


@pytest.mark.parametrize(("n", "pages"), [(2500, 3), (2000, 3), (0, 1), (999, 1)])
def test_search_pages_with_offset_until_a_short_page(client: AtlasClient, n: int, pages: int) -> None:
    server = SearchServer(n)
    with responses.RequestsMock() as mock:
        mock.add_callback(responses.POST, API + "/v2/search/basic", callback=server)
        out = list(client.search_basic("demo_dataset", page_size=1000))
    assert [e["guid"] for e in out] == [f"g{i}" for i in range(n)]
    assert [b["offset"] for b in server.bodies] == [1000 * i for i in range(pages)]


def test_search_follows_a_server_that_shrinks_the_page(client: AtlasClient) -> None:
    # A server configured with a lower maximum answers 100 per page whatever we ask.
    items = [{"guid": f"g{i}"} for i in range(250)]

    def answer(request: Any) -> tuple[int, dict[str, str], str]:
        body = json.loads(request.body)
        page = items[body["offset"] : body["offset"] + 100]
        return 200, {}, json.dumps({"entities": page, "searchParameters": {**body, "limit": 100}})

    with responses.RequestsMock() as mock:
        mock.add_callback(responses.POST, API + "/v2/search/basic", callback=answer)
        out = list(client.search_basic("t", page_size=1000))
    assert [e["guid"] for e in out] == [f"g{i}" for i in range(250)]


def test_search_stops_when_the_server_ignores_offset(client: AtlasClient) -> None:
    with responses.RequestsMock() as mock:
        mock.post(API + "/v2/search/basic", json={"entities": [{"guid": "a"}, {"guid": "b"}]})
        out = list(client.search_basic("t", page_size=2))
        assert len(mock.calls) == 2
    assert [e["guid"] for e in out] == ["a", "b"]


def test_search_excludes_deleted_by_default_and_caps_limit(client: AtlasClient) -> None:
    server = SearchServer(3)
    flt = {"attributeName": "qualifiedName", "operator": "endsWith", "attributeValue": "@demo"}
    with responses.RequestsMock() as mock:
        mock.add_callback(responses.POST, API + "/v2/search/basic", callback=server)
        list(client.search_basic("demo_dataset", entity_filters=flt, page_size=50_000, attributes=["owner"]))
        list(client.search_basic("demo_dataset", exclude_deleted=False))
    first, second = server.bodies
    assert first["excludeDeletedEntities"] is True
    assert first["limit"] == 10_000  # Atlas turns larger limits into 100
    assert first["entityFilters"] == flt
    assert first["attributes"] == ["owner"]
    assert first["typeName"] == "demo_dataset" and first["includeSubTypes"] is True
    assert second["excludeDeletedEntities"] is False


def test_lineage_calls(client: AtlasClient) -> None:
    with responses.RequestsMock() as mock:
        mock.get(API + "/v2/lineage/g1", json={"baseEntityGuid": "g1", "relations": []})
        mock.get(API + "/v2/lineage/uniqueAttribute/type/demo_dataset", json={"baseEntityGuid": "g2"})
        assert client.lineage("g1", direction="input", depth=0)["baseEntityGuid"] == "g1"
        assert client.lineage_by_unique("demo_dataset", "a@d")["baseEntityGuid"] == "g2"
        first, second = (query(c) for c in mock.calls)
    assert first == [("direction", "INPUT"), ("depth", "0")]  # Atlas's enum is upper case
    assert ("attr:qualifiedName", "a@d") in second and ("direction", "BOTH") in second


def test_typedef_calls_use_atlas_paths_and_filters(client: AtlasClient) -> None:
    with responses.RequestsMock() as mock:
        mock.get(API + "/v2/types/typedefs", json={"entityDefs": [{"name": "DataSet"}]})
        mock.get(API + "/v2/types/typedefs/headers", json=[{"name": "DataSet", "category": "ENTITY"}])
        mock.put(API + "/v2/types/typedefs", json={"entityDefs": []})
        mock.delete(API + "/v2/types/typedefs", status=204)
        mock.delete(API + "/v2/types/typedef/name/a%2Fb", status=204)
        assert client.get_typedefs(type_="ENTITY", name="DataSet")["entityDefs"][0]["name"] == "DataSet"
        assert client.get_typedef_headers()[0]["category"] == "ENTITY"
        assert client.update_typedefs({"entityDefs": []}) == {"entityDefs": []}
        assert client.delete_typedefs({"entityDefs": [{"name": "x"}]}) is None
        assert client.delete_typedef_by_name("a/b") is None
        calls = list(mock.calls)
    assert query(calls[0]) == [("type", "ENTITY"), ("name", "DataSet")]
    assert json.loads(calls[3].request.body) == {"entityDefs": [{"name": "x"}]}
    assert calls[3].request.headers["Content-Type"] == "application/json"


def test_counters_are_kept_per_call_kind(client: AtlasClient) -> None:
    with responses.RequestsMock() as mock:
        mock.get(API + "/admin/status", json={"Status": "ACTIVE"})
        mock.post(API + "/v2/entity/bulk", json={"guidAssignments": {}})
        client.status()
        client.upsert_entities([{"typeName": "t", "guid": "-1", "attributes": {"qualifiedName": "q"}}])
        sent = len(mock.calls[1].request.body)
    assert client.stats["admin"].requests == 1
    assert client.stats["admin"].bytes_received == len(b'{"Status": "ACTIVE"}')
    assert client.stats["entity_write"].bytes_sent == sent
    assert client.stats.total().requests == 2
    assert re.search(r"entity_write\s+1\s+0\s+0", client.stats.format())
    client.stats.reset()
    assert client.stats.total().requests == 0


def test_server_time_follows_the_servers_date_header_not_this_clock(client: AtlasClient) -> None:
    import time
    from email.utils import formatdate

    ahead = time.time() + 3600  # a server clock an hour ahead of this machine's
    with responses.RequestsMock() as rsps:
        rsps.add(
            responses.GET,
            re.compile(API + "/v2/types/typedef/name/.*"),
            json={"name": "DataSet"},
            headers={"Date": formatdate(ahead, usegmt=True)},
        )
        before = client.server_time_ms()
        client.get_typedef_by_name("DataSet")
    assert abs(before - time.time() * 1000) < 5_000  # no answer yet: this machine's clock
    assert abs(client.server_time_ms() - ahead * 1000) < 5_000
