"""What a publisher knows of the server, read once and kept: one object, one ``invalidate()``.

A long-running service (``openlineage serve``, ``consume``) keeps one publisher for its whole life;
what it read of Atlas (the profile's types and which bookkeeping attributes they hold, classification
and business-metadata defs, glossary term guids, a native profile's metadata record) is kept here and
read again after :meth:`ServerCatalog.invalidate` (the publisher calls it after any Atlas error: a
type or term someone deleted or created again answers 404 or 400 until it is read again).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas_sync.atlas.interface import AtlasApi
from atlas_sync.errors import AtlasSyncError
from atlas_sync.reconcile.bookkeeping import Bookkeeping
from atlas_sync.render.profile import Profile


@dataclass(frozen=True)
class ServerAttributes:
    """What a sync reads and writes by on this server: the profile's bookkeeping attributes as the
    server's types hold them (``bookkeeping``), and what metadata is reconciled with
    (``metadata_record``: a native profile's, when the server has it; ``term_guids``: glossary term
    qualifiedName -> guid)."""

    bookkeeping: Bookkeeping = field(default_factory=Bookkeeping)
    metadata_record: tuple[str, str] | None = None
    term_guids: Mapping[str, str] = field(default_factory=dict)


class ServerCatalog:
    """The server-derived caches of one publisher (``client``, ``profile``)."""

    def __init__(self, client: AtlasApi, profile: Profile) -> None:
        self.client = client
        self.profile = profile
        self._bundle: Any = None  # the profile's typedef bundle (not the server's: kept)
        self.invalidate()

    def invalidate(self) -> None:
        """Forget everything read from the server: the next sync reads what it needs again."""
        self.ensured = False  # set by ensure_typedefs(): the profile's types exist now
        self._types: Any = None  # what the server holds of the profile's types
        self._headers: dict[str, str] | None = None  # type name -> category, of every type
        self._defs: dict[str, Mapping[str, Any] | None] = {}  # full defs read by name
        self._terms: dict[str, str] = {}  # glossary term qualifiedName -> guid
        self.rule_terms: dict[str, str] | None = None  # the metadata rules' terms, once checked

    # ------------------------------------------------------------------ the profile's types
    def bundle(self) -> Any:
        """The profile's typedef bundle, or ``None`` (a native profile without types of its own)."""
        if self._bundle is None and self.profile.typedef_sources:
            from atlas_sync.typedefs import load_bundle

            self._bundle = load_bundle(*self.profile.typedef_sources)
        return self._bundle

    def types(self) -> Any:
        """The server's defs of the profile's types, read once: its bundle's in a request per
        serviceType (and the types they refer to only when something is to be registered), a native
        profile's root types and metadata record by name. What the typedef check, the root
        types and the bookkeeping attributes are decided from."""
        if self._types is None:
            from atlas_sync.typedefs.bundle import ServerTypes
            from atlas_sync.typedefs.engine import read_bundle_types, read_types_by_name

            bundle = self.bundle()
            held = read_bundle_types(self.client, bundle) if bundle is not None else ServerTypes()
            if self.profile.mapping_file is not None or bundle is None:
                # a native profile's root types outside its bundle: only whether they exist (Atlas's
                # types carry none of its attributes), from the headers of every type; its metadata
                # record: its attributes, by name
                roots = [n for n in self.profile.root_types() if n not in held]
                if roots:
                    held = held.merged(_present(self.headers(), roots))
                record = self.profile.metadata_record
                if record is not None and record[0] not in held:
                    held = held.merged(read_types_by_name(self.client, [record[0]], supertypes=False))
            self._types = held
        return self._types

    def ensure_typedefs(self) -> int:
        """Register the profile's typedefs if needed; returns the number of write requests made."""
        from atlas_sync.typedefs import ensure_typedefs

        bundle = self.bundle()
        if bundle is None:  # a native profile registers nothing
            self.ensured = True
            return 0
        result = ensure_typedefs(self.client, bundle, self.types())
        self.ensured = True
        writes = result.writes
        if writes:
            # the bundle's types are as written now; what else was read (root types, record) still holds
            from atlas_sync.typedefs.bundle import ServerTypes

            self._types = ServerTypes(bundle.typesdef()).merged(self._types)
        return writes

    def existing_root_types(self) -> list[str]:
        """Root types that exist on the server (a search on an unknown type is a 400)."""
        types = self.types()
        return [t for t in self.profile.root_types() if t in types]

    def scope_types(self) -> list[str]:
        """The root types to list the domain by: all of the profile's once its typedefs are ensured;
        before that only those the server has (a plan against a fresh Atlas lists nothing, not a 400)."""
        if self.ensured:
            return self.profile.root_types()
        return self.existing_root_types()

    def bookkeeping(self) -> Bookkeeping:
        """The profile's bookkeeping attributes, and those of them the server's types have (an older
        bundle registered without one: a search naming it is a 400, and Atlas would drop it from
        writes). Typedefs are read only when not ensured in this run."""
        profile = self.profile
        names = profile.bookkeeping
        roots = profile.root_types()
        for key, attr in names.items():
            missing = [t for t in roots if attr and attr not in profile.schema.own_attributes.get(t, {})]
            if missing:
                raise AtlasSyncError(
                    f"profile {profile.name!r}: {key}_attribute {attr!r} is not an attribute of "
                    f"{', '.join(missing)}",
                    hint=f"declare it (a string) in the profile's typedefs, or remove {key}_attribute",
                )
        if self.ensured or not any(v for _, v in names.items()):
            return Bookkeeping.of(names)
        types = self.types()
        held = [{a.get("name") for a in (types.get(t) or {}).get("attributeDefs") or []} for t in roots]
        return Bookkeeping.of(names, lambda attr: all(attr in h for h in held))

    # ------------------------------------------------------------------ metadata the rules name
    def lookup_type(self, name: str, *, full: bool = False) -> Mapping[str, Any] | None:
        """A classification's or business metadata's def (with ``category``) from the profile's
        bundles, else Atlas: its type headers read once, a full def only when ``full``."""
        bundle = self.bundle()
        if bundle is not None and name in bundle:
            entry = bundle.entries[name]
            return {**entry.atlas(), "category": entry.category}
        category = self.headers().get(name)
        defs = self._defs
        if category is None:
            # not among the headers: asked by name before it counts as unknown (a real Atlas 2.1.0 left
            # a business metadata created a moment before out of its headers, yet answered it by name)
            if name not in defs:
                found = self.client.get_typedef_by_name(name)
                defs[name] = {**found, "category": found.get("category", "")} if found else None
            return defs[name]
        if full and name not in defs:
            defs[name] = {**(self.client.get_typedef_by_name(name) or {}), "category": category}
        return defs.get(name) or {"name": name, "category": category}

    def headers(self) -> Mapping[str, str]:
        """Type name -> category of every type on the server, read once."""
        if self._headers is None:
            self._headers = {
                h["name"]: h.get("category", "")
                for h in self.client.get_typedef_headers()
                if isinstance(h, dict) and isinstance(h.get("name"), str)
            }
        return self._headers

    def term_guids(self, names: Iterable[str], *, keep: bool = True) -> dict[str, str]:
        """Guids of glossary terms by qualifiedName (those Atlas lacks are absent); looked up once
        when ``keep`` (a rules file's terms), else every time (the terms an input names)."""
        from atlas_sync.atlas.metadata import term_guids

        wanted = set(names)
        todo = wanted - set(self._terms)
        found = term_guids(self.client, todo) if todo else {}
        if keep:
            self._terms.update(found)
        known = {**self._terms, **found}
        return {t: known[t] for t in wanted if t in known}

    def known_terms(self) -> set[str]:
        """The terms looked up and kept so far."""
        return set(self._terms)

    def metadata_record(self, *, wanted: bool, register: bool) -> tuple[tuple[str, str], int] | None:
        """A native profile's record of what atlas-sync added (a business attribute on any entity,
        ``metadata_record``) and the typedef writes made for it: registered (one write, once) by the
        first sync that publishes metadata (unless not ``register``: a plan); ``None`` while it is not and the sync publishes none (or
        for a profile with an attribute of its own)."""
        record = self.profile.metadata_record
        if record is None or self.profile.bookkeeping.metadata is not None:
            return None
        bm, attr = record
        held = self.types().get(bm)
        if held is not None and any(a.get("name") == attr for a in held.get("attributeDefs") or []):
            return record, 0
        if not wanted:
            return None  # nothing was ever recorded: nothing to reconcile
        if not register:
            return record, 0  # (a plan: nothing recorded yet)
        from atlas_sync.reconcile.metadata import record_typedef

        self.client.create_typedefs({"businessMetadataDefs": [record_typedef(bm, attr)]})
        self._types = None  # (read again: it holds the record now)
        self.ensured = True
        return record, 1


def _present(headers: Mapping[str, str], names: Iterable[str]) -> Any:
    """Those of ``names`` the server has (``headers``: name -> category), as defs without attributes."""
    from atlas_sync.typedefs.bundle import ServerTypes
    from atlas_sync.typedefs.model import CATEGORY_LISTS

    doc: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        key = CATEGORY_LISTS.get(headers.get(name, ""))
        if key is not None:
            doc.setdefault(key, []).append({"name": name})
    return ServerTypes(doc)
