"""Glossary files: TOML, YAML, or Atlas's glossary-import CSV, read into one validated model.

TOML / YAML (docs/glossary.md)::

    owner = "data-platform"            # optional; default: the file's name without its suffix
    [[glossary]]
    name = "Sales"
    short_description = "..."
    [[glossary.category]]
    name = "EMEA"
    parent = "Regions"                 # another category of the same glossary, by name
    [[glossary.term]]
    id = "customer"                    # stable id: change `name` and the term is renamed, not replaced
    name = "Customer"
    synonyms = ["Client"]              # a term of the same glossary, or "Term@Glossary"
    see_also = ["Order"]
    replaced_by = ["Account@Finance"]
    categories = ["EMEA"]

The CSV layout is the one ``POST /v2/glossary/import`` reads (``GlossaryTermUtils``): a header line, then
positional columns GlossaryName, TermName, ShortDescription, LongDescription, Examples, Abbreviation, Usage,
AdditionalAttributes, TranslationTerms, ValidValuesFor, Synonyms, ReplacedBy, ValidValues,
ReplacementTerms, SeeAlso, …; lists are ``|``-separated, related terms ``GlossaryName:TermName``,
additional attributes ``key:value``. Its glossaries have no categories; ids are the names.

Validation is strict and complete before anything is sent: every problem names the file and line.
"""

from __future__ import annotations

import csv
import io
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError

# Relations a file can state, as (file key, AtlasGlossaryTerm field, the inverse field on the other term).
RELATIONS: tuple[tuple[str, str, str], ...] = (
    ("synonyms", "synonyms", "synonyms"),
    ("see_also", "seeAlso", "seeAlso"),
    ("replaced_by", "replacedBy", "replacementTerms"),
    ("replacement_terms", "replacementTerms", "replacedBy"),
)
CSV_COLUMNS = (
    "GlossaryName",
    "TermName",
    "ShortDescription",
    "LongDescription",
    "Examples",
    "Abbreviation",
    "Usage",
    "AdditionalAttributes",
    "TranslationTerms",
    "ValidValuesFor",
    "Synonyms",
    "ReplacedBy",
    "ValidValues",
    "ReplacementTerms",
    "SeeAlso",
)
_CSV_RELATIONS = {
    "Synonyms": "synonyms",
    "ReplacedBy": "replaced_by",
    "ReplacementTerms": "replacement_terms",
    "SeeAlso": "see_also",
}
_CSV_UNSUPPORTED = ("TranslationTerms", "ValidValuesFor", "ValidValues")
_GLOSSARY_KEYS = {
    "name",
    "id",
    "short_description",
    "long_description",
    "language",
    "usage",
    "attributes",
    "category",
    "term",
}
_CATEGORY_KEYS = {"name", "id", "parent", "short_description", "long_description", "attributes"}
_TERM_KEYS = {
    "name",
    "id",
    "short_description",
    "long_description",
    "abbreviation",
    "usage",
    "examples",
    "attributes",
    "categories",
    *(r[0] for r in RELATIONS),
}


class GlossaryFileError(InputError):
    """A glossary file that cannot be used; nothing was sent."""


@dataclass
class CategorySpec:
    id: str
    name: str
    line: int | None
    parent: str | None = None  # the parent category's name
    short_description: str | None = None
    long_description: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass
class TermSpec:
    id: str
    name: str
    line: int | None
    short_description: str | None = None
    long_description: str | None = None
    abbreviation: str | None = None
    usage: str | None = None
    examples: list[str] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    categories: list[str] = field(default_factory=list)  # category names of the same glossary
    # AtlasGlossaryTerm field -> (glossary id, term id) of each related term, resolved by validation
    relations: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    raw_relations: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class GlossarySpec:
    id: str
    name: str
    line: int | None
    short_description: str | None = None
    long_description: str | None = None
    language: str | None = None
    usage: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)
    categories: list[CategorySpec] = field(default_factory=list)
    terms: list[TermSpec] = field(default_factory=list)


@dataclass
class GlossaryFile:
    path: str
    owner: str
    glossaries: list[GlossarySpec]

    @property
    def term_count(self) -> int:
        return sum(len(g.terms) for g in self.glossaries)


