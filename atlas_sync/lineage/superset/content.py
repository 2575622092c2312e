"""Apache Superset's objects as the ``superset`` reader reads them, from an export ZIP or the REST API.

An export (``superset export-dashboards``, ``GET /api/v1/dashboard/export/``, format 1.0.0) is a ZIP with
one top folder holding ``metadata.yaml`` and ``databases/*.yaml``, ``datasets/<database>/*.yaml``,
``charts/*.yaml``, ``dashboards/*.yaml``; every object names its own ``uuid`` and those it uses
(``database_uuid``, ``dataset_uuid``, a dashboard's ``position`` with each chart's ``uuid``). The API gives
the same objects by numeric id; :mod:`atlas_sync.lineage.superset.api` turns them into this shape.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from atlas_sync.errors import InputError


@dataclass
class SupersetContent:
    """Databases, datasets, charts and dashboards by uuid, each with where it was read (``origin``)."""

    databases: dict[str, dict[str, Any]] = field(default_factory=dict)
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    charts: dict[str, dict[str, Any]] = field(default_factory=dict)
    dashboards: dict[str, dict[str, Any]] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    # objects that could not be read: (file, message); the rest is still read
    unreadable: list[tuple[str, str]] = field(default_factory=list)


# libyaml's safe loader when PyYAML has it: ~10x the pure-Python one on a big export
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SECTIONS = {"databases": "databases", "datasets": "datasets", "charts": "charts", "dashboards": "dashboards"}


def is_export(path: str) -> bool:
    """Whether ``path`` is a Superset export: a ZIP (or its unzipped folder) with ``metadata.yaml`` and
    at least one of ``dashboards/``, ``charts/``, ``datasets/`` beside it."""
    p = Path(path)
    try:
        if p.is_dir():
            names = [str(f.relative_to(p)) for f in p.rglob("*.yaml")]
        elif zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as zf:
                names = zf.namelist()
        else:
            return False
    except (OSError, zipfile.BadZipFile):
        return False
    has_meta = any(n.rsplit("/", 1)[-1] == "metadata.yaml" for n in names)
    return has_meta and any(f"{s}/" in "/" + n for n in names for s in ("dashboards", "charts", "datasets"))


def read_export(path: str) -> SupersetContent:
    """The objects of an export ZIP or folder; a truncated ZIP or a folder without an export is an
    :class:`InputError` naming the file, a YAML file that does not parse is listed in ``unreadable``."""
    p = Path(path)
    if p.is_dir():
        return _content([(str(f.relative_to(p)), f.read_bytes()) for f in sorted(p.rglob("*.yaml"))], path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None
    return read_export_bytes(data, path)


def _zip_reason(exc: Exception) -> str:
    """zipfile's reason, short: a damaged local header is reported with its raw bytes."""
    text = str(exc)
    if text.startswith("File name in directory"):
        return "its local header does not match the ZIP's directory"
    return text if len(text) <= 120 else text[:117] + "..."


def read_export_bytes(data: bytes, path: str) -> SupersetContent:
    """:func:`read_export` of a ZIP's bytes (``path`` names it in messages)."""
    files: list[tuple[str, bytes]] = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if info.is_dir() or not info.filename.endswith((".yaml", ".yml")):
                    continue
                try:
                    files.append((info.filename, zf.read(info)))
                except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
                    raise InputError(
                        f"damaged ZIP: {info.filename}: {_zip_reason(exc)}",
                        file=path,
                        hint="the export is truncated or corrupt; export it again",
                    ) from None
    except zipfile.BadZipFile as exc:
        raise InputError(
            f"not a readable ZIP ({exc})",
            file=path,
            hint="a Superset export is the ZIP `superset export-dashboards` or the dashboard list's "
            "export writes; this one is truncated or corrupt",
        ) from None
    return _content(files, path)


def _content(files: list[tuple[str, bytes]], path: str) -> SupersetContent:
    content = SupersetContent()
    saw_metadata = False
    for name, raw in files:
        parts = name.split("/")
        section = next((s for s in parts[:-1] if s in _SECTIONS), None)
        if parts[-1] == "metadata.yaml":
            saw_metadata = True
            continue
        if section is None:
            continue
        # without the export's top folder (``dashboard_export_<timestamp>``): names stay the same across exports
        inner = "/".join(parts[parts.index(section) :])
        where = f"{path}:{inner}"
        try:
            doc = yaml.load(raw.decode("utf-8"), Loader=_LOADER)  # noqa: S506 - a safe loader
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            content.unreadable.append((where, f"invalid YAML: {first}"))
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("uuid"), str):
            content.unreadable.append((where, f"not a Superset {section[:-1]} (no uuid)"))
            continue
        getattr(content, _SECTIONS[section])[doc["uuid"]] = doc
        content.origin[doc["uuid"]] = where
    if not saw_metadata:
        raise InputError("no metadata.yaml: not a Superset export", file=path)
    return content


def position_chart_uuids(position: Any) -> list[str]:
    """The charts a dashboard's ``position`` (dict or JSON text) places, by uuid, in layout order."""
    if isinstance(position, str):
        try:
            position = json.loads(position)
        except ValueError:
            return []
    if not isinstance(position, dict):
        return []
    out: list[str] = []
    for node in position.values():
        if isinstance(node, dict) and node.get("type") == "CHART":
            meta = node.get("meta") or {}
            uuid = meta.get("uuid")
            if isinstance(uuid, str) and uuid not in out:
                out.append(uuid)
    return out
