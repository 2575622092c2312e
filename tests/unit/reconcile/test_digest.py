"""The digest stored with each entity: equal exactly when a full compare would find nothing to write."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from atlas_sync.reconcile.actual import ActualEntity
from atlas_sync.reconcile.digest import completed, entity_digest, for_job, for_other_job, merged
from atlas_sync.reconcile.plan import diff_entity
from atlas_sync.render.renderer import DesiredEntity

ATTR = "atlasSyncDigest"


def process(**attrs: object) -> DesiredEntity:
    return DesiredEntity(
        type_name="lineage_process",
        qualified_name="job:p@d",
        attributes={"qualifiedName": "job:p@d", "name": "p", "kind": "sql", **attrs},
        refs={"inputs": [("lineage_dataset", "a@d"), ("lineage_dataset", "b@d")], "outputs": []},
    )


def test_the_digest_ignores_what_a_full_compare_ignores() -> None:
    base = entity_digest(process(), ATTR)
    # relationship arrays are sets; 2.0 and 2 are one value in Atlas
    swapped = dataclasses.replace(
        process(), refs={"inputs": [("lineage_dataset", "b@d"), ("lineage_dataset", "a@d")], "outputs": []}
    )
    assert entity_digest(swapped, ATTR) == base
    assert entity_digest(process(size=2.0), ATTR) == entity_digest(process(size=2), ATTR)
    # the digest attribute itself (an old digest carried along) is not part of it
    assert entity_digest(process(**{ATTR: "1:old"}), ATTR) == base


def test_the_digest_changes_with_any_attribute_or_reference() -> None:
    base = entity_digest(process(), ATTR)
    assert entity_digest(process(kind="spark"), ATTR) != base
    assert entity_digest(process(extra=None), ATTR) != base
    fewer = dataclasses.replace(process(), refs={"inputs": [("lineage_dataset", "a@d")], "outputs": []})
    assert entity_digest(fewer, ATTR) != base
    renamed = dataclasses.replace(process(), qualified_name="job:q@d")
    assert entity_digest(renamed, ATTR) != base


def with_digest(e: DesiredEntity) -> DesiredEntity:
    return dataclasses.replace(e, attributes={**e.attributes, ATTR: entity_digest(e, ATTR)})


def test_equal_digests_agree_with_a_full_compare() -> None:
    desired = with_digest(process())
    stored = ActualEntity(
        guid="g",
        type_name="lineage_process",
        qualified_name="job:p@d",
        owner="job",
        attributes=dict(desired.attributes),
        refs={"inputs": [("lineage_dataset", "b@d"), ("lineage_dataset", "a@d")], "outputs": []},
    )
    assert diff_entity(desired, stored) == []
    changed = with_digest(process(kind="spark"))
    assert {c.attribute for c in diff_entity(changed, stored)} == {"kind", ATTR}
    assert entity_digest(desired, ATTR) == desired.attributes[ATTR]  # its own value is left out


def test_each_job_compares_the_entitys_digest_and_its_own_part_only() -> None:
    from atlas_sync.reconcile.digest import for_job, merged, without_metadata

    stored = "1:BASEBASEBAS jA=AAAAAAAAAAA jB=BBBBBBBBBBB"
    assert for_job(stored, "jA") == "1:BASEBASEBAS+AAAAAAAAAAA"
    assert for_job(stored, "jC") == "1:BASEBASEBAS"  # a job without metadata here: the entity's alone
    assert for_job(None, "jA") is None
    # a job writes its part and keeps the others'
    assert merged(stored, "jA", "1:NEWNEWNEWNE+CCCCCCCCCCC") == "1:NEWNEWNEWNE jA=CCCCCCCCCCC jB=BBBBBBBBBBB"
    assert merged(stored, "jA", "1:BASEBASEBAS") == "1:BASEBASEBAS jB=BBBBBBBBBBB"  # its metadata gone
    assert merged(stored, "jA", "1:BASEBASEBAS+CCCCCCCCCCC", drop={"jB"}) == "1:BASEBASEBAS jA=CCCCCCCCCCC"
    assert without_metadata("1:BASEBASEBAS+CCCCCCCCCCC") == "1:BASEBASEBAS"
    # a digest from before parts (one value for all) is the entity's digest
    assert for_job("1:OLDOLDOLDOL", "jA") == "1:OLDOLDOLDOL"
    # no job's part anywhere: the wanted digest as it is; a part on either side is kept or added
    for before in (None, "", "1:OLDOLDOLDOL", 7):
        assert merged(before, "jA", "1:NEWNEWNEWNE") == "1:NEWNEWNEWNE"
        assert merged(before, "jA", "1:NEWNEWNEWNE+CCCCCCCCCCC") == "1:NEWNEWNEWNE jA=CCCCCCCCCCC"
    assert merged("1:OLDOLDOLDOL jB=BBBBBBBBBBB", "jA", "1:NEW") == "1:NEW jB=BBBBBBBBBBB"
    assert merged("1:OLDOLDOLDOL jA=AAAAAAAAAAA", "jA", "1:NEW") == "1:NEW"


def test_metadata_has_its_own_part_of_the_digest() -> None:
    e = process()
    plain = entity_digest(e, ATTR)
    e.metadata = {"labels": ["gdpr"]}
    tagged = entity_digest(e, ATTR)
    assert tagged.startswith(plain + "+") and len(tagged) == len(plain) + 12


# The digest's text, as every digest already stored in Atlas was computed: it must never change.
def stored_formula(e: DesiredEntity) -> str:
    def norm(v: object) -> object:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    def sixty_four_bits(doc: object) -> str:
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        raw = hashlib.blake2b(text.encode(), digest_size=8).digest()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    attrs = {k: norm(v) for k, v in e.attributes.items() if k != ATTR}
    refs = {k: sorted(set(v)) if isinstance(v, list) else v for k, v in e.refs.items()}
    base = "1:" + sixty_four_bits([e.type_name, e.qualified_name, attrs, refs])
    return f"{base}+{sixty_four_bits(norm(e.metadata))}" if e.metadata else base


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, exclude_categories=())),  # control characters, surrogates
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(st.characters(exclude_categories=()), max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(attrs=st.dictionaries(st.text(max_size=8), JSONISH, max_size=6), metadata=JSONISH)
def test_the_digest_is_the_stored_formula_for_any_attribute_values(attrs: dict, metadata: object) -> None:
    e = dataclasses.replace(process(**attrs), metadata=metadata if isinstance(metadata, dict) else {})
    assert outcome(entity_digest, e) == outcome(stored_formula, e)


def test_the_digest_of_unusual_values_is_the_stored_formula() -> None:
    for value in (
        1e-07,
        0.00001,
        [1.5, "\ud800"],
        {"b": 1, "a": {"d": 2.0, "c": None}},
        {1: "x"},
        "\x00\x7f\u2028",
    ):
        e = process(value=value)
        assert outcome(entity_digest, e) == outcome(stored_formula, e)


def outcome(digest: Callable[..., str], e: DesiredEntity) -> str:
    """The digest, or the error's type (a lone surrogate cannot be written as UTF-8)."""
    try:
        return digest(e, ATTR) if digest is entity_digest else digest(e)
    except UnicodeEncodeError:
        return "UnicodeEncodeError"


