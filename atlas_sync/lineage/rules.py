"""Metadata rules: a TOML file that adds classifications, glossary terms, owners, labels and business
attributes to the datasets, columns and processes of a graph, matched by name pattern or by a tag the
reader found (DataHub's pattern transformers, declaratively). See docs/metadata.md.

```toml
[[rules]]
columns = ["raw.customers.email", "*.*.ssn"]   # globs on db.table.column; `datasets` / `processes` likewise
classifications = [{ name = "PII", propagate = true }]
terms = ["Customer Email@Glossary"]
owners = ["data-stewards"]
```

Parsing checks the file's shape (unknown keys, bad patterns, wrong types); :func:`check_names` checks
the names it uses against the types Atlas (or the profile's typedef bundles) define. Both raise an
:class:`InputError` naming the file, the rule and its line, before anything is sent.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas_sync.errors import InputError
from atlas_sync.lineage.model import (
    Classification,
    Column,
    Dataset,
    LineageGraph,
    Process,
    add_metadata,
    merge_business,
)

_MATCH_KEYS = ("datasets", "columns", "processes", "tagged")
_ADD_KEYS = ("classifications", "terms", "owners", "labels", "business")
_RULE_KEYS = frozenset({"name", "foreign", *_MATCH_KEYS, *_ADD_KEYS})
_CLASSIFICATION_KEYS = frozenset({"name", "propagate", "attributes"})
# Atlas's rules for the names (AtlasTypeUtil.isValidTypeName, EntityGraphMapper.LABEL_REGEX / max length)
_TYPE_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_ .-]*$")
_LABEL = re.compile(r"^[a-zA-Z0-9_-]{1,50}$")
REGEX_PREFIX = "re:"


@dataclass(frozen=True)
class Pattern:
    """A glob (``fnmatch``: ``*`` also crosses dots) or, prefixed ``re:``, a regular expression that
    must match the whole name; both case-insensitive (SQL names are)."""

    text: str
    regex: re.Pattern[str]

    def matches(self, name: str) -> bool:
        return self.regex.fullmatch(name) is not None


@dataclass
class Rule:
    index: int  # 1-based position in the file
    line: int | None
    name: str
    datasets: list[Pattern] = field(default_factory=list)
    columns: list[Pattern] = field(default_factory=list)
    processes: list[Pattern] = field(default_factory=list)
    tagged: list[str] = field(default_factory=list)
    classifications: list[Classification] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    owners: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    business: dict[str, dict[str, Any]] = field(default_factory=dict)
    # under the atlas profile: what the rule adds also goes on datasets and columns another tool
    # created (a Hive hook's tables), not only on atlas-sync's own
    foreign: bool = False

    @property
    def where(self) -> str:
        return f"rule {self.index}" + (f" ({self.name})" if self.name else "")

    def _tag_ok(self, tags: Iterable[str]) -> bool:
        if not self.tagged:
            return True
        have = {t.lower() for t in tags}
        return any(t.lower() in have for t in self.tagged)

    def _named(self, patterns: list[Pattern], name: str, other_patterns: bool) -> bool:
        if patterns:
            return any(p.matches(name) for p in patterns)
        # a rule with only `tagged` matches every tagged item; one with patterns only what they name
        return bool(self.tagged) and not other_patterns

    @property
    def _has_patterns(self) -> bool:
        return bool(self.datasets or self.columns or self.processes)

    def matches_dataset(self, d: Dataset) -> bool:
        return self._named(self.datasets, d.id, self._has_patterns) and self._tag_ok(d.tags)

    def matches_column(self, d: Dataset, c: Column) -> bool:
        return self._named(self.columns, f"{d.id}.{c.name}", self._has_patterns) and self._tag_ok(c.tags)

    def matches_process(self, p: Process) -> bool:
        return self._named(self.processes, p.id, self._has_patterns) and self._tag_ok(p.tags)

    def error(self, file: str, message: str) -> InputError:
        return InputError(f"{self.where}: {message}", file=file, line=self.line)


@dataclass
class MetadataRules:
    file: str
    rules: list[Rule] = field(default_factory=list)

    def classification_names(self) -> set[str]:
        return {c.name for r in self.rules for c in r.classifications}

    @property
    def foreign(self) -> list[Rule]:
        """The rules that also tag entities another tool created (``foreign = true``)."""
        return [r for r in self.rules if r.foreign]

    def apply(self, graph: LineageGraph, matched: set[int] | None = None) -> int:
        """Add what the rules say to the matching items of ``graph`` (in place); how many rule
        applications changed an item. ``matched`` collects the indexes of the rules that matched
        an item (see :meth:`unmatched`)."""
        hits = 0
        for rule in self.rules:
            n = 0
            for d in graph.datasets:
                if rule.matches_dataset(d):
                    n += 1
                    hits += _add(d, rule)
                    if rule.foreign:
                        d.foreign_metadata = _add_foreign(d.foreign_metadata, rule)
                for c in d.columns:
                    if rule.matches_column(d, c):
                        n += 1
                        hits += _add(c, rule)
                        if rule.foreign:
                            c.foreign_metadata = _add_foreign(c.foreign_metadata, rule)
            for p in graph.processes:
                if rule.matches_process(p):
                    n += 1
                    hits += _add(p, rule)
            if n and matched is not None:
                matched.add(rule.index)
        return hits

    def unmatched(self, matched: Collection[int]) -> list[str]:
        """A warning for each rule not in ``matched``: it matched nothing (a typo in a pattern, or
        a tag no reader found) and added nothing."""
        return [
            f"metadata rules {self.file}: {r.where}"
            + (f" (line {r.line})" if r.line else "")
            + " matches nothing in the input"
            for r in self.rules
            if r.index not in matched
        ]


def _add(item: Dataset | Column | Process, rule: Rule) -> int:
    # one classification of a name per entity (Atlas refuses a second): the first rule wins
    named = {x.name for x in item.classifications}
    changed = add_metadata(item, "classifications", [c for c in rule.classifications if c.name not in named])
    for name in ("terms", "owners", "labels"):
        changed = add_metadata(item, name, getattr(rule, name)) or changed
    if rule.business:
        changed = merge_business(item, rule.business) or changed
    return int(changed)


def _add_foreign(doc: dict[str, Any] | None, rule: Rule) -> dict[str, Any]:
    """``doc`` (render.metadata's document shape) with what ``rule`` adds, as :func:`_add` adds it: a
    classification given by an earlier rule wins, lists are unions, earlier business attributes stay."""
    out = dict(doc or {})
    have = {c["typeName"] for c in out.get("classifications") or []}
    added = [
        {
            "typeName": c.name,
            "attributes": dict(c.attributes),
            **({"propagate": c.propagate} if c.propagate is not None else {}),
        }
        for c in rule.classifications
        if c.name not in have
    ]
    if added:
        out["classifications"] = sorted(
            [*out.get("classifications", []), *added], key=lambda c: c["typeName"]
        )
    for key, values in (("labels", rule.labels), ("terms", rule.terms)):
        if values:
            out[key] = sorted({*out.get(key, []), *values})
    for bm, attrs in rule.business.items():
        merged = out.setdefault("business", {}).setdefault(bm, {})
        for attr, value in attrs.items():
            merged.setdefault(attr, value)
    return out


# ------------------------------------------------------------------------------------------ parsing
def load_rules(path: str | Path) -> MetadataRules:
    """Read and check a rules file (its shape; names are checked by :func:`check_names`)."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the metadata rules file: {exc}", file=file) from exc
    return parse_rules(text, file=file)


