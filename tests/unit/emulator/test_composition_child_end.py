"""The child end of a COMPOSITION relationship is mandatory, as Atlas 2.1.0 has it (its model files mark no
attribute so): an rdbms_table without db, a hive_column_lineage without query are refused with Atlas's
message; the typedef says so (relationshipAttributeDefs isOptional false)."""

from __future__ import annotations

from atlas_sync.emulator import Emulator

from .helpers import call


def _entity(type_name: str, qn: str, **rels: object) -> dict[str, object]:
    doc: dict[str, object] = {"typeName": type_name, "attributes": {"qualifiedName": qn, "name": qn}}
    if rels:
        doc["relationshipAttributes"] = rels
    return doc


def test_an_rdbms_table_without_its_db_is_refused_with_atlas_message() -> None:
    emu = Emulator(None)
    status, body = call(emu, "POST", "/v2/entity/bulk", {"entities": [_entity("rdbms_table", "s.t@x")]})
    assert status == 404
    assert body["errorCode"] == "ATLAS-404-00-007"
    assert body["errorMessage"] == (
        "Invalid instance creation/updation parameters passed : "
        "rdbms_table.db: mandatory attribute value missing in type rdbms_table"
    )


def test_an_rdbms_table_in_its_db_in_its_instance_is_created() -> None:
    emu = Emulator(None)
    inst = {**_entity("rdbms_instance", "pg@x"), "guid": "-1"}
    inst["attributes"] = {**inst["attributes"], "rdbms_type": "postgres"}  # type: ignore[dict-item]
    db = {**_entity("rdbms_db", "s@x", instance={"guid": "-1", "typeName": "rdbms_instance"}), "guid": "-2"}
    table = _entity("rdbms_table", "s.t@x", db={"guid": "-2", "typeName": "rdbms_db"})
    status, answer = call(emu, "POST", "/v2/entity/bulk", {"entities": [inst, db, table]})
    assert status == 200, answer
    assert len(answer["mutatedEntities"]["CREATE"]) == 3


def test_the_typedef_marks_the_child_end_mandatory_and_the_container_end_optional() -> None:
    emu = Emulator(None)
    _, lineage = call(emu, "GET", "/v2/types/entitydef/name/hive_column_lineage")
    ends = {
        (a["name"], a["relationshipTypeName"]): a["isOptional"] for a in lineage["relationshipAttributeDefs"]
    }
    assert ends[("query", "hive_process_column_lineage")] is False
    _, process = call(emu, "GET", "/v2/types/entitydef/name/hive_process")
    ends = {
        (a["name"], a["relationshipTypeName"]): a["isOptional"] for a in process["relationshipAttributeDefs"]
    }
    assert ends[("columnLineages", "hive_process_column_lineage")] is True