def test_a_job_completing_another_jobs_entity_keeps_the_owners_digest_and_adds_what_it_wanted() -> None:
    stored = "1:OwnerDigest jB=kkkkkkkkkkk"
    assert completed(stored, "1:MineMineMin+mmmmmmmmmmm") == "1:OwnerDigest+:MineMineMin+mmmmmmmmmmm"
    # merged as any job's part, the others' parts kept
    written = merged(stored, "jA", completed(stored, "1:MineMineMin+mmmmmmmmmmm"))
    assert written == "1:OwnerDigest jA=:MineMineMin+mmmmmmmmmmm jB=kkkkkkkkkkk"
    # its next sync compares what it wants with its part; the owner's, with the entity's digest
    assert for_other_job(written, "jA") == "1:MineMineMin+mmmmmmmmmmm"
    assert for_job(written, "jB") == "1:OwnerDigest+kkkkkkkkkkk"
    # a job that sees the entity as its owner wrote it keeps the usual form
    assert completed(stored, "1:OwnerDigest+mmmmmmmmmmm") == "1:OwnerDigest+mmmmmmmmmmm"
    assert for_other_job("1:OwnerDigest jA=mmmmmmmmmmm", "jA") == "1:OwnerDigest+mmmmmmmmmmm"
    assert completed(None, "1:MineMineMin") is None