def parse_rules(text: str, *, file: str = "<rules>") -> MetadataRules:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # (``lineno`` from Python 3.14; before, the message ends with "(at line N, column M)")
        found = re.search(r"\(at line (\d+), column (\d+)\)$", str(exc))
        line = getattr(exc, "lineno", None) or (int(found.group(1)) if found else None)
        text = re.sub(r" \(at line \d+, column \d+\)$", "", str(exc))
        raise InputError(f"not a valid TOML file: {text}", file=file, line=line) from exc
    unknown = sorted(set(doc) - {"rules"})
    if unknown:
        raise InputError(
            f"unknown top-level key {unknown[0]!r} (a rules file holds [[rules]] tables)", file=file, line=1
        )
    items = doc.get("rules", [])
    if not isinstance(items, list) or not all(isinstance(r, dict) for r in items):
        raise InputError("'rules' must be an array of tables ([[rules]])", file=file)
    lines = _rule_lines(text)
    out = MetadataRules(file=file)
    for i, raw in enumerate(items, start=1):
        out.rules.append(_parse_rule(raw, i, lines[i - 1] if i - 1 < len(lines) else None, file))
    return out


def _rule_lines(text: str) -> list[int | None]:
    """The line of each ``[[rules]]`` header (or inline array entry), in order."""
    found: list[int | None] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if re.match(r"^\s*\[\[\s*rules\s*\]\]", line):
            found.append(n)
    return found


