"""How many requests a sync spends on the profile's types (issue 40), over HTTP against the emulator
and, when ``ATLAS_URL`` names one, a real Atlas.

A sync whose types are in place reads them in one request (``GET /v2/types/typedefs?servicetype=``:
each built-in bundle's types share a serviceType of their own); Atlas's own types they refer to
(DataSet, Process and their supertypes) are read only when something is to be registered. Bundles of unique type names (a
serviceType of their own) keep the real Atlas's shared types untouched.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from resync_support import DOC, graph

from atlas_sync.api import Publisher
from atlas_sync.atlas import AtlasClient
from atlas_sync.typedefs import IncompatibleTypedefsError, delete_typedefs, ensure_typedefs, load_bundle


def reads(client: AtlasClient) -> int:
    return client.stats["typedef_read"].requests


@pytest.fixture
def domain(client: AtlasClient) -> Iterator[str]:
    name = "types" + uuid.uuid4().hex[:10]
    yield name
    Publisher(client, domain=name).teardown(purge=True)


def test_a_sync_whose_types_are_in_place_reads_them_in_one_request(client: AtlasClient, domain: str) -> None:
    Publisher(client, domain=domain).sync(graph())
    client.stats.reset()
    again = Publisher(client, domain=domain).sync(graph())  # a new process: nothing known of the server
    assert not again.plan.has_changes
    assert reads(client) == 1
    changed = {**DOC, "datasets": [{**DOC["datasets"][0], "kind": "view"}, *DOC["datasets"][1:]]}
    client.stats.reset()
    third = Publisher(client, domain=domain).sync(graph(changed))
    assert third.plan.counts["update"] == 1
    assert reads(client) == 1


def test_a_long_running_publisher_reads_its_types_once(client: AtlasClient, domain: str) -> None:
    client.stats.reset()
    pub = Publisher(client, domain=domain)  # what openlineage serve and consume keep
    pub.sync(graph())
    first = reads(client)
    assert first <= 5  # in place: 1; on an Atlas without them: + DataSet, Process, Asset, Referenceable
    pub.sync(graph())
    assert reads(client) == first


def test_an_atlas_profile_sync_whose_types_are_in_place_reads_them_in_three_requests(
    client: AtlasClient, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    domain, ns = "typesa" + tag, "typesns" + tag
    sql = tmp_path / "etl.sql"
    sql.write_text("CREATE TABLE default.tab5 AS SELECT id, age FROM default.tab1;\n", encoding="utf-8")

    def sync() -> Any:
        pub = Publisher(client, profile="atlas", domain=domain, metadata_namespace=ns)
        return pub.sync(pub.read("sql", [str(sql)], dialect="hive"), job="etl")

    try:
        sync()
        client.stats.reset()
        again = sync()
        assert not again.plan.has_changes
        # its BI types by their serviceType; whether Atlas's root types (hive_db, ...) exist, from the
        # type headers; its metadata record by name
        assert reads(client) == 3
    finally:
        Publisher(client, profile="atlas", domain=domain).teardown(purge=True)


# ---------------------------------------------------------------------- bundles of their own


def _bundle_files(folder: Path, tag: str, *, attrs: tuple[str, ...] = ("a",)) -> Path:
    folder.mkdir(exist_ok=True)
    body = {
        "entityDefs": [
            {
                "name": f"td{tag}_dataset",
                "superTypes": ["DataSet"],
                "serviceType": f"types_{tag}",
                "attributeDefs": [{"name": a, "typeName": "string", "isOptional": True} for a in attrs],
            },
            {
                "name": f"td{tag}_process",
                "superTypes": ["Process"],
                "serviceType": f"types_{tag}",
                "attributeDefs": [],
            },
        ],
    }
    (folder / "0010-model.json").write_text(json.dumps(body), encoding="utf-8")
    return folder


@pytest.fixture
def own_bundle(client: AtlasClient, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    tag = uuid.uuid4().hex[:8]
    folder = _bundle_files(tmp_path / "v1", tag)
    try:
        yield tag, folder
    finally:
        delete_typedefs(client, load_bundle(folder), with_entities=True)


def test_a_bundle_is_registered_then_checked_in_one_request(
    client: AtlasClient, own_bundle: tuple[str, Path]
) -> None:
    _, folder = own_bundle
    bundle = load_bundle(folder)
    client.stats.reset()
    first = ensure_typedefs(client, bundle)
    assert sorted(first.created) == sorted(bundle.names)
    # its own types (one request, none there yet), then DataSet and Process, Asset, Referenceable
    assert reads(client) == 5
    client.stats.reset()
    again = ensure_typedefs(client, bundle)
    assert not again.changed and again.writes == 0
    assert reads(client) == 1


def test_a_type_someone_gave_another_service_type_is_found_and_given_back(
    client: AtlasClient, own_bundle: tuple[str, Path]
) -> None:
    tag, folder = own_bundle
    bundle = load_bundle(folder)
    ensure_typedefs(client, bundle)
    held = client.get_typedef_by_name(f"td{tag}_process")
    assert held is not None
    client.update_typedefs({"entityDefs": [{**held, "serviceType": "someone_else"}]})
    # the filtered read misses it; the create is answered 409; then it is read by name and updated
    result = ensure_typedefs(client, bundle)
    assert result.updated == [f"td{tag}_process"] and result.created == []
    back = client.get_typedef_by_name(f"td{tag}_process")
    assert back is not None and back["serviceType"] == f"types_{tag}"


def test_an_attribute_added_on_the_server_is_still_refused_with_advice(
    client: AtlasClient, own_bundle: tuple[str, Path], tmp_path: Path
) -> None:
    tag, folder = own_bundle
    ensure_typedefs(client, load_bundle(_bundle_files(tmp_path / "v2", tag, attrs=("a", "b"))))
    client.stats.reset()
    with pytest.raises(IncompatibleTypedefsError, match="removes attribute b") as exc:
        ensure_typedefs(client, load_bundle(folder))
    assert "put 'b' back in the bundle" in (exc.value.hint or "")
    assert client.stats["typedef_write"].requests == 0


def test_a_long_running_publisher_notices_its_types_deleted_behind_it(
    client: AtlasClient, tmp_path: Path
) -> None:
    # a profile of its own (the lineage profile's templates and types, renamed): its types may be deleted
    tag = uuid.uuid4().hex[:8]
    prof = _renamed_lineage_profile(tmp_path / "prof", f"tl{tag}_")
    domain = "types" + tag
    pub = Publisher(client, profile=str(prof), domain=domain)  # one for the whole test
    try:
        pub.sync(graph(), "a")
        client.stats.reset()
        # someone deletes the types (with their entities) behind it
        delete_typedefs(client, pub.catalog.bundle(), with_entities=True)
        # the publisher still believes they are there: its next sync meets an Atlas error, and the
        # retry (what serve and consume do) reads the types again and registers them
        from atlas_sync.atlas import AtlasError

        with pytest.raises(AtlasError):
            pub.sync(graph(), "a")
        client.stats.reset()
        again = pub.sync(graph(), "a")
        assert again.plan.counts["create"] > 0
        assert client.stats["typedef_write"].requests == 1
        assert reads(client) == 5  # its own (none), then DataSet, Process, Asset, Referenceable
        assert client.get_entity_by_unique(f"tl{tag}_dataset", f"raw.orders@{domain}") is not None
    finally:
        Publisher(client, profile=str(prof), domain=domain).teardown(purge=True)
        delete_typedefs(client, load_bundle(prof / "typedefs"), with_entities=True)


def _renamed_lineage_profile(folder: Path, prefix: str) -> Path:
    from atlas_sync.render.profile import load_profile

    src = load_profile("lineage")
    (folder / "typedefs").mkdir(parents=True)
    for f in sorted(Path(src.template_dir).glob("*.j2")):
        (folder / f.name).write_text(
            f.read_text(encoding="utf-8").replace("lineage_", prefix), encoding="utf-8"
        )
    for source in src.typedef_sources:
        for f in sorted(load_bundle(source).files):
            text = Path(f).read_text(encoding="utf-8").replace("lineage_", prefix)
            text = text.replace('"atlas_sync"', f'"{prefix}types"')
            (folder / "typedefs" / Path(f).name).write_text(text, encoding="utf-8")
    toml = (Path(src.template_dir) / "profile.toml").read_text(encoding="utf-8")
    toml = toml.replace('name = "lineage"', f'name = "{prefix}profile"')
    toml = toml.replace('typedefs = ["lineage"]', 'typedefs = ["typedefs"]')
    (folder / "profile.toml").write_text(toml, encoding="utf-8")
    return folder
