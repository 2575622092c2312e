"""Pydantic models of Atlas typedefs (the ``AtlasTypesDef`` JSON format) and type-name parsing.

Defaults follow Atlas's Java model, not intuition: an attribute without ``isOptional`` is
**mandatory** (``AtlasAttributeDef()`` sets ``isOptional=false``), cardinality is ``SINGLE``,
a relationship is an ``ASSOCIATION`` with ``propagateTags`` ``NONE``.

Unknown keys are an error here (Atlas silently ignores them, so a misspelt ``"isOptinal"`` would
create a mandatory attribute). Fields the server adds to the defs it returns (``guid``,
``version``, ``createTime``, ``subTypes``, ...) are accepted and dropped, so a def copied from a GET
response can be used as a bundle file.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from atlas_sync.typenames import CATEGORY_LISTS, named_types
from atlas_sync.typenames import PRIMITIVES as ATLAS_PRIMITIVES

Cardinality = Literal["SINGLE", "LIST", "SET"]
RelationshipCategory = Literal["ASSOCIATION", "AGGREGATION", "COMPOSITION"]
PropagateTags = Literal["NONE", "ONE_TO_TWO", "TWO_TO_ONE", "BOTH"]

# (CATEGORY_LISTS: the category names as Atlas spells them and their lists, from atlas_sync.typenames)
LIST_CATEGORIES: dict[str, str] = {v: k for k, v in CATEGORY_LISTS.items()}
# Rank used to break ties in the dependency order (the order Atlas's store creates categories in).
CATEGORY_RANK: dict[str, int] = {c: i for i, c in enumerate(CATEGORY_LISTS)}

# Fields the server adds or computes; accepted in bundle files and ignored.
SERVER_FIELDS: frozenset[str] = frozenset(
    {
        "guid",
        "createdBy",
        "updatedBy",
        "createTime",
        "updateTime",
        "version",
        "category",
        "dateFormatter",
        "subTypes",
        "relationshipAttributeDefs",
        "businessAttributeDefs",
        "attributeDefOverrides",
    }
)

PRIMITIVES: frozenset[str] = ATLAS_PRIMITIVES | {"objectid"}

# Atlas's own rule for type names (AtlasAbstractDefStoreV2.validateType).
TYPE_NAME_RE = re.compile(r"^(__)?[a-zA-Z][a-zA-Z0-9_ ]*$")
# Names that break type-vertex properties in 2.4 (500) and are refused by 2.5+ (400-00-102).
RESERVED_TYPE_NAMES: frozenset[str] = frozenset({"description", "version", "options", "name", "servicetype"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AttributeDef(_Model):
    """One attribute of a struct, entity, classification, relationship or business-metadata type."""

    name: str
    typeName: str
    isOptional: bool = False
    cardinality: Cardinality = "SINGLE"
    valuesMinCount: int | None = None
    valuesMaxCount: int | None = None
    isUnique: bool = False
    isIndexable: bool = False
    includeInNotification: bool | None = None
    defaultValue: str | None = None
    description: str | None = None
    searchWeight: int | None = None
    indexType: str | None = None
    displayName: str | None = None
    constraints: list[dict[str, Any]] | None = None
    options: dict[str, str] | None = None
    # Only present in server responses (relationshipAttributeDefs); ignored.
    relationshipTypeName: str | None = Field(default=None, exclude=True)
    isLegacyAttribute: bool | None = Field(default=None, exclude=True)


class EnumElementDef(_Model):
    value: str
    ordinal: int | None = None
    description: str | None = None


class _BaseDef(_Model):
    name: str
    description: str | None = None
    typeVersion: str | None = None
    serviceType: str | None = None
    options: dict[str, str] | None = None
    # Server-side fields (see SERVER_FIELDS): accepted, never sent.
    guid: str | None = Field(default=None, exclude=True)
    createdBy: str | None = Field(default=None, exclude=True)
    updatedBy: str | None = Field(default=None, exclude=True)
    createTime: Any = Field(default=None, exclude=True)
    updateTime: Any = Field(default=None, exclude=True)
    version: Any = Field(default=None, exclude=True)
    category: str | None = Field(default=None, exclude=True)
    dateFormatter: Any = Field(default=None, exclude=True)


class EnumDef(_BaseDef):
    elementDefs: list[EnumElementDef] = Field(default_factory=list)
    defaultValue: str | None = None


class StructDef(_BaseDef):
    attributeDefs: list[AttributeDef] = Field(default_factory=list)


class ClassificationDef(StructDef):
    superTypes: list[str] = Field(default_factory=list)
    entityTypes: list[str] = Field(default_factory=list)
    subTypes: Any = Field(default=None, exclude=True)


class EntityDef(StructDef):
    superTypes: list[str] = Field(default_factory=list)
    subTypes: Any = Field(default=None, exclude=True)
    relationshipAttributeDefs: Any = Field(default=None, exclude=True)
    businessAttributeDefs: Any = Field(default=None, exclude=True)
    attributeDefOverrides: Any = Field(default=None, exclude=True)
    # The seed's JSON carries an empty "relationshipDefs" list inside entity defs; Atlas ignores it.
    relationshipDefs: Any = Field(default=None, exclude=True)


class RelationshipEndDef(_Model):
    type: str
    name: str
    isContainer: bool = False
    cardinality: Cardinality = "SINGLE"
    isLegacyAttribute: bool = False
    description: str | None = None


class RelationshipDef(StructDef):
    relationshipCategory: RelationshipCategory = "ASSOCIATION"
    relationshipLabel: str | None = None
    propagateTags: PropagateTags = "NONE"
    endDef1: RelationshipEndDef
    endDef2: RelationshipEndDef


class BusinessMetadataDef(StructDef):
    pass


DEF_MODELS: dict[str, type[_BaseDef]] = {
    "ENUM": EnumDef,
    "STRUCT": StructDef,
    "CLASSIFICATION": ClassificationDef,
    "ENTITY": EntityDef,
    "RELATIONSHIP": RelationshipDef,
    "BUSINESS_METADATA": BusinessMetadataDef,
}

AnyDef = EnumDef | StructDef | ClassificationDef | EntityDef | RelationshipDef | BusinessMetadataDef


def to_atlas(definition: _BaseDef) -> dict[str, Any]:
    """The def as Atlas JSON: unset optional fields left out, server-only fields never sent."""
    return definition.model_dump(exclude_none=True)


def referenced_names(type_name: str) -> list[str]:
    """Non-primitive type names a ``typeName`` refers to: ``array<map<string,my_struct>>`` ->
    ``["my_struct"]``. Raises :class:`TypeNameError` on malformed syntax."""
    return [n for n in named_types(type_name) if n not in PRIMITIVES]


def is_collection(type_name: str) -> bool:
    return type_name.strip().startswith("array<")
