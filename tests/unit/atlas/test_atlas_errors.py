"""Error mapping: HTTP status + Atlas error body -> the AtlasError subclass, with advice."""

from __future__ import annotations

import pytest
import responses
from atlas_test_support import API

from atlas_sync.atlas import (
    AtlasClient,
    AtlasError,
    AuthError,
    BadRequestError,
    ConflictError,
    NotFoundError,
    ServerError,
)
from atlas_sync.errors import AtlasSyncError


@pytest.mark.parametrize(
    ("status", "cls"),
    [(400, BadRequestError), (401, AuthError), (403, AuthError), (404, NotFoundError), (409, ConflictError)],
)
@responses.activate
def test_status_maps_to_error_class(client: AtlasClient, status: int, cls: type) -> None:
    responses.post(
        API + "/v2/types/typedefs",
        status=status,
        json={"errorCode": f"ATLAS-{status}-00-001", "errorMessage": "Given type t already exists"},
    )
    with pytest.raises(cls) as info:
        client.create_typedefs({"entityDefs": [{"name": "t"}]})
    err = info.value
    assert isinstance(err, AtlasError) and isinstance(err, AtlasSyncError)
    assert err.status == status
    assert err.error_code == f"ATLAS-{status}-00-001"
    assert err.errorCode == err.error_code
    assert err.error_message == "Given type t already exists"
    assert err.method == "POST"
    assert err.path == "/api/atlas/v2/types/typedefs"


@responses.activate
def test_error_message_names_request_code_and_atlas_message(client: AtlasClient) -> None:
    responses.post(
        API + "/v2/entity/bulk",
        status=404,
        json={"errorCode": "ATLAS-404-00-007", "errorMessage": "mandatory attribute value missing"},
    )
    with pytest.raises(NotFoundError) as info:
        client.upsert_entities([{"typeName": "t", "guid": "-1", "attributes": {}}])
    text = str(info.value)
    assert "POST /api/atlas/v2/entity/bulk" in text
    assert "404 ATLAS-404-00-007" in text
    assert "mandatory attribute value missing" in text
    assert "mandatory attribute" in (info.value.hint or "")


@responses.activate
def test_error_path_never_contains_the_query_string(client: AtlasClient) -> None:
    responses.get(
        API + "/v2/entity/uniqueAttribute/type/t", status=400, json={"errorCode": "ATLAS-400-00-013"}
    )
    with pytest.raises(BadRequestError) as info:
        client.get_entity_by_unique("t", "secret-name@team")
    assert info.value.path == "/api/atlas/v2/entity/uniqueAttribute/type/t"
    assert "secret-name" not in str(info.value)


@responses.activate
def test_401_html_page_gives_auth_error_naming_user_and_url(client: AtlasClient) -> None:
    responses.get(
        API + "/admin/version",
        status=401,
        body="<html><body><h2>HTTP ERROR 401</h2></body></html>",
        content_type="text/html",
    )
    with pytest.raises(AuthError) as info:
        client.version()
    err = info.value
    assert err.error_code is None
    assert "<html>" not in str(err)
    assert "'alice'" in (err.hint or "") and "http://atlas.test:21000" in (err.hint or "")
    assert "ATLAS_PASSWORD" in (err.hint or "")
    assert err.exit_code != 0


@responses.activate
def test_500_plain_text_body_is_kept_in_the_message(client: AtlasClient) -> None:
    text = "There was an error processing your request. It has been logged (ID 0123456789abcdef)."
    responses.get(API + "/v2/types/typedefs/headers", status=500, body=text)
    with pytest.raises(ServerError) as info:
        client.get_typedef_headers()
    assert "logged (ID 0123456789abcdef)" in str(info.value)
    assert info.value.error_code is None


@responses.activate
def test_jackson_error_body_is_used_as_message(client: AtlasClient) -> None:
    responses.post(API + "/v2/search/basic", status=400, json={"error": "Cannot deserialize value"})
    with pytest.raises(BadRequestError) as info:
        list(client.search_basic("t"))
    assert info.value.error_message == "Cannot deserialize value"


@responses.activate
def test_conflict_on_type_with_references_hints_at_purge(client: AtlasClient) -> None:
    responses.delete(
        API + "/v2/types/typedef/name/t",
        status=409,
        json={"errorCode": "ATLAS-409-00-002", "errorMessage": "Given type t has references"},
    )
    with pytest.raises(ConflictError) as info:
        client.delete_typedef_by_name("t")
    assert "purge" in (info.value.hint or "")


@responses.activate
def test_reads_of_missing_things_return_none(client: AtlasClient) -> None:
    not_found = {"errorCode": "ATLAS-404-00-005", "errorMessage": "not found"}
    responses.get(API + "/v2/entity/guid/nope", status=404, json=not_found)
    responses.get(API + "/v2/entity/uniqueAttribute/type/t", status=404, json=not_found)
    responses.get(API + "/v2/types/typedef/name/t", status=404, json=not_found)
    assert client.get_entity("nope") is None
    assert client.get_entity_by_unique("t", "x@d") is None
    assert client.get_typedef_by_name("t") is None


def test_unreachable_server_gives_transport_error_with_advice(client: AtlasClient) -> None:
    from atlas_sync.atlas import TransportError

    client = AtlasClient("http://127.0.0.1:9", retry=client.retry)
    with pytest.raises(TransportError) as info:
        client.status()
    assert "http://127.0.0.1:9" in str(info.value)
    assert "ATLAS_URL" in (info.value.hint or "")


def test_tls_failure_hints_at_ca_bundle(client: AtlasClient) -> None:
    import requests

    from atlas_sync.atlas import TransportError

    with responses.RequestsMock() as mock:
        mock.get(API + "/admin/status", body=requests.exceptions.SSLError("certificate verify failed"))
        with pytest.raises(TransportError) as info:
            client.status()
    assert "certificate verify failed" in str(info.value)
    assert "--ca-bundle" in (info.value.hint or "")


@responses.activate
def test_a_404_without_atlas_error_json_is_no_atlas_not_absent(client: AtlasClient) -> None:
    from atlas_sync.atlas import NotAtlasError

    responses.get(
        API + "/v2/entity/guid/g", status=404, body="<html>Not Found</html>", content_type="text/html"
    )
    responses.get(API + "/v2/types/typedef/name/t", status=404, body="")
    responses.get(API + "/v2/entity/uniqueAttribute/type/t", status=404, json={"error": "nope"})
    for read in (
        lambda: client.get_entity("g"),
        lambda: client.get_typedef_by_name("t"),
        lambda: client.get_entity_by_unique("t", "x@d"),
    ):
        with pytest.raises(NotAtlasError) as info:
            read()
        assert not isinstance(info.value, NotFoundError)
        assert str(info.value).startswith(f"no Atlas at {client.base_url} (GET /api/atlas/")
        assert "ATLAS_URL" in (info.value.hint or "")


@responses.activate
def test_an_html_page_where_atlas_answers_json_is_no_atlas(client: AtlasClient) -> None:
    from atlas_sync.atlas import NotAtlasError

    responses.get(API + "/admin/status", status=200, body="<html>login</html>", content_type="text/html")
    with pytest.raises(NotAtlasError) as info:
        client.status()
    assert "HTTP 200 text/html" in str(info.value)