# ---------------------------------------------------------------------------------------------- lines
class _Lines:
    """Where a ``name`` value sits in a TOML file (tomllib gives no positions): its n-th occurrence."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.seen: dict[str, int] = {}

    def next(self, value: str) -> int | None:
        pattern = re.compile(r"""(^|[\s{,])name\s*=\s*(["'])""" + re.escape(value) + r"""\2""")
        start = self.seen.get(value, 0)
        for i in range(start, len(self.lines)):
            if pattern.search(self.lines[i]):
                self.seen[value] = i + 1
                return i + 1
        return None


def _yaml_load(text: str, path: str) -> Any:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[str, Any]:
        out = loader.construct_mapping(node, deep=True)
        out["__line__"] = node.start_mark.line + 1
        return out

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise GlossaryFileError(
            f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
            file=path,
            line=mark.line + 1 if mark else None,
        ) from None


# ---------------------------------------------------------------------------------------------- loading
def load_glossary_file(path: str | Path) -> GlossaryFile:
    """Read and validate one glossary file (``.toml``, ``.yaml``/``.yml`` or ``.csv``)."""
    p = Path(path)
    name = str(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise GlossaryFileError(f"cannot read the file: {exc.strerror}", file=name) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GlossaryFileError(f"not UTF-8 text (byte {exc.start})", file=name) from None
    suffix = p.suffix.lower()
    if suffix == ".csv":
        return _from_csv(text, name, p.stem)
    if suffix in (".yaml", ".yml"):
        doc = _yaml_load(text, name)
        lines = None
    elif suffix == ".toml":
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            m = re.search(r"line (\d+)", str(exc))
            raise GlossaryFileError(
                f"not valid TOML: {exc}", file=name, line=int(m.group(1)) if m else None
            ) from None
        lines = _Lines(text)
    else:
        raise GlossaryFileError(
            f"unknown glossary file kind {suffix or '(no suffix)'!r}",
            file=name,
            hint="use .toml, .yaml, .yml or .csv",
        )
    return _from_document(doc, name, p.stem, lines)


def _err(path: str, line: int | None, message: str, hint: str | None = None) -> GlossaryFileError:
    return GlossaryFileError(message, file=path, line=line, hint=hint)


def _text(d: dict[str, Any], key: str, path: str, line: int | None, what: str) -> str | None:
    value = d.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _err(path, line, f"{what}: {key} must be a string, not {type(value).__name__}")
    return value


def _strings(d: dict[str, Any], key: str, path: str, line: int | None, what: str) -> list[str]:
    value = d.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise _err(path, line, f"{what}: {key} must be a list of strings")
    return list(value)


def _attributes(d: dict[str, Any], path: str, line: int | None, what: str) -> dict[str, str]:
    value = d.get("attributes")
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(v, str | int | float | bool) for v in value.values()
    ):
        raise _err(path, line, f"{what}: attributes must be a table of plain values")
    return {str(k): str(v) for k, v in value.items() if k != "__line__"}


def _name(d: dict[str, Any], path: str, line: int | None, what: str) -> str:
    name = d.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _err(path, line, f"{what} has no name")
    if "@" in name or "." in name:
        raise _err(path, line, f"{what} {name!r}: Atlas refuses names with '@' or '.'")
    return name


def _check_keys(d: dict[str, Any], allowed: set[str], path: str, line: int | None, what: str) -> None:
    unknown = sorted(k for k in d if k not in allowed and k != "__line__")
    if unknown:
        raise _err(
            path,
            line,
            f"{what}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}",
            hint=f"known: {', '.join(sorted(allowed))}",
        )


def _items(value: Any, path: str, line: int | None, what: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
        raise _err(path, line, f"{what} must be a list of tables")
    return value


def _from_document(doc: Any, path: str, stem: str, lines: _Lines | None) -> GlossaryFile:
    if not isinstance(doc, dict):
        raise _err(path, 1, "the file must be a table with a `glossary` list")
    _check_keys(doc, {"owner", "glossary"}, path, 1, "file")
    owner = doc.get("owner", stem)
    if not isinstance(owner, str) or not owner:
        raise _err(path, 1, "owner must be a non-empty string")

    def where(d: dict[str, Any], name: Any) -> int | None:
        if "__line__" in d:
            return int(d["__line__"])
        return lines.next(name) if lines is not None and isinstance(name, str) else None

    glossaries = []
    for g in _items(doc.get("glossary"), path, 1, "glossary"):
        gline = where(g, g.get("name"))
        gname = _name(g, path, gline, "glossary")
        what = f"glossary {gname!r}"
        _check_keys(g, _GLOSSARY_KEYS, path, gline, what)
        spec = GlossarySpec(
            id=_text(g, "id", path, gline, what) or gname,
            name=gname,
            line=gline,
            short_description=_text(g, "short_description", path, gline, what),
            long_description=_text(g, "long_description", path, gline, what),
            language=_text(g, "language", path, gline, what),
            usage=_text(g, "usage", path, gline, what),
            attributes=_attributes(g, path, gline, what),
        )
        for c in _items(g.get("category"), path, gline, f"{what}: category"):
            cline = where(c, c.get("name"))
            cname = _name(c, path, cline, f"{what}: category")
            cwhat = f"category {gname}/{cname}"
            _check_keys(c, _CATEGORY_KEYS, path, cline, cwhat)
            spec.categories.append(
                CategorySpec(
                    id=_text(c, "id", path, cline, cwhat) or cname,
                    name=cname,
                    line=cline,
                    parent=_text(c, "parent", path, cline, cwhat),
                    short_description=_text(c, "short_description", path, cline, cwhat),
                    long_description=_text(c, "long_description", path, cline, cwhat),
                    attributes=_attributes(c, path, cline, cwhat),
                )
            )
        for t in _items(g.get("term"), path, gline, f"{what}: term"):
            tline = where(t, t.get("name"))
            tname = _name(t, path, tline, f"{what}: term")
            twhat = f"term {gname}/{tname}"
            _check_keys(t, _TERM_KEYS, path, tline, twhat)
            spec.terms.append(
                TermSpec(
                    id=_text(t, "id", path, tline, twhat) or tname,
                    name=tname,
                    line=tline,
                    short_description=_text(t, "short_description", path, tline, twhat),
                    long_description=_text(t, "long_description", path, tline, twhat),
                    abbreviation=_text(t, "abbreviation", path, tline, twhat),
                    usage=_text(t, "usage", path, tline, twhat),
                    examples=_strings(t, "examples", path, tline, twhat),
                    attributes=_attributes(t, path, tline, twhat),
                    categories=_strings(t, "categories", path, tline, twhat),
                    raw_relations={key: _strings(t, key, path, tline, twhat) for key, _, _ in RELATIONS},
                )
            )
        glossaries.append(spec)
    out = GlossaryFile(path=path, owner=owner, glossaries=glossaries)
    validate(out)
    return out


def _from_csv(text: str, path: str, stem: str) -> GlossaryFile:
    reader = csv.reader(io.StringIO(text))
    by_name: dict[str, GlossarySpec] = {}
    header_seen = False
    for row in reader:
        line = reader.line_num
        if not header_seen:  # FileUtils.readCSV skips the first line, whatever it holds
            header_seen = True
            continue
        if len(row) <= 1:  # ... and rows of one field
            continue
        cells = dict(zip(CSV_COLUMNS, [c.strip() for c in row], strict=False))
        gname = cells.get("GlossaryName") or ""
        if not gname:
            raise _err(path, line, "the GlossaryName column is empty")
        tname = cells.get("TermName") or ""
        if not tname:
            raise _err(path, line, "the TermName column is empty")
        for col in _CSV_UNSUPPORTED:
            if cells.get(col):
                raise _err(
                    path, line, f"term {gname}/{tname}: column {col} is not supported by atlas-sync glossary"
                )
        if len(row) > len(CSV_COLUMNS) and any(c.strip() for c in row[len(CSV_COLUMNS) :]):
            raise _err(path, line, f"term {gname}/{tname}: relation columns after SeeAlso are not supported")
        attrs: dict[str, str] = {}
        for pair in filter(None, (cells.get("AdditionalAttributes") or "").split("|")):
            k, sep, v = pair.partition(":")
            if not sep or ":" in v:
                raise _err(
                    path, line, f"term {gname}/{tname}: AdditionalAttributes entry {pair!r} is not key:value"
                )
            attrs[k] = v
        rels: dict[str, list[str]] = {}
        for col, key in _CSV_RELATIONS.items():
            refs = []
            for ref in filter(None, (cells.get(col) or "").split("|")):
                g, sep, t = ref.partition(":")
                if not sep or not g or not t:
                    raise _err(
                        path, line, f"term {gname}/{tname}: {col} entry {ref!r} is not GlossaryName:TermName"
                    )
                refs.append(f"{t}@{g}")
            rels[key] = refs
        for name, what in ((gname, "glossary"), (tname, "term")):
            if "@" in name or "." in name:
                raise _err(path, line, f"{what} {name!r}: Atlas refuses names with '@' or '.'")
        spec = by_name.setdefault(gname, GlossarySpec(id=gname, name=gname, line=line))
        spec.terms.append(
            TermSpec(
                id=tname,
                name=tname,
                line=line,
                short_description=cells.get("ShortDescription") or None,
                long_description=cells.get("LongDescription") or None,
                abbreviation=cells.get("Abbreviation") or None,
                usage=cells.get("Usage") or None,
                examples=[x for x in (cells.get("Examples") or "").split("|") if x],
                attributes=attrs,
                raw_relations=rels,
            )
        )
    out = GlossaryFile(path=path, owner=stem, glossaries=list(by_name.values()))
    validate(out)
    return out


# ---------------------------------------------------------------------------------------------- validate
def validate(spec: GlossaryFile) -> None:
    """Duplicates, category parents and cycles, term categories, related terms: the first problem found
    raises :class:`GlossaryFileError` with the file and line; on success relations are resolved."""
    path = spec.path
    if not spec.glossaries:
        raise _err(path, 1, "the file defines no glossary")
    by_id: dict[str, GlossarySpec] = {}
    by_name: dict[str, GlossarySpec] = {}
    for g in spec.glossaries:
        for key, index, what in ((g.id, by_id, "id"), (g.name, by_name, "name")):
            if key in index:
                raise _err(
                    path, g.line, f"duplicate glossary {what} {key!r} (first at line {index[key].line})"
                )
            index[key] = g
    for g in spec.glossaries:
        cats: dict[str, CategorySpec] = {}
        cat_ids: set[str] = set()
        for c in g.categories:
            if c.name in cats or c.id in cat_ids:
                raise _err(path, c.line, f"duplicate category {g.name}/{c.name}")
            cats[c.name] = c
            cat_ids.add(c.id)
        for c in g.categories:
            if c.parent is not None and c.parent not in cats:
                raise _err(path, c.line, f"category {g.name}/{c.name}: unknown parent category {c.parent!r}")
        for c in g.categories:
            seen = [c.name]
            p = c.parent
            while p is not None:
                if p in seen:
                    chain = " -> ".join([*seen, p])
                    raise _err(path, c.line, f"category {g.name}/{c.name}: a cycle of categories ({chain})")
                seen.append(p)
                p = cats[p].parent
        names: dict[str, TermSpec] = {}
        ids: dict[str, TermSpec] = {}
        for t in g.terms:
            if t.name in names:
                raise _err(
                    path, t.line, f"duplicate term {g.name}/{t.name} (first at line {names[t.name].line})"
                )
            if t.id in ids:
                raise _err(
                    path,
                    t.line,
                    f"duplicate term id {t.id!r} in glossary {g.name} (first at line {ids[t.id].line})",
                )
            names[t.name] = ids[t.id] = t
            for cname in t.categories:
                if cname not in cats:
                    raise _err(path, t.line, f"term {g.name}/{t.name}: unknown category {cname!r}")
    for g in spec.glossaries:
        for t in g.terms:
            t.relations = {}
            for key, field_name, _ in RELATIONS:
                resolved = []
                for ref in t.raw_relations.get(key, []):
                    target = _resolve(ref, g, by_name)
                    if target is None:
                        raise _err(
                            path,
                            t.line,
                            f"term {g.name}/{t.name}: unknown related term {ref!r} in {key}",
                            hint="name a term of this file: 'Term' (same glossary) or 'Term@Glossary'",
                        )
                    if target == (g.id, t.id):
                        raise _err(path, t.line, f"term {g.name}/{t.name}: relates to itself in {key}")
                    resolved.append(target)
                if resolved:
                    t.relations[field_name] = list(dict.fromkeys(resolved))


def _resolve(ref: str, here: GlossarySpec, by_name: dict[str, GlossarySpec]) -> tuple[str, str] | None:
    term, sep, gname = ref.rpartition("@")
    g = by_name.get(gname) if sep else here
    if not sep:
        term = ref
    if g is None:
        return None
    for t in g.terms:
        if t.name == term:
            return (g.id, t.id)
    return None
