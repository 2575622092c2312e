"""Facts about the types every Atlas 2.4 server has (base model + glossary model + patches).

Used to check a bundle offline (``atlas-sync typedefs validate``) and by tests; a plan against a
server always uses the server's own typedefs instead. Only what reference resolution needs is
kept: name, category, supertypes and attribute names/types.
"""

from __future__ import annotations

from typing import Any


def _attrs(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"name": n, "typeName": t, "isOptional": True} for n, t in pairs]


def _entity(name: str, supers: list[str], *attrs: tuple[str, str]) -> dict[str, Any]:
    return {"name": name, "category": "ENTITY", "superTypes": supers, "attributeDefs": _attrs(*attrs)}


def _rel(name: str, t1: str, n1: str, t2: str, n2: str) -> dict[str, Any]:
    return {
        "name": name,
        "category": "RELATIONSHIP",
        "endDef1": {"type": t1, "name": n1},
        "endDef2": {"type": t2, "name": n2},
        "attributeDefs": [],
    }


def atlas_base_typedefs() -> dict[str, Any]:
    """An ``AtlasTypesDef``-shaped dict of Atlas 2.4's built-in types (abridged to what resolution needs)."""
    g = "AtlasGlossary"
    return {
        "enumDefs": [
            {"name": "atlas_operation", "category": "ENUM", "elementDefs": []},
            {"name": "AtlasGlossaryTermRelationshipStatus", "category": "ENUM", "elementDefs": []},
            {"name": "AtlasGlossaryTermAssignmentStatus", "category": "ENUM", "elementDefs": []},
        ],
        "structDefs": [],
        "classificationDefs": [],
        "entityDefs": [
            _entity(
                "Referenceable",
                [],
                ("qualifiedName", "string"),
                ("replicatedFrom", "array<AtlasServer>"),
                ("replicatedTo", "array<AtlasServer>"),
            ),
            _entity("__internal", []),
            _entity(
                "Asset",
                ["Referenceable"],
                ("name", "string"),
                ("displayName", "string"),
                ("description", "string"),
                ("userDescription", "string"),
                ("owner", "string"),
            ),
            _entity(
                "ddl",
                ["Referenceable"],
                ("queryText", "string"),
                ("execTime", "date"),
                ("userName", "string"),
                ("serviceType", "string"),
            ),
            _entity("DataSet", ["Asset"]),
            _entity("Infrastructure", ["Asset"]),
            _entity("Process", ["Asset"], ("inputs", "array<DataSet>"), ("outputs", "array<DataSet>")),
            _entity("ProcessExecution", ["Asset"]),
            _entity("Path", ["DataSet"]),
            _entity(
                "AtlasServer",
                [],
                ("name", "string"),
                ("displayName", "string"),
                ("fullName", "string"),
                ("urls", "array<string>"),
                ("additionalInfo", "map<string,string>"),
            ),
            _entity("__AtlasUserProfile", ["__internal"]),
            _entity("__AtlasUserSavedSearch", ["__internal"]),
            _entity("__AtlasMetricsStat", ["__internal"]),
            _entity("__ExportImportAuditEntry", ["__internal"]),
            _entity("__AtlasAuditEntry", ["__internal"]),
            _entity(g, ["__internal"]),
            _entity("AtlasGlossaryTerm", ["__internal"]),
            _entity("AtlasGlossaryCategory", ["__internal"]),
        ],
        "relationshipDefs": [
            _rel("dataset_process_inputs", "Process", "inputs", "DataSet", "inputToProcesses"),
            _rel("process_dataset_outputs", "Process", "outputs", "DataSet", "outputFromProcesses"),
            _rel(
                "AtlasGlossarySemanticAssignment",
                "AtlasGlossaryTerm",
                "assignedEntities",
                "Referenceable",
                "meanings",
            ),
        ],
        "businessMetadataDefs": [],
    }
