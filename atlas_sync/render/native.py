"""A profile's mapping table: which Atlas type, qualifiedName and attributes each dataset and process gets.

The table is data (``mapping.toml`` in the profile folder, see ``docs/existing-atlas.md``): ``[[dataset]]`` and
``[[process]]`` rules, the first whose ``when`` holds wins. Every value in a rule is a Jinja *expression*
compiled in the profile's sandbox (``"(db ~ '.' ~ table) | lower ~ '@' ~ ns"``); a rule may name a
``container`` entity (``hive_db`` of a ``hive_table``, ``aws_s3_v2_bucket`` of a directory,
``spark_application`` of a ``spark_process``) and the ``column`` type of its columns.

The facts the expressions see are computed here the same way for every rule: ``uri`` (scheme, authority,
path of a dataset named by URI), ``source`` (the namespace the reader saw: an OpenLineage dataset namespace,
a SeaTunnel connection, else the URI), ``db`` / ``table`` / ``catalog`` (the parts of a dotted table name),
``ns`` (the metadata namespace for the dataset: the per-source map, else the default).
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2

from atlas_sync.errors import ConfigError
from atlas_sync.lineage.model import split_dotted
from atlas_sync.render.names import process_display_name

DEFAULT_METADATA_NAMESPACE = "primary"  # Atlas's default atlas.metadata.namespace (HiveMetaStoreBridge)
# Spark's and Hive's default catalogs: a table there is `db.table` in the Hive metastore
DEFAULT_CATALOGS = frozenset({"spark_catalog", "hive", "hive_metastore"})


@dataclass
class Rule:
    kind: str  # "dataset" or "process"
    index: int
    when: Any
    fields: dict[str, Any]
    source: dict[str, Any]

    @property
    def where(self) -> str:
        return f"mapping.toml [[{self.kind}]] #{self.index + 1}"


@dataclass
class NativeMapping:
    """A profile's compiled mapping rules."""

    datasets: list[Rule] = field(default_factory=list)
    processes: list[Rule] = field(default_factory=list)
    # process type -> compiled column-lineage rule ([column_lineage.<process type>])
    column_lineage: dict[str, dict[str, Any]] = field(default_factory=dict)
    raw_column_lineage: dict[str, dict[str, Any]] = field(default_factory=dict)

    def types(self) -> set[str]:
        """Every entity type the rules can produce (the profile's scope)."""
        out: set[str] = set()
        for rule in (*self.datasets, *self.processes):
            for key in ("type", "column_type", "column_lineage_type"):
                v = rule.source.get(key)
                if isinstance(v, str):
                    out.add(_literal(v))
            tables = [rule.source.get("column"), rule.source.get("container")]
            while tables:
                table = tables.pop()
                if isinstance(table, dict) and isinstance(table.get("type"), str):
                    out.add(_literal(table["type"]))
                    tables.append(table.get("container"))  # (a container's own container)
        for raw in self.raw_column_lineage.values():
            if isinstance(raw.get("type"), str):
                out.add(_literal(raw["type"]))
        out.discard("")
        return out


def _literal(expr: str) -> str:
    """The type named by a quoted-string expression (``"'hive_table'"`` -> ``hive_table``), else ``""``."""
    e = expr.strip()
    if len(e) >= 2 and e[0] == e[-1] and e[0] in "'\"" and e[0] not in e[1:-1]:
        return e[1:-1]
    return ""


def load_mapping(path: Path, env: jinja2.Environment) -> NativeMapping:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    out = NativeMapping()
    for kind, target in (("dataset", out.datasets), ("process", out.processes)):
        for i, raw in enumerate(doc.get(kind) or []):
            if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
                raise ConfigError(f"{path}: [[{kind}]] #{i + 1} needs a type expression")
            where = f"{path.name} [[{kind}]] #{i + 1}"
            target.append(
                Rule(
                    kind,
                    i,
                    _compile(env, str(raw.get("when", "true")), where),
                    _compile_all(env, raw, where),
                    raw,
                )
            )
    for proc_type, raw in (doc.get("column_lineage") or {}).items():
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise ConfigError(f"{path}: [column_lineage.{proc_type}] needs a type expression")
        out.column_lineage[proc_type] = _compile_all(env, raw, f"{path.name} [column_lineage.{proc_type}]")
        out.raw_column_lineage[proc_type] = raw
    if not out.datasets or not out.processes:
        raise ConfigError(f"{path}: needs at least one [[dataset]] and one [[process]] rule")
    return out


