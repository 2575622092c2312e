"""Build the emulator's built-in types from Apache Atlas's model folder (``addons/models`` as released).

Usage: ``python scripts/build_emulator_types.py MODELS_DIR OUT.json``

Reads the model files as Atlas's ``AtlasTypeDefStoreInitializer`` does (folders, then files, sorted by
name) and applies each folder's ``patches/`` in file order, a patch only when the type's ``typeVersion``
equals the patch's ``applyToVersion`` (then ``typeVersion`` becomes ``updateToVersion``). The output is one
typedefs document (what a 2.4.0 server holds after start-up), the emulator's
``atlas_sync/emulator/data/builtin_types.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

KEYS = (
    "enumDefs",
    "structDefs",
    "classificationDefs",
    "entityDefs",
    "relationshipDefs",
    "businessMetadataDefs",
)


def _load(models: Path) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    doc: dict[str, list[dict[str, Any]]] = {k: [] for k in KEYS}
    patches: list[dict[str, Any]] = []
    for folder in sorted(p for p in models.iterdir() if p.is_dir()):
        for f in sorted(folder.glob("*.json")):
            data = json.loads(f.read_text(encoding="utf-8"))
            for k in KEYS:
                doc[k].extend(data.get(k) or [])
        if (folder / "patches").is_dir():
            for f in sorted((folder / "patches").glob("*.json")):
                patches.extend(json.loads(f.read_text(encoding="utf-8")).get("patches") or [])
    return doc, patches


def _apply(defs: dict[str, dict[str, Any]], p: dict[str, Any]) -> None:
    d = defs.get(p["typeName"])
    current = d.get("typeVersion") if d is not None else None
    # AtlasTypeDefStoreInitializer.PatchHandler.isPatchApplicable
    if d is None or not (
        current is None or current == p["applyToVersion"] or current.startswith(p["applyToVersion"] + ".")
    ):
        return
    action = p["action"]
    attrs = d.setdefault("attributeDefs", []) if action in ("ADD_ATTRIBUTE", "UPDATE_ATTRIBUTE") else []
    if action == "ADD_ATTRIBUTE":  # AtlasStructDef.addAttribute: a same-named attribute is replaced
        for a in p["attributeDefs"]:
            attrs[:] = [x for x in attrs if x["name"].lower() != a["name"].lower()] + [a]
    elif action == "UPDATE_ATTRIBUTE":
        new = {a["name"]: a for a in p["attributeDefs"]}
        d["attributeDefs"] = [new.get(a["name"], a) for a in attrs]
    elif action == "UPDATE_ATTRIBUTE_METADATA":
        for a in d.get("attributeDefs") or []:
            if a["name"] == p["attributeName"]:
                a.update(p.get("params") or {})
    elif action == "SET_SERVICE_TYPE":
        d["serviceType"] = p["serviceType"]
    elif action == "UPDATE_TYPEDEF_OPTIONS":
        d["options"] = {**(d.get("options") or {}), **p["typeDefOptions"]}
    elif action == "ADD_SUPER_TYPES":
        d["superTypes"] = list(d.get("superTypes") or []) + [
            s for s in p["superTypes"] if s not in (d.get("superTypes") or [])
        ]
    elif action == "UPDATE_ENUMDEF":
        have = {e["value"] for e in d.get("elementDefs") or []}
        d["elementDefs"] = list(d.get("elementDefs") or []) + [
            e for e in p["elementDefs"] if e["value"] not in have
        ]
    elif action == "REMOVE_LEGACY_REF_ATTRIBUTES":
        params = p.get("params") or {}
        # RemoveLegacyRefAttributesPatchHandler: both ends' attributes leave the entity types
        if str(params.get("swapEnds", "")).lower() == "true":
            d["endDef1"], d["endDef2"] = d["endDef2"], d["endDef1"]
        for end in ("endDef1", "endDef2"):
            e = d[end]
            owner = defs.get(e["type"])
            if owner is not None and owner.get("attributeDefs"):
                owner["attributeDefs"] = [a for a in owner["attributeDefs"] if a["name"] != e["name"]]
        if params.get("relationshipLabel"):
            d["relationshipLabel"] = params["relationshipLabel"]
        elif not d.get("relationshipLabel"):
            legacy = next((d[e] for e in ("endDef1", "endDef2") if d[e].get("isLegacyAttribute")), None)
            if legacy is not None:
                d["relationshipLabel"] = f"__{legacy['type']}.{legacy['name']}"
        if params.get("relationshipCategory"):
            d["relationshipCategory"] = params["relationshipCategory"]
    else:
        raise SystemExit(f"unknown patch action {action!r} ({p.get('id')})")
    d["typeVersion"] = p["updateToVersion"]


def build(models: Path) -> dict[str, list[dict[str, Any]]]:
    doc, patches = _load(models)
    defs = {d["name"]: d for k in KEYS for d in doc[k]}
    for p in patches:
        _apply(defs, p)
    return doc


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    doc = build(Path(argv[1]))
    Path(argv[2]).write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
