"""AD — admin, authentication and error shapes (checklist rows AD-001 … AD-020)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from contract_helpers import (
    CT_DS,
    UUID_RE,
    Api,
    E,
    entity_def,
    expect_error_key_body,
    expect_ok,
    expect_plain_500,
    fresh,
    fresh_type,
    media_type_of,
    typedefs,
)

pytestmark = pytest.mark.contract

PROTECTED = "/v2/types/typedefs/headers"


def test_AD_001_status_without_auth(api: Api) -> None:
    s = api.new_session()
    assert expect_ok(api.get("/admin/status", session=s)) == {"Status": "ACTIVE"}


def test_AD_002_status_with_wrong_password(api: Api) -> None:
    s = api.new_session(auth=(api.username, "definitely-wrong-password"))
    assert expect_ok(api.get("/admin/status", session=s)) == {"Status": "ACTIVE"}


def test_AD_003_version(api: Api) -> None:
    body = expect_ok(api.get("/admin/version"))
    assert {"Version", "Revision", "Name", "Description"} <= set(body)
    assert body["Name"] == "apache-atlas"
    assert isinstance(body["Version"], str) and body["Version"]


def test_AD_004_liveness(api: Api) -> None:
    r = api.get("/admin/liveness")
    assert r.status_code == 200, r.text
    assert "Service is live" in r.text


def _is_html_401(resp) -> None:
    assert resp.status_code == 401, resp.text[:300]
    media, _ = media_type_of(resp)
    assert media == "text/html"
    assert "errorCode" not in resp.text
    assert "<html" in resp.text.lower()
    assert "WWW-Authenticate" not in resp.headers


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", PROTECTED),
        ("GET", "/admin/version"),
        ("POST", "/v2/entity/bulk"),
        ("POST", "/v2/search/basic"),
    ],
)
def test_AD_005_no_auth_is_401_html(api: Api, method: str, path: str) -> None:
    _is_html_401(api.call(method, path, session=api.new_session(), json={}))


@pytest.mark.parametrize(
    ("method", "path"), [("PUT", "/admin/purge"), ("DELETE", "/v2/types/typedef/name/DataSet")]
)
def test_AD_005_no_auth_put_or_delete_is_401_without_body(api: Api, method: str, path: str) -> None:
    """AD-005 for other methods: Jetty's error handler writes its page only for GET/POST/HEAD, so a PUT or
    DELETE gets a bare 401 (no body, no Content-Type) -- observed on a real Atlas 2.1.0."""
    r = api.call(method, path, session=api.new_session(), json=[])
    assert r.status_code == 401
    assert r.content == b""
    assert "Content-Type" not in r.headers
    assert "WWW-Authenticate" not in r.headers


def test_AD_006_wrong_password_is_401_html(api: Api) -> None:
    _is_html_401(api.get(PROTECTED, session=api.new_session(auth=(api.username, "wrong-password"))))


def test_AD_007_no_auth_with_json_accept_is_container_json(api: Api) -> None:
    r = api.get(PROTECTED, session=api.new_session(), headers={"Accept": "application/json"})
    assert r.status_code == 401
    body = r.json()
    assert {"url", "status", "message"} <= set(body)
    assert body["status"] == "401"
    assert "errorCode" not in body


def test_AD_008_no_auth_ajax_is_419(api: Api) -> None:
    r = api.get(PROTECTED, session=api.new_session(), headers={"X-Requested-With": "XMLHttpRequest"})
    assert r.status_code == 419


def test_AD_009_no_auth_user_agent_mozilla_redirects_to_login(api: Api) -> None:
    r = api.get(
        PROTECTED, session=api.new_session(), headers={"User-Agent": "Mozilla"}, allow_redirects=False
    )
    assert r.status_code == 302
    assert r.headers["Location"].endswith("/login.jsp")


def test_AD_010_browser_post_without_csrf_header_is_400(api: Api) -> None:
    body = {"typeName": CT_DS, "limit": 1}
    r = api.post("/v2/search/basic", body, headers={"User-Agent": "Mozilla/5.0 (X11)"})
    assert r.status_code == 400
    assert r.json() == {"msgDesc": "Missing header or invalid Header value for CSRF Vulnerability Protection"}
    expect_ok(api.post("/v2/search/basic", body, headers={"User-Agent": "contract-suite/1.0"}))


def test_AD_011_session_cookie_authenticates(api: Api) -> None:
    s = api.new_session(auth=True)
    r = api.get(PROTECTED, session=s)
    expect_ok(r)
    # read the Set-Cookie header itself: a transport adapter need not fill requests' cookie jar
    m = re.search(r"ATLASSESSIONID=([^;,\s]+)", r.headers.get("Set-Cookie", ""))
    assert m, dict(r.headers)
    cookie = m.group(1)
    bare = api.new_session()
    r2 = api.get(PROTECTED, session=bare, headers={"Cookie": f"ATLASSESSIONID={cookie}"})
    assert r2.status_code == 200, r2.text[:300]


ERROR_CASES = {
    "typedef-name": ("GET", "/v2/types/typedef/name/no_such_type", None),
    "typedef-post-conflict": ("POST", "/v2/types/typedefs", "conflict"),
    "entity-guid": ("GET", "/v2/entity/guid/00000000-0000-4000-8000-000000000000", None),
    "entity-unknown-type": ("POST", "/v2/entity/bulk", {"entities": [E("x", type_="no_such_type")]}),
    "entity-missing-name": ("POST", "/v2/entity/bulk", {"entities": [{"typeName": CT_DS, "attributes": {}}]}),
    "search-unknown-type": ("POST", "/v2/search/basic", {"typeName": "no_such_type"}),
    "lineage-unknown-guid": ("GET", "/v2/lineage/00000000-0000-4000-8000-000000000000", None),
    "purge-empty": ("PUT", "/admin/purge", []),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_AD_012_atlas_error_body_shape(api: Api, case: str) -> None:
    method, path, body = ERROR_CASES[case]
    if body == "conflict":
        body = typedefs(entityDefs=[entity_def(CT_DS)])
    r = api.call(method, path) if body is None else api.call(method, path, json=body)
    payload = r.json()
    assert set(payload) == {"errorCode", "errorMessage"}, payload
    m = re.fullmatch(r"ATLAS-(\d{3})-\d{2}-[0-9A-F]{3}", payload["errorCode"])
    assert m, payload["errorCode"]
    assert r.status_code == int(m.group(1))
    assert media_type_of(r)[0] == "application/json"
    assert isinstance(payload["errorMessage"], str) and payload["errorMessage"]


def test_AD_013_malformed_json_is_400_error_key(api: Api) -> None:
    r = api.post("/v2/types/typedefs", data=b"{not json", headers={"Content-Type": "application/json"})
    expect_error_key_body(r)


@pytest.mark.parametrize("case", ["entities-string", "limit-string"])
def test_AD_014_wrong_json_types_are_400_error_key(api: Api, case: str) -> None:
    if case == "entities-string":
        r = api.post("/v2/entity/bulk", {"entities": "x"})
    else:
        r = api.post("/v2/search/basic", {"typeName": CT_DS, "limit": "abc"})
    expect_error_key_body(r)


def test_AD_015_unknown_resource_is_plain_500(api: Api) -> None:
    expect_plain_500(api.get("/v2/no_such_resource"), media_type="text/plain")


def test_AD_016_unknown_resource_without_auth_is_401(api: Api) -> None:
    assert api.get("/v2/no_such_resource", session=api.new_session()).status_code == 401


def test_AD_017_body_less_response_carries_request_id(api: Api) -> None:
    name = fresh_type()
    expect_ok(api.post("/v2/types/typedefs", typedefs(entityDefs=[entity_def(name)])))
    r = api.delete(f"/v2/types/typedef/name/{name}")
    assert r.status_code == 204
    assert UUID_RE.match(r.headers.get("requestId", "")), dict(r.headers)


def test_AD_018_suite_requires_request_id_only_in_AD_017() -> None:
    """AD-018: ``requestId`` may be absent on JSON and 401 responses, so no other test may require it."""
    offenders = []
    for path in Path(__file__).parent.glob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                if node.name.startswith(("test_AD_017", "test_AD_018")):
                    continue
                if "requestId" in ast.unparse(node):
                    offenders.append(f"{path.name}::{node.name}")
    assert offenders == []


def test_AD_019_overlong_query_param_is_400_00_057(api: Api) -> None:
    r = api.get("/v2/types/typedef/name/" + "a" * 4097)
    assert r.status_code == 400, r.text[:300]
    body = r.json()
    assert body["errorCode"] == "ATLAS-400-00-057"
    assert "Length of query param name exceeds the limit" in body["errorMessage"]


def test_AD_020_json_content_type_and_epoch_ms_dates(api: Api) -> None:
    born = 1_000_000_000_000
    (g,) = api.create(E(fresh("dt"), born=born))
    r = api.get(f"/v2/entity/guid/{g}")
    media, params = media_type_of(r)
    assert media == "application/json"
    assert params.get("charset", "").lower() == "utf-8"
    e = r.json()["entity"]
    assert isinstance(e["createTime"], int) and isinstance(e["updateTime"], int)
    assert e["attributes"]["born"] == born
    td = expect_ok(api.get(f"/v2/types/typedef/name/{CT_DS}"))
    assert isinstance(td["createTime"], int) and isinstance(td["updateTime"], int)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v2/types/typedefs/headers", None),
        ("GET", "/v2/types/typedef/name/DataSet", None),
        ("GET", "/admin/version", None),
        ("POST", "/v2/search/basic", {"typeName": CT_DS, "limit": 1}),
        ("GET", "/v2/entity/bulk/uniqueAttribute/type/DataSet?attr_0:qualifiedName=nothing", None),
    ],
)
def test_AD_020_every_json_response_is_utf8_json(api: Api, method: str, path: str, body: dict | None) -> None:
    r = api.call(method, path) if body is None else api.call(method, path, json=body)
    assert r.status_code == 200, r.text[:300]
    media, params = media_type_of(r)
    assert media == "application/json"
    assert params.get("charset", "").lower() == "utf-8"
    r.json()