def _parse_rule(raw: dict[str, Any], index: int, line: int | None, file: str) -> Rule:
    name = raw.get("name", "")
    rule = Rule(index=index, line=line, name=name if isinstance(name, str) else "")
    unknown = sorted(set(raw) - _RULE_KEYS)
    if unknown:
        raise rule.error(
            file, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_RULE_KEYS - {'name'}))})"
        )
    if not isinstance(name, str):
        raise rule.error(file, "'name' must be a string")
    for key in ("datasets", "columns", "processes"):
        setattr(rule, key, [_pattern(p, key, rule, file) for p in _strings(raw, key, rule, file)])
    rule.tagged = _strings(raw, "tagged", rule, file)
    if not (rule.datasets or rule.columns or rule.processes or rule.tagged):
        raise rule.error(file, "matches nothing: give datasets, columns, processes or tagged")
    rule.classifications = _classifications(raw.get("classifications", []), rule, file)
    rule.terms = _strings(raw, "terms", rule, file)
    for t in rule.terms:
        if "@" not in t.strip("@"):
            raise rule.error(file, f"term {t!r} is not of the form 'term@glossary'")
    rule.owners = _strings(raw, "owners", rule, file)
    rule.labels = _strings(raw, "labels", rule, file)
    for label in rule.labels:
        if not _LABEL.match(label):
            raise rule.error(file, f"label {label!r}: Atlas allows 1-50 letters, digits, '_' and '-'")
    rule.business = _business(raw.get("business", {}), rule, file)
    if not any(getattr(rule, k) for k in _ADD_KEYS):
        raise rule.error(file, f"adds nothing: give one of {', '.join(_ADD_KEYS)}")
    foreign = raw.get("foreign", False)
    if not isinstance(foreign, bool):
        raise rule.error(file, "'foreign' must be true or false")
    rule.foreign = foreign
    if foreign and rule.owners:
        raise rule.error(
            file,
            "owners cannot go on entities another tool created (foreign = true): an owner is an "
            "attribute, and atlas-sync never writes another tool's entities; give owners in a rule "
            "without foreign",
        )
    if foreign and rule.processes and not (rule.datasets or rule.columns):
        raise rule.error(
            file, "foreign = true: processes are always atlas-sync's own; match datasets or columns"
        )
    return rule


def _strings(raw: Mapping[str, Any], key: str, rule: Rule, file: str) -> list[str]:
    v = raw.get(key, [])
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise rule.error(file, f"{key!r} must be a list of non-empty strings")
    return list(dict.fromkeys(v))


def _pattern(text: str, key: str, rule: Rule, file: str) -> Pattern:
    if text.startswith(REGEX_PREFIX):
        try:
            return Pattern(text, re.compile(text[len(REGEX_PREFIX) :], re.IGNORECASE))
        except re.error as exc:
            raise rule.error(file, f"{key}: bad regular expression {text!r}: {exc}") from exc
    if key == "columns" and "." not in text:
        raise rule.error(file, f"columns: {text!r} names no dataset (db.table.column, '*.*.col' for any)")
    return Pattern(text, re.compile(fnmatch.translate(text), re.IGNORECASE))