def _compile(env: jinja2.Environment, expr: str, where: str) -> Any:
    try:
        return env.compile_expression(expr, undefined_to_none=False)
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"{where}: invalid expression {expr!r}: {exc.message}") from None


def _compile_all(env: jinja2.Environment, raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in raw.items():
        if k == "when":
            continue
        if isinstance(v, str):
            out[k] = _compile(env, v, f"{where} {k}")
        elif isinstance(v, dict):
            out[k] = _compile_all(env, v, f"{where} {k}")
        else:
            out[k] = v
    return out


def _evaluate(compiled: Any, ctx: Mapping[str, Any]) -> Any:
    if isinstance(compiled, dict):
        return {k: _evaluate(v, ctx) for k, v in compiled.items()}
    if callable(compiled):
        return compiled(**ctx)
    return compiled


def first_match(rules: list[Rule], ctx: Mapping[str, Any]) -> tuple[Rule, dict[str, Any]] | None:
    """The first rule whose ``when`` holds and its evaluated fields, except ``column`` (evaluated per column)."""
    for rule in rules:
        if rule.when(**ctx):
            return rule, {k: _evaluate(v, ctx) for k, v in rule.fields.items() if k != "column"}
    return None


def evaluate(compiled: Any, ctx: Mapping[str, Any]) -> Any:
    """Evaluate a compiled sub-table (a rule's ``column``) in ``ctx``."""
    return _evaluate(compiled, ctx)


_LABEL_CHARS = re.compile(r"[^A-Za-z0-9_-]")
LABEL_MAX = 50  # Atlas's atlas.entity.label.max.length default
OWNER_LABEL = "atlas-sync"
DOMAIN_LABEL = "atlas-sync-d_"
JOB_LABEL = "atlas-sync-j_"


DOMAIN_HINT = (
    "a domain ends every qualified name (`db.table@<domain>`): a non-empty name without '@', "
    "control characters (tabs, newlines) or blanks at either end"
)


def valid_domain(domain: str) -> bool:
    """Whether ``domain`` can end qualified names: ``@`` would make ``<name>@<domain>`` ambiguous,
    a control character breaks every one-line message naming it, and blanks at an end make a second
    domain that looks like the first. (A blank inside is fine: Atlas 2.1.0's searches, index and
    in-memory, match such names exactly.)"""
    return bool(domain) and "@" not in domain and domain == domain.strip() and domain.isprintable()


def label_for(prefix: str, value: str) -> str:
    """``<prefix><value>`` as an Atlas label (letters, digits, ``_``, ``-``, at most 50 characters): other
    characters become ``-`` and a changed or shortened value gets 8 hex digits of its SHA-256, so two names
    never share a label."""
    import hashlib

    clean = _LABEL_CHARS.sub("-", value)
    label = prefix + clean
    if clean == value and len(label) <= LABEL_MAX:
        return label
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]
    return f"{label[: LABEL_MAX - 9]}_{digest}"


def ownership_labels(domain: str, job: str) -> list[str]:
    """The labels atlas-sync writes on what it creates with a native profile (docs/existing-atlas.md)."""
    return [OWNER_LABEL, label_for(DOMAIN_LABEL, domain), label_for(JOB_LABEL, job)]


@dataclass
class Namespaces:
    """The metadata namespace of a dataset: ``by_source`` (exact key or ``fnmatch`` pattern, the longest
    pattern wins) looked up with the dataset's source namespace, else ``default``."""

    default: str = DEFAULT_METADATA_NAMESPACE
    by_source: dict[str, str] = field(default_factory=dict)

    def lookup(self, source: str) -> str:
        if not source:
            return self.default
        if source in self.by_source:
            return self.by_source[source]
        best = None
        for pattern in self.by_source:
            if fnmatch.fnmatchcase(source, pattern) and (best is None or len(pattern) > len(best)):
                best = pattern
        return self.by_source[best] if best is not None else self.default


