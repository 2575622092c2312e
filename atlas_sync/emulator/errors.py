"""Errors raised inside the emulator and turned into Atlas-shaped HTTP responses.

Atlas answers its own errors with ``{"errorCode", "errorMessage"}`` and the HTTP status embedded in the
code; unexpected failures become a 500 with a plain-text "It has been logged (ID ...)" body; JSON that
cannot be parsed becomes a 400 ``{"error": ...}``. One exception class per shape.
"""

from __future__ import annotations

# errorCode -> message template ({0}, {1}, ... as in Atlas's MessageFormat templates).
CODES: dict[str, str] = {
    "ATLAS-400-00-003": "{0}: incompatible supertype {1}",
    "ATLAS-400-00-002": "{0}: invalid supertypes - circular reference back to self {1}",
    "ATLAS-400-00-00A": "{0}: Unknown/invalid typename",
    "ATLAS-400-00-00C": "{0}.{1} : can not add mandatory attribute",
    "ATLAS-400-00-00D": "{0}.{1} : attribute delete not supported",
    "ATLAS-400-00-00E": "superType remove not supported",
    "ATLAS-400-00-012": "Cardinality of attribute {0}.{1} requires a list or set type",
    "ATLAS-400-00-013": "Type {0} with unique attribute {1} does not exist",
    "ATLAS-400-00-014": "Type {0} with name {1} does not exist",
    # MessageFormat drops the quotes of Atlas's "'_'": the text reads "or _ characters"
    # MessageFormat drops the quotes of Atlas's '_' in this template: the text reads "or _ characters"
    "ATLAS-400-00-019": "{0}: invalid name for {1}.  Names must consist of a letter followed by a sequence of "
    "letter, number, space, or _ characters",
    "ATLAS-400-00-01A": "invalid parameters: {0}",
    "ATLAS-400-00-06D": "Classification {0} is not associated with entity",
    "ATLAS-400-00-08F": "Invalid label: {0}, label size should not be greater than {1}",
    "ATLAS-400-00-090": "Invalid label: {0}, label should contain alphanumeric characters, '_' or '-'",
    "ATLAS-400-00-021": "ObjectId is not valid {0}",
    "ATLAS-400-00-023": "Attribute {0} not found for type {1}",
    "ATLAS-400-00-024": "{0} is a System-type",
    "ATLAS-400-00-027": "{0}.{1} : attribute update not supported",
    "ATLAS-400-00-028": "invalid value: {0}",
    "ATLAS-400-00-029": "{0}",
    "ATLAS-400-00-02B": "Mandatory field {0}.{1} has empty/null value",
    "ATLAS-400-00-02D": "relationshipDef {0} creation attempted with both ends as containers",
    "ATLAS-400-00-030": "ASSOCIATION relationshipDef {0} creation attempted with an end specifying isContainer",
    "ATLAS-400-00-031": "COMPOSITION relationshipDef {0} creation attempted without an end specifying isContainer",
    "ATLAS-400-00-032": "AGGREGATION relationshipDef {0} creation attempted without an end specifying isContainer",
    "ATLAS-400-00-033": "COMPOSITION relationshipDef {0} can only have one parent; so cannot have SET cardinality "
    "on children",
    "ATLAS-400-00-034": "relationshipDef {0} cannot have a LIST cardinality on an end",
    "ATLAS-400-00-035": "relationshipDef {0} has invalid end type {1}",
    "ATLAS-400-00-036": "invalid relationshipDef: {0}: end type 1: {1}, end type 2: {2}",
    "ATLAS-400-00-037": "invalid update for relationshipDef {0}: new end1 {1}, existing end1 {2}",
    "ATLAS-400-00-038": "invalid update for relationshipDef {0}: new end2 {1}, existing end2 {2}",
    "ATLAS-400-00-039": "invalid  update for relationship {0}: new relationshipDef category {1}, existing "
    "relationshipDef category {2}",
    "ATLAS-400-00-047": "No search parameter was found. One of the following MUST be specified in the request; "
    "typeName, classification, termName or queryText",
    "ATLAS-400-00-057": "Length of query param {0} exceeds the limit",
    "ATLAS-400-00-058": "Invalid query length, update {0} to change the limit",
    "ATLAS-400-00-059": "Invalid DSL query: {0} | Reason: {1}. Please refer to Atlas DSL grammar for more "
    "information",
    "ATLAS-400-00-072": "Mandatory anchor attribute is missing",
    "ATLAS-400-00-076": "Term guid can't be empty/null when adding to a category",
    "ATLAS-400-00-078": "Missing mandatory attribute, TermAssignment relationship guid",
    "ATLAS-400-00-079": "Attributes qualifiedName and name are missing. Failed to derive a unique name for Glossary",
    "ATLAS-400-00-07A": "Attributes qualifiedName, name & glossary name are missing. Failed to derive a unique name "
    "for Glossary term",
    "ATLAS-400-00-07B": "Attributes qualifiedName, name & glossary name are missing. Failed to derive a unique name "
    "for Glossary category",
    "ATLAS-400-00-07E": "Invalid Term relationship: Term can't have a relationship with self",
    "ATLAS-400-00-07F": "Invalid child category relationship: Child category (guid = {0}) belongs to different "
    "glossary",
    "ATLAS-400-00-080": "Given relationshipGuid({0}) is invalid for term (guid={1}) and entity(guid={2})",
    "ATLAS-400-00-083": "name cannot contain following special chars ('@', '.')",
    "ATLAS-400-00-084": "Term (guid={0}) can't be deleted as it has been assigned to {1} entities.",
    "ATLAS-409-00-007": "Glossary with qualifiedName {0} already exists",
    "ATLAS-409-00-009": "Glossary term with qualifiedName {0} already exists",
    "ATLAS-409-00-00A": "Glossary category with qualifiedName {0} already exists",
    "ATLAS-400-00-081": "{0}.{1}: invalid attribute type. Attribute cannot be of type classification",
    "ATLAS-400-00-09E": "Invalid attribute name: {0}.{1}. Attribute already exists in another parent type: {2}",
    "ATLAS-400-00-100": "Lineage on demand config: {0} is not enabled",
    "ATLAS-404-00-001": "Given typename {0} was invalid",
    "ATLAS-404-00-002": "Given type guid {0} was invalid",
    "ATLAS-404-00-005": "Given instance guid {0} is invalid/not found",
    "ATLAS-404-00-003": "No classifications associated with entity: {0}",
    "ATLAS-404-00-008": "Given classification {0} was invalid",
    "ATLAS-404-00-007": "Invalid instance creation/updation parameters passed : {0}",
    "ATLAS-404-00-009": "Instance {0} with unique attribute {1} does not exist",
    "ATLAS-409-00-004": "relationship {0} already exists between entities {1} and {2}",
    "ATLAS-404-00-00A": "Referenced entity {0} is not found",
    "ATLAS-404-00-011": "Given instance guid {0} with type {1} is not a valid lineage entity type.",
    "ATLAS-409-00-001": "Given type {0} already exists",
    "ATLAS-409-00-002": "Given type {0} has references",
    "ATLAS-409-00-005": "Given type {0} has associated relationshipDefs",
    "ATLAS-500-00-005": "Failed to get the lock; another type update might be in progress. Please try again",
}


class EmulatorError(Exception):
    """Base of every error that the emulator turns into an HTTP response."""


class AtlasApiError(EmulatorError):
    """An Atlas ``AtlasBaseException``: JSON ``{"errorCode", "errorMessage"}``, status from the code."""

    def __init__(self, code: str, *params: object) -> None:
        template = CODES[code]
        message = template
        for i, p in enumerate(params):
            message = message.replace("{" + str(i) + "}", str(p))
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = int(code.split("-")[1])


class InternalError(EmulatorError):
    """A non-Atlas failure inside Atlas (NPE, schema violation, ...): 500 with a plain-text body."""


class BadJsonError(EmulatorError):
    """A request body Jackson cannot read: 400 ``{"error": "<parser message>"}``."""
