"""The metadata rules' and the input's classification, business-metadata and glossary-term names,
checked against the profile's typedef bundles and Atlas before anything is written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas_sync.errors import AtlasSyncError, InputError
from atlas_sync.lineage.model import LineageGraph

if TYPE_CHECKING:
    from atlas_sync.api import Publisher


def check_rules(pub: Publisher) -> dict[str, str]:
    """Check the metadata rules' names against the profile's typedef bundles and Atlas (one read
    of the type headers; a def read only for a classification given attributes) and look up their
    glossary terms (one read): an unknown name is an error naming the rule, before anything is
    written. Returns the terms' guids. Done once per publisher."""
    rules = pub.metadata_rules
    if rules is None:
        return {}
    if pub.catalog.rule_terms is not None:
        return pub.catalog.rule_terms
    if pub.profile.bookkeeping.metadata is None and pub.profile.metadata_record is None:
        raise AtlasSyncError(
            f"profile {pub.profile.name!r} cannot publish metadata rules ({rules.file}): it has no "
            "metadata_attribute (or, with Atlas's own types, metadata_record) to record what "
            "atlas-sync adds",
            hint="add metadata_attribute or metadata_record to the profile (docs/metadata.md)",
        )
    if not pub.native and rules.foreign:
        raise rules.foreign[0].error(
            rules.file,
            f"foreign = true: the {pub.profile.name} profile's entities are all atlas-sync's "
            "(it applies under the atlas profile, to tables a hook created)",
        )
    from atlas_sync.lineage.rules import check_names

    def lookup(name: str) -> Mapping[str, Any] | None:
        full = any((c.name == name and c.attributes) for r in rules.rules for c in r.classifications) or any(
            name in r.business for r in rules.rules
        )
        return pub.catalog.lookup_type(name, full=full)

    check_names(rules, lookup)
    wanted = {t for r in rules.rules for t in r.terms}
    found = pub.catalog.term_guids(wanted)
    for r in rules.rules:
        for t in r.terms:
            if t not in found:
                raise r.error(
                    rules.file,
                    f"unknown glossary term {t!r} (no AtlasGlossaryTerm of that qualifiedName)",
                )
    pub.catalog.rule_terms = found
    return found


def check_input_metadata(pub: Publisher, named: MetadataNames) -> dict[str, str]:
    """The classifications, business metadata and terms the input itself names (a graph document
    may carry them), checked as a rules file's are, before anything is written; the terms' guids."""
    for name in sorted(named.classifications):
        d = pub.catalog.lookup_type(name)
        if d is None or d.get("category") != "CLASSIFICATION":
            raise InputError(
                f"the input names classification {name!r}, which neither Atlas nor the profile's "
                "typedef bundles define",
                hint="define it (a typedef bundle of the profile) or remove it from the input",
            )
    for name in sorted(named.business):
        d = pub.catalog.lookup_type(name)
        if d is None or d.get("category") != "BUSINESS_METADATA":
            raise InputError(
                f"the input names business metadata {name!r}, which neither Atlas nor the profile's "
                "typedef bundles define"
            )
    wanted = named.terms - pub.catalog.known_terms()
    found = pub.catalog.term_guids(wanted, keep=False)
    missing = sorted(wanted - set(found))
    if missing:
        raise InputError(f"the input names glossary term {missing[0]!r}, which Atlas lacks")
    return found


@dataclass
class MetadataNames:
    """The classification, business-metadata and term names a graph's items carry."""

    classifications: set[str] = field(default_factory=set)
    business: set[str] = field(default_factory=set)
    terms: set[str] = field(default_factory=set)

    def add(self, graph: LineageGraph) -> None:
        items: list[Any] = [*graph.datasets, *graph.processes]
        items += [c for d in graph.datasets for c in d.columns]
        for item in items:
            self.classifications.update(c.name for c in item.classifications)
            self.business.update(item.business or {})
            self.terms.update(item.terms)

    def __bool__(self) -> bool:
        return bool(self.classifications or self.business or self.terms)