def _classifications(v: Any, rule: Rule, file: str) -> list[Classification]:
    if not isinstance(v, list):
        raise rule.error(file, "'classifications' must be a list")
    out: list[Classification] = []
    for c in v:
        if isinstance(c, str):
            c = {"name": c}
        if not isinstance(c, dict):
            raise rule.error(file, "a classification is a name or a table { name = ..., propagate = ... }")
        unknown = sorted(set(c) - _CLASSIFICATION_KEYS)
        if unknown:
            raise rule.error(
                file, f"classification: unknown key {unknown[0]!r} (known: name, propagate, attributes)"
            )
        name, propagate, attrs = c.get("name"), c.get("propagate"), c.get("attributes", {})
        if not isinstance(name, str) or not _TYPE_NAME.match(name):
            raise rule.error(file, f"classification name {name!r} is not a valid Atlas type name")
        if propagate is not None and not isinstance(propagate, bool):
            raise rule.error(file, f"classification {name!r}: 'propagate' must be true or false")
        if not isinstance(attrs, dict):
            raise rule.error(file, f"classification {name!r}: 'attributes' must be a table")
        if any(x.name == name for x in out):
            raise rule.error(file, f"classification {name!r} is given twice")
        out.append(Classification(name=name, propagate=propagate, attributes=attrs))
    return out


def _business(v: Any, rule: Rule, file: str) -> dict[str, dict[str, Any]]:
    if not isinstance(v, dict) or not all(isinstance(a, dict) for a in v.values()):
        raise rule.error(file, "'business' must be a table of tables: business = { bm = { attr = value } }")
    for bm, attrs in v.items():
        for attr, value in attrs.items():
            if value is None or isinstance(value, dict):
                raise rule.error(
                    file, f"business {bm}.{attr}: a value must be a string, number, boolean or list"
                )
    return {bm: dict(attrs) for bm, attrs in v.items()}


# ------------------------------------------------------------------------------------------ names
TypeLookup = Callable[[str], Mapping[str, Any] | None]


def check_names(rules: MetadataRules, lookup: TypeLookup, *, entity_types: Collection[str] = ()) -> None:
    """Check every classification and business metadata a rule names against ``lookup`` (the typedef
    of that name, from Atlas or the profile's bundles, or ``None``): an unknown one, a business
    attribute its def lacks, or a classification attribute its def lacks is an error naming the rule."""
    for rule in rules.rules:
        for c in rule.classifications:
            d = lookup(c.name)
            if d is None or d.get("category") != "CLASSIFICATION":
                raise rule.error(
                    rules.file,
                    f"unknown classification {c.name!r}: neither Atlas nor the profile's typedef bundles define it",
                )
            known = _attribute_names(d, lookup)
            for attr in c.attributes:
                if attr not in known:
                    raise rule.error(rules.file, f"classification {c.name!r} has no attribute {attr!r}")
        for bm, attrs in rule.business.items():
            d = lookup(bm)
            if d is None or d.get("category") != "BUSINESS_METADATA":
                raise rule.error(
                    rules.file,
                    f"unknown business metadata {bm!r}: neither Atlas nor the profile's typedef bundles define it",
                )
            known = {a.get("name") for a in d.get("attributeDefs") or []}
            for attr in attrs:
                if attr not in known:
                    raise rule.error(rules.file, f"business metadata {bm!r} has no attribute {attr!r}")


def _attribute_names(d: Mapping[str, Any], lookup: TypeLookup, depth: int = 0) -> set[str]:
    names = {a.get("name") for a in d.get("attributeDefs") or []}
    if depth < 10:
        for sup in d.get("superTypes") or []:
            sd = lookup(sup)
            if sd is not None:
                names |= _attribute_names(sd, lookup, depth + 1)
    return {n for n in names if isinstance(n, str)}
