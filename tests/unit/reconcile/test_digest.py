"""The digest stored with each entity: equal exactly when a full compare would find nothing to write."""

from __future__ import annotations

import dataclasses

from atlas_sync.reconcile.actual import ActualEntity
from atlas_sync.reconcile.digest import entity_digest
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


def test_metadata_has_its_own_part_of_the_digest() -> None:
    e = process()
    plain = entity_digest(e, ATTR)
    e.metadata = {"labels": ["gdpr"]}
    tagged = entity_digest(e, ATTR)
    assert tagged.startswith(plain + "+") and len(tagged) == len(plain) + 12
