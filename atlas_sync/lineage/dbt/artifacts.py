"""dbt's artifacts as the reader takes them: ``manifest.json`` (required), ``catalog.json`` and
``run_results.json`` (optional), each checked for its kind and schema version before anything is read.

Schema versions (https://schemas.getdbt.com/dbt/<kind>/v<N>.json, in ``metadata.dbt_schema_version``):
manifest v4 (dbt 1.0) to v12 (dbt 1.8 and later), catalog v1, run-results v4 (dbt 1.0) to v6. A
version outside these is refused: a newer dbt may have moved what the reader relies on.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.inputs import load_json

MANIFEST_VERSIONS = range(4, 13)
CATALOG_VERSIONS = range(1, 2)
RUN_RESULTS_VERSIONS = range(4, 7)
_SCHEMA = re.compile(r"/dbt/(manifest|catalog|run-results)/v(\d+)\.json$")
_KNOWN = {"manifest": MANIFEST_VERSIONS, "catalog": CATALOG_VERSIONS, "run-results": RUN_RESULTS_VERSIONS}


@dataclass
class Artifacts:
    """The loaded documents and where they came from."""

    manifest_path: str
    manifest: dict[str, Any]
    version: int
    catalog_path: str | None = None
    catalog: dict[str, Any] | None = None
    run_results_path: str | None = None
    run_results: dict[str, Any] | None = None
    # Nodes and sources of the manifest by unique id.
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)


def schema_version(doc: Any, kind: str, file: str) -> int:
    """The schema version of a dbt artifact of ``kind``; an :class:`InputError` naming ``file`` when the
    document is not that artifact or its version is not one the reader knows."""
    if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict):
        raise InputError(f"not a dbt {kind} artifact (no 'metadata' object)", file=file, path="$.metadata")
    url = doc["metadata"].get("dbt_schema_version")
    m = _SCHEMA.search(url) if isinstance(url, str) else None
    if m is None:
        raise InputError(
            f"not a dbt {kind} artifact: metadata.dbt_schema_version is {url!r}",
            file=file,
            path="$.metadata.dbt_schema_version",
        )
    if m.group(1) != kind:
        raise InputError(f"this is a dbt {m.group(1)} artifact, not a {kind}", file=file)
    version = int(m.group(2))
    known = _KNOWN[kind]
    if version not in known:
        raise InputError(
            f"dbt {kind} schema v{version} (dbt {doc['metadata'].get('dbt_version', '?')}) is not one "
            f"this reader knows (v{known.start} to v{known.stop - 1})",
            file=file,
            path="$.metadata.dbt_schema_version",
            hint="upgrade atlas-sync, or write the artifacts with a dbt version it knows",
        )
    return version


def _object(doc: dict[str, Any], key: str, file: str) -> dict[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"'{key}' must be an object", file=file, path=f"$.{key}")
    return value


def manifest_path(path: str) -> str:
    """``target/`` or a manifest file -> the manifest file."""
    if os.path.isdir(path):
        candidate = os.path.join(path, "manifest.json")
        if not os.path.exists(candidate):
            raise InputError(
                "no manifest.json in this folder", file=path, hint="run dbt build or dbt compile"
            )
        return candidate
    return path


def load(path: str, *, catalog: str | bool | None = None, run_results: str | bool | None = None) -> Artifacts:
    """Load the manifest at ``path`` (a file or the folder holding it) and the other artifacts:
    ``catalog`` / ``run_results`` a path, ``False`` for none, ``None`` for the file next to the
    manifest when there is one. Checks every document before returning."""
    mpath = manifest_path(path)
    manifest = load_json(mpath)
    version = schema_version(manifest, "manifest", mpath)
    nodes = _object(manifest, "nodes", mpath)
    sources = _object(manifest, "sources", mpath)
    for key, items in (("nodes", nodes), ("sources", sources)):
        for uid, node in items.items():
            if not isinstance(node, dict):
                raise InputError(f"{uid!r} must be an object", file=mpath, path=f"$.{key}[{uid!r}]")
    art = Artifacts(manifest_path=mpath, manifest=manifest, version=version, nodes={**nodes, **sources})
    folder = os.path.dirname(mpath)
    cpath = _beside(catalog, folder, "catalog.json")
    if cpath is not None:
        art.catalog_path, art.catalog = cpath, load_json(cpath)
        schema_version(art.catalog, "catalog", cpath)
        _same_project(art, art.catalog, cpath, ("nodes", "sources"))
    rpath = _beside(run_results, folder, "run_results.json")
    if rpath is not None:
        art.run_results_path, art.run_results = rpath, load_json(rpath)
        schema_version(art.run_results, "run-results", rpath)
        results = art.run_results.get("results")
        if not isinstance(results, list) or not all(
            isinstance(r, dict) and isinstance(r.get("unique_id"), str) for r in results
        ):
            raise InputError(
                "'results' must be a list of objects with a unique_id", file=rpath, path="$.results"
            )
        _same_project(art, {"results": {r["unique_id"]: r for r in results}}, rpath, ("results",))
    return art


def _beside(option: str | bool | None, folder: str, name: str) -> str | None:
    if option is False or (isinstance(option, str) and option.strip().lower() in ("false", "no", "none", "")):
        return None
    if isinstance(option, str):
        return os.path.join(option, name) if os.path.isdir(option) else option
    candidate = os.path.join(folder, name)
    return candidate if os.path.exists(candidate) else None


def _same_project(art: Artifacts, doc: dict[str, Any], file: str, keys: tuple[str, ...]) -> None:
    """A catalog or run results of another project names none of the manifest's nodes."""
    ids: list[str] = []
    for key in keys:
        ids.extend(_object(doc, key, file))
    if ids and not any(i in art.nodes for i in ids):
        project = art.manifest["metadata"].get("project_name") or "this manifest's project"
        raise InputError(
            f"none of its {len(ids)} nodes is in {art.manifest_path} (e.g. {ids[0]!r}): it is of "
            f"another project than {project}",
            file=file,
            hint="give the artifacts of one dbt project (the same target/ folder)",
        )