def dataset_facts(dataset: Mapping[str, Any], namespaces: Namespaces) -> dict[str, Any]:
    """What the mapping rules of a dataset see besides the dataset itself."""
    ident = str(dataset.get("id") or "")
    facets = dataset.get("facets") or {}
    ol: Mapping[str, Any] = facets["openlineage"] if isinstance(facets.get("openlineage"), dict) else {}
    source = str(ol.get("namespace") or facets.get("connection") or "")
    uri = _uri(ident)
    if not source and uri["scheme"]:
        source = f"{uri['scheme']}://{uri['authority']}" if uri["authority"] else uri["scheme"]
    source_scheme = source.split("://", 1)[0].split(":", 1)[0].lower() if source else ""
    parts = [p for p in split_dotted(ident) if p] if not uri["scheme"] else []
    catalog = parts[-3] if len(parts) >= 3 else ""
    return {
        "uri": uri,
        "source": source,
        "source_scheme": source_scheme,
        "parts": parts,
        "catalog": "" if catalog.lower() in DEFAULT_CATALOGS else catalog,
        "db": parts[-2] if len(parts) >= 2 else "default",
        "table": parts[-1] if parts else str(dataset.get("name") or ident),
        "ns": namespaces.lookup(source),
    }


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")


def _uri(ident: str) -> dict[str, Any]:
    """Scheme, authority and path of a dataset id that is a URI (``hdfs://nn:8020/p``, ``file:/tmp/x``);
    ids such as ``unknown:cars/source`` (a reader's placeholder) are not URIs."""
    if not _URI.match(ident):
        return {"scheme": "", "authority": "", "path": "", "text": ident, "segments": []}
    parts = urlsplit(ident)
    path = parts.path or "/"
    return {
        "scheme": parts.scheme.lower(),
        "authority": parts.netloc,
        "path": path,
        "text": ident,
        "segments": [s for s in path.split("/") if s],
    }


def _ref(type_name: str, qualified_name: str) -> dict[str, Any]:
    return {"typeName": type_name, "uniqueAttributes": {"qualifiedName": qualified_name}}


def _clean(attrs: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attrs.items() if v is not None}


