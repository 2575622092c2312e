"""OpenLineage dataset naming -> atlas-sync dataset identity.

OpenLineage names a dataset by ``namespace`` (where it lives: ``postgres://host:5432``,
``hive://metastore:9083``, ``s3://bucket``, ``file``, ``kafka://broker:9092``) and ``name`` (what it
is there: ``db.schema.table``, ``db.table``, an object key, a path, a topic). atlas-sync names tables
the way Atlas's own hooks do (``db.table``) and files by their URI, so by default:

* database namespaces (any ``scheme://authority``) drop the namespace: the dataset id is the name;
* storage namespaces (``s3``, ``s3a``, ``gs``, ``hdfs``, ``abfss``, ``file``, ...) become file datasets
  whose id is the URI ``<namespace>/<name>`` (``file`` + ``/tmp/x`` -> ``file:///tmp/x``);
* ``kafka://...`` namespaces become topic datasets named by the topic.

A namespace map (reader option ``namespace_map``) overrides this per namespace: a value is the
metadata namespace to put in front of table names (``"pg_prod"`` turns ``db.schema.t`` into
``pg_prod.db.schema.t``; ``""`` keeps the plain name) or, for storage namespaces, the URI prefix to use
instead (``"s3a://bucket" = "s3://bucket"``). Keys are exact namespaces or ``fnmatch`` patterns
(``"postgres://*"``); the exact key wins, then the longest matching pattern.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import dotted, split_dotted

# Object stores and file systems: datasets there are files named by URI.
FILE_SCHEMES = frozenset(
    {
        "file",
        "s3",
        "s3a",
        "s3n",
        "gs",
        "gcs",
        "hdfs",
        "viewfs",
        "abfs",
        "abfss",
        "wasb",
        "wasbs",
        "adl",
        "dbfs",
        "oss",
        "cos",
        "obs",
        "webhdfs",
    }
)
TOPIC_SCHEMES = frozenset({"kafka", "pulsar", "kinesis", "pubsub"})


@dataclass(frozen=True)
class Identity:
    """Where an OpenLineage dataset lands in the graph."""

    id: str
    namespace: str
    name: str
    kind: str


def _scheme(namespace: str) -> str:
    if "://" in namespace:
        return namespace.split("://", 1)[0].lower()
    return namespace.lower()


@dataclass
class NamespaceMap:
    """OpenLineage namespace -> metadata namespace (see the module docs for the rules)."""

    entries: dict[str, str] = field(default_factory=dict)

    def lookup(self, namespace: str) -> str | None:
        if namespace in self.entries:
            return self.entries[namespace]
        best: str | None = None
        for pattern in self.entries:
            if fnmatch.fnmatchcase(namespace, pattern) and (best is None or len(pattern) > len(best)):
                best = pattern
        return self.entries[best] if best is not None else None

    def identity(self, namespace: str, name: str) -> Identity:
        """The dataset identity of OpenLineage ``namespace`` + ``name``."""
        scheme = _scheme(namespace)
        mapped = self.lookup(namespace)
        if scheme in FILE_SCHEMES:
            base = namespace if mapped is None else mapped
            if base == "file" or base == "file:":
                uri = "file://" + (name if name.startswith("/") else "/" + name)
            else:
                uri = base.rstrip("/") + "/" + name.lstrip("/")
            parent, _, leaf = uri.rstrip("/").rpartition("/")
            return Identity(id=uri, namespace=parent, name=leaf or uri, kind="file")
        if scheme in TOPIC_SCHEMES:
            ident = dotted(mapped, name) if mapped else name
            return Identity(id=ident, namespace=mapped or "", name=name, kind="topic")
        parts = [p for p in split_dotted(name) if p != ""] or [name]
        if mapped:
            parts = [*split_dotted(mapped), *parts]
        ident = dotted(*parts)
        return Identity(id=ident, namespace=dotted(*parts[:-1]), name=parts[-1], kind="table")


def load_namespace_map(value: NamespaceMap | Mapping[str, Any] | str | Path | None) -> NamespaceMap:
    """A :class:`NamespaceMap` from a dict, or a TOML/JSON file (top level or a ``[namespaces]`` table)."""
    if value is None:
        return NamespaceMap()
    if isinstance(value, NamespaceMap):
        return value
    source = None
    if isinstance(value, str | Path):
        source = str(value)
        path = Path(value)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot read namespace map: {exc.strerror}", file=source) from None
        try:
            data: Any = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", file=source, line=exc.lineno) from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"invalid TOML: {exc}", file=source) from None
    else:
        data = value
    if isinstance(data, Mapping) and isinstance(data.get("namespaces"), Mapping):
        data = data["namespaces"]
    if not isinstance(data, Mapping):
        raise InputError("a namespace map must be a table of namespace = metadata namespace", file=source)
    entries: dict[str, str] = {}
    for k, v in data.items():
        if not isinstance(v, str):
            raise InputError(
                f"namespace map value for {k!r} must be a string, not {type(v).__name__}",
                file=source,
                hint='e.g. "postgres://db1:5432" = "pg_prod"',
            )
        entries[str(k)] = v
    return NamespaceMap(entries)
