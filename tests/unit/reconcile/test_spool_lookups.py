"""The spool's lookups by key (guids and names), many keys at once, as one key at a time gave them."""

from atlas_sync.reconcile.spool import UNREAD, Spool
from atlas_sync.render.renderer import DesiredEntity, DesiredState


def _spool_with(n: int) -> tuple[Spool, list[tuple[str, str]]]:
    state = DesiredState(domain="d", job="j")
    keys = []
    for i in range(n):
        for t in ("lineage_dataset", "lineage_column"):
            name: object = f"n{i}" if i % 7 else i  # (a name that is not a string: as stored)
            e = DesiredEntity(t, f"{t}.{i}@d", {"qualifiedName": f"{t}.{i}@d", "name": name})
            state.entities[e.key] = e
            keys.append(e.key)
    spool = Spool(memory=True)
    spool.add_desired(state)
    return spool, keys


def test_guids_are_the_listed_ones_else_the_ones_found_outside_the_domain_never_unread_ones():
    spool, keys = _spool_with(700)  # more than one query's worth of names per type
    listed, outside = keys[:900], keys[600:1300]
    spool.add_actual(
        (t, qn, UNREAD if i % 100 == 0 else f"a-{qn}", "j", None) for i, (t, qn) in enumerate(listed)
    )
    spool.add_foreign({k: f"f-{k[1]}" for k in outside})
    unknown = ("lineage_dataset", "nowhere@d")
    got = spool.guids_of([*keys, unknown, keys[0]])
    expected = {}
    for i, (t, qn) in enumerate(listed):
        if i % 100:
            expected[(t, qn)] = f"a-{qn}"
    for k in keys[900:1300]:
        expected[k] = f"f-{k[1]}"
    assert got == expected
    assert spool.guids_of([]) == {}


def test_names_are_those_rendered_for_the_desired_keys_given():
    spool, keys = _spool_with(600)
    got = spool.names_of([*keys, ("lineage_process", "not-desired@d"), keys[3]])
    expected = [f"n{i}" if i % 7 else i for i in range(600) for _ in range(2)]
    assert sorted(got, key=str) == sorted(expected, key=str)


def test_a_name_is_what_the_spooled_body_holds_whatever_its_characters_or_type():
    names: list[object] = ['q"uote', "back\\slash", "ünï😀", "tab\there", "nul\x00", "", 7, 1.5, None]
    state = DesiredState(domain="d", job="j")
    for i, name in enumerate([*names, {"a": 1}]):
        attrs = {"qualifiedName": f"x{i}@d", "name": name}
        state.entities[("t", f"x{i}@d")] = DesiredEntity("t", f"x{i}@d", attrs)
    state.entities[("t", "unnamed@d")] = DesiredEntity("t", "unnamed@d", {"qualifiedName": "unnamed@d"})
    spool = Spool(memory=True)
    spool.add_desired(state)
    # what SQLite reads out of each stored body: the names before they had a column of their own
    by_body = [
        row[0]
        for row in spool.db.execute("SELECT json_extract(body, '$.attributes.name') FROM desired ORDER BY qn")
    ]
    got = spool.names_of(list(state.entities))
    assert sorted(got, key=repr) == sorted(by_body, key=repr)
    assert {'q"uote', "back\\slash", "ünï😀", "tab\there", "", 7, 1.5, None} <= set(map(_hashable, got))


def _hashable(v: object) -> object:
    return v if not isinstance(v, dict | list) else repr(v)