class NativeRender:
    """What a native profile's templates call (``native.dataset(dataset)``, ...) during one render: entity
    documents built from the mapping rules, with the ownership labels of ``domain`` / ``job``.

    Datasets, their containers and columns are ``shared``: one that exists in Atlas and carries no
    atlas-sync label is referenced, never written (docs/existing-atlas.md)."""

    def __init__(self, mapping: NativeMapping, namespaces: Namespaces, *, domain: str, job: str) -> None:
        self._mapping = mapping
        self._ns = namespaces
        self._domain = domain
        self._job = job
        self.labels = ownership_labels(domain, job)
        self._columns: dict[str, tuple[Rule, dict[str, Any]]] = {}

    def _base(self) -> dict[str, Any]:
        return {"job": self._job, "domain": self._domain}

    def _with_container(
        self, main: dict[str, Any], container: Mapping[str, Any] | None, *, shared: bool
    ) -> list[dict[str, Any]]:
        """``main`` and, when the mapping names one, the container it needs (a hive_table's hive_db),
        ``main`` pointing at it through the container relation; a container may have its own (an
        rdbms_table's rdbms_db in its rdbms_instance)."""
        docs = [main]
        if container:
            cqn = str(container["qualified_name"])
            doc: dict[str, Any] = {
                "typeName": container["type"],
                "attributes": _clean({"qualifiedName": cqn, **(container.get("attributes") or {})}),
                "labels": self.labels,
            }
            if shared:
                doc["shared"] = True
            docs.extend(self._with_container(doc, container.get("container"), shared=shared))
            main["relationshipAttributes"] = {container["relation"]: _ref(container["type"], cqn)}
        return docs

    def dataset(self, dataset: Mapping[str, Any], members: list[Any] | None = None) -> list[dict[str, Any]]:
        """The dataset's entity (and container); ``members``: references to what it contains (a dashboard's
        charts), set on the relationship attribute the rule's ``members`` names."""
        ctx = {**self._base(), "dataset": dataset, **dataset_facts(dataset, self._ns)}
        found = first_match(self._mapping.datasets, ctx)
        if found is None:
            raise ConfigError(f"mapping.toml: no [[dataset]] rule matches dataset {dataset.get('id')!r}")
        rule, m = found
        qn = str(m["qualified_name"])
        main: dict[str, Any] = {
            "typeName": m["type"],
            "attributes": _clean({"qualifiedName": qn, "name": m.get("name"), **(m.get("attributes") or {})}),
            "labels": self.labels,
            "shared": True,
        }
        docs = self._with_container(main, m.get("container"), shared=True)
        if m.get("members"):
            main.setdefault("relationshipAttributes", {})[str(m["members"])] = list(members or [])
        self._columns[str(dataset.get("id"))] = (rule, {**ctx, "table_qualified_name": qn})
        return docs

    def column(
        self, dataset: Mapping[str, Any], column: Mapping[str, Any], position: int, dataset_ref: Any
    ) -> Any:
        """The column entity, or ``None`` when the dataset's type has no columns in Atlas's model."""
        rule, ctx = self._columns[str(dataset.get("id"))]
        compiled = rule.fields.get("column")
        if not compiled:
            return None
        c = evaluate(compiled, {**ctx, "column": column, "position": position})
        return {
            "typeName": c["type"],
            "attributes": _clean({"qualifiedName": c["qualified_name"], **(c.get("attributes") or {})}),
            "relationshipAttributes": {c["relation"]: dataset_ref},
            "labels": self.labels,
            "shared": True,
        }

    def process(
        self,
        process: Mapping[str, Any],
        inputs: list[Any],
        outputs: list[Any],
        single_process: bool,
        source: str,
    ) -> list[dict[str, Any]]:
        pid, job = str(process.get("id")), self._job
        # as the lineage profile: the renderer's name for it (model.process_local_name); else the rule
        # it follows for a process the reader named after the job
        local = str(
            process.get("local_name") or (pid if pid == job or pid.startswith(job + ":") else f"{job}:{pid}")
        )
        ctx = {
            **self._base(),
            "process": process,
            "source": source,
            "local": local,
            "display_name": process_display_name(process, job),
            "ns": self._ns.default,
            "inputs": inputs,
            "outputs": outputs,
        }
        found = first_match(self._mapping.processes, ctx)
        if found is None:
            raise ConfigError(f"mapping.toml: no [[process]] rule matches process {pid!r}")
        _, m = found
        main: dict[str, Any] = {
            "typeName": m["type"],
            "attributes": _clean(
                {
                    "qualifiedName": m["qualified_name"],
                    "name": m.get("name"),
                    **(m.get("attributes") or {}),
                    "inputs": inputs,
                    "outputs": outputs,
                }
            ),
            "labels": self.labels,
        }
        docs = self._with_container(main, m.get("container"), shared=False)
        return docs

    def column_lineage(self, context: Mapping[str, Any]) -> Any:
        """The column-lineage entity of a process's target column, or ``None`` when the mapping has none for
        the process's type."""
        proc = context["process_ref"]
        compiled = self._mapping.column_lineage.get(proc["typeName"])
        if compiled is None or not context["inputs"]:
            return None  # no column-lineage type, or no source column has an entity in Atlas's model
        # the target column, or the dataset of a `*` target (whose outputs are the columns written)
        target_ref = context.get("target_ref") or next(iter(context["outputs"]), None)
        if target_ref is None:
            return None
        target_qn = target_ref["uniqueAttributes"]["qualifiedName"]
        ctx = {
            **self._base(),
            **context,
            "process_qualified_name": proc["uniqueAttributes"]["qualifiedName"],
            "target_qualified_name": target_qn,
            "target_local": target_qn.rsplit("@", 1)[0],
            "ns": self._ns.default,
        }
        c = evaluate(compiled, ctx)
        doc: dict[str, Any] = {
            "typeName": c["type"],
            "attributes": _clean(
                {
                    "qualifiedName": c["qualified_name"],
                    "name": c.get("name"),
                    **(c.get("attributes") or {}),
                    "inputs": context["inputs"],
                    "outputs": context["outputs"],
                }
            ),
            "labels": self.labels,
        }
        if c.get("relation"):
            doc["relationshipAttributes"] = {c["relation"]: proc}
        return doc
