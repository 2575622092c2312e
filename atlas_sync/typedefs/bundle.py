"""Typedef bundles: loading, validation, reference resolution and dependency order.

A bundle is one or more folders or files of Atlas ``AtlasTypesDef`` JSON. ``load_bundle`` reads and
validates them without any request; :meth:`Bundle.resolve` checks every reference (supertypes,
attribute types inside ``array<..>``/``map<..,..>``, relationship ends, classification entity types)
against the bundle plus the types a server already has. Every problem names the type, the attribute
and the file, so nothing bad is ever sent.
"""

from __future__ import annotations

import contextlib
import difflib
import heapq
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from atlas_sync.errors import InputError
from atlas_sync.inputs import load_json
from atlas_sync.typedefs.model import (
    CATEGORY_LISTS,
    CATEGORY_RANK,
    DEF_MODELS,
    LIST_CATEGORIES,
    RESERVED_TYPE_NAMES,
    TYPE_NAME_RE,
    AnyDef,
    AttributeDef,
    ClassificationDef,
    EntityDef,
    EnumDef,
    RelationshipDef,
    StructDef,
    is_collection,
    referenced_names,
    to_atlas,
)
from atlas_sync.typenames import TypeNameError
from atlas_sync.wording import counted

# Folders Atlas's own model layout uses for patch files; not typedefs.
_SKIP_DIRS = {"patches"}


class BundleError(InputError):
    """One or more problems in a bundle. ``problems`` holds each as an :class:`InputError`
    (file + JSON path + message); the message of the error itself is the first problem."""

    def __init__(self, problems: list[InputError]) -> None:
        self.problems = problems
        first = problems[0]
        more = f" (and {counted(len(problems) - 1, 'more problem')})" if len(problems) > 1 else ""
        super().__init__(
            first.message + more, file=first.file, path=first.path, line=first.line, column=first.column
        )
        self.hint = first.hint or "fix the bundle file; nothing was sent to Atlas"


@dataclass(frozen=True)
class TypeEntry:
    """One typedef of a bundle, with where it came from."""

    name: str
    category: str
    definition: AnyDef
    file: str
    path: str  # JSON path inside the file, e.g. "$.entityDefs[2]"

    def atlas(self) -> dict[str, Any]:
        """The def as it is sent to Atlas."""
        return to_atlas(self.definition)

    @property
    def super_types(self) -> list[str]:
        d = self.definition
        return list(d.superTypes) if isinstance(d, EntityDef | ClassificationDef) else []

    @property
    def attributes(self) -> list[AttributeDef]:
        d = self.definition
        return list(d.attributeDefs) if isinstance(d, StructDef) else []


@dataclass(frozen=True)
class KnownType:
    """What resolution needs to know about a type, from a bundle or from a server."""

    name: str
    category: str
    super_types: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    ends: tuple[str, ...] = ()


class ServerTypes:
    """The typedefs a server has, indexed by name (built from one ``GET /v2/types/typedefs``)."""

    def __init__(self, typesdef: Mapping[str, Any] | None = None) -> None:
        self.raw: dict[str, dict[str, Any]] = {}
        self.categories: dict[str, str] = {}
        for list_name, category in LIST_CATEGORIES.items():
            for d in (typesdef or {}).get(list_name) or []:
                if isinstance(d, dict) and isinstance(d.get("name"), str):
                    self.raw[d["name"]] = d
                    self.categories[d["name"]] = category

    @classmethod
    def builtin(cls) -> ServerTypes:
        """Atlas 2.4's built-in types, for offline checks."""
        from atlas_sync.typedefs.builtin import atlas_base_typedefs

        return cls(atlas_base_typedefs())

    def __contains__(self, name: object) -> bool:
        return name in self.raw

    def __len__(self) -> int:
        return len(self.raw)

    def get(self, name: str) -> dict[str, Any] | None:
        return self.raw.get(name)

    def merged(self, other: ServerTypes) -> ServerTypes:
        """These types and ``other``'s (ours win a name both have)."""
        out = ServerTypes()
        out.raw = {**other.raw, **self.raw}
        out.categories = {**other.categories, **self.categories}
        return out

    def known(self, name: str) -> KnownType | None:
        d = self.raw.get(name)
        if d is None:
            return None
        ends = tuple(
            str((d.get(k) or {}).get("type")) for k in ("endDef1", "endDef2") if isinstance(d.get(k), dict)
        )
        return KnownType(
            name=name,
            category=self.categories[name],
            super_types=tuple(d.get("superTypes") or ()),
            attributes=tuple(str(a.get("name")) for a in d.get("attributeDefs") or () if isinstance(a, dict)),
            ends=ends,
        )


@dataclass
class Bundle:
    """The typedefs of one or more bundle sources, keyed by type name."""

    entries: dict[str, TypeEntry]
    sources: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __iter__(self) -> Iterator[TypeEntry]:
        return iter(self.entries[n] for n in self.order())

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def names(self) -> list[str]:
        return sorted(self.entries)

    def known(self, name: str) -> KnownType | None:
        e = self.entries.get(name)
        if e is None:
            return None
        d = e.definition
        ends = (d.endDef1.type, d.endDef2.type) if isinstance(d, RelationshipDef) else ()
        return KnownType(
            name=name,
            category=e.category,
            super_types=tuple(e.super_types),
            attributes=tuple(a.name for a in e.attributes),
            ends=ends,
        )

    # -- dependencies and order -------------------------------------------------------------

    def references(self, name: str) -> list[tuple[str, str | None]]:
        """Every type name ``name`` refers to, each with the attribute (or field) that refers to it."""
        e = self.entries[name]
        d = e.definition
        out: list[tuple[str, str | None]] = [(s, "superTypes") for s in e.super_types]
        for a in e.attributes:
            with contextlib.suppress(TypeNameError):  # reported by validation
                out.extend((r, a.name) for r in referenced_names(a.typeName))
        if isinstance(d, RelationshipDef):
            out.append((d.endDef1.type, "endDef1"))
            out.append((d.endDef2.type, "endDef2"))
        if isinstance(d, ClassificationDef):
            out.extend((t, "entityTypes") for t in d.entityTypes)
        return out

    def dependencies(self, name: str) -> set[str]:
        """Types of this bundle that ``name`` needs to exist first."""
        return {r for r, _ in self.references(name) if r in self.entries and r != name}

    def service_types(self) -> list[str] | None:
        """The serviceTypes of the bundle's types, if every one has one: what reads them from Atlas in
        a request per serviceType (``GET /v2/types/typedefs?servicetype=``)."""
        kinds = {e.definition.serviceType for e in self.entries.values()}
        return None if None in kinds or "" in kinds else sorted(str(k) for k in kinds)

    def external_references(self) -> set[str]:
        """Type names referred to but not defined here (Atlas built-ins or other server types)."""
        return {r for n in self.entries for r, _ in self.references(n) if r not in self.entries}

    def order(self) -> list[str]:
        """Topological order: every type after what it depends on. Types that refer to each other
        through attributes (allowed: Atlas resolves one POST together) stay together; ties are
        broken by category then name, so the order never depends on file order."""
        names = sorted(self.entries)
        deps = {n: self.dependencies(n) for n in names}
        comps = _strongly_connected(names, deps)
        comp_of = {n: i for i, c in enumerate(comps) for n in c}
        comp_deps: dict[int, set[int]] = {i: set() for i in range(len(comps))}
        for n in names:
            for d in deps[n]:
                if comp_of[d] != comp_of[n]:
                    comp_deps[comp_of[n]].add(comp_of[d])
        dependents: dict[int, set[int]] = {i: set() for i in range(len(comps))}
        for i, ds in comp_deps.items():
            for j in ds:
                dependents[j].add(i)

        def key(i: int) -> tuple[int, str]:
            return min((CATEGORY_RANK[self.entries[n].category], n) for n in comps[i])

        remaining = {i: len(ds) for i, ds in comp_deps.items()}
        heap = [(key(i), i) for i, c in remaining.items() if c == 0]
        heapq.heapify(heap)
        out: list[str] = []
        while heap:
            _, i = heapq.heappop(heap)
            out.extend(sorted(comps[i], key=lambda n: (CATEGORY_RANK[self.entries[n].category], n)))
            for j in dependents[i]:
                remaining[j] -= 1
                if remaining[j] == 0:
                    heapq.heappush(heap, (key(j), j))
        return out

    def typesdef(self, names: Iterable[str] | None = None) -> dict[str, Any]:
        """An ``AtlasTypesDef`` body with the given types (all by default), in dependency order."""
        wanted = set(self.entries if names is None else names)
        body: dict[str, Any] = {lst: [] for lst in CATEGORY_LISTS.values()}
        for n in self.order():
            if n in wanted:
                e = self.entries[n]
                body[CATEGORY_LISTS[e.category]].append(e.atlas())
        return body

    # -- validation against known types ------------------------------------------------------

    def resolve(self, server: ServerTypes | None = None, *, strict: bool = True) -> None:
        """Check every reference against this bundle plus ``server`` (Atlas's built-in types when
        None). With ``strict`` False, names known to neither are let through (they may exist on the
        server); everything else is still checked. Raises :class:`BundleError`."""
        if server is None:
            server = ServerTypes.builtin()
        problems = list(self._resolve(server, strict))
        if problems:
            raise BundleError(problems)

    def _lookup(self, name: str, server: ServerTypes) -> KnownType | None:
        # The bundle's version of a type is what will exist after apply.
        return self.known(name) or server.known(name)

    def _resolve(self, server: ServerTypes, strict: bool) -> Iterator[InputError]:
        for name in sorted(self.entries):
            e = self.entries[name]
            d = e.definition

            def err(msg: str, path: str = "", hint: str | None = None, _e: TypeEntry = e) -> InputError:
                return InputError(msg, file=_e.file, path=_e.path + path, hint=hint)

            def dangling(ref: str, what: str, path: str, _name: str = name) -> InputError:
                close = difflib.get_close_matches(ref, list(self.entries) + list(server.raw), n=1)
                hint = (
                    f"did you mean {close[0]!r}?"
                    if close
                    else (
                        "define it in a bundle applied together with this one, or register it on the server first"
                    )
                )
                return err(
                    f"{_name}: {what} refers to unknown type {ref!r} (Atlas would answer 400 ATLAS-400-00-029)",
                    path,
                    hint,
                )

            for i, s in enumerate(e.super_types):
                k = self._lookup(s, server)
                if k is None:
                    if strict:
                        yield dangling(s, "superType", f".superTypes[{i}]")
                elif k.category != e.category:
                    yield err(
                        f"{name}: supertype {s!r} is a {k.category} type, not {e.category} "
                        "(Atlas: ATLAS-400-00-003 incompatible supertype)",
                        f".superTypes[{i}]",
                    )
            for i, a in enumerate(e.attributes):
                try:
                    refs = referenced_names(a.typeName)
                except TypeNameError:
                    continue  # reported at load
                for r in refs:
                    k = self._lookup(r, server)
                    if k is None:
                        if strict:
                            yield dangling(r, f"attribute {a.name!r}", f".attributeDefs[{i}].typeName")
                    elif k.category in ("CLASSIFICATION", "BUSINESS_METADATA", "RELATIONSHIP"):
                        yield err(
                            f"{name}.{a.name}: attribute type {r!r} is a {k.category} type; attributes may only "
                            "use primitives, enums, structs and entity types (Atlas: ATLAS-400-00-081)",
                            f".attributeDefs[{i}].typeName",
                        )
            if isinstance(d, RelationshipDef):
                for key, end in (("endDef1", d.endDef1), ("endDef2", d.endDef2)):
                    k = self._lookup(end.type, server)
                    if k is None:
                        if strict:
                            yield dangling(end.type, f"{key}.type", f".{key}.type")
                    elif k.category != "ENTITY":
                        yield err(
                            f"{name}: {key} type {end.type!r} is a {k.category} type; relationship ends must be "
                            "entity types (Atlas: ATLAS-400-00-035)",
                            f".{key}.type",
                        )
            if isinstance(d, ClassificationDef):
                for i, t in enumerate(d.entityTypes):
                    k = self._lookup(t, server)
                    if k is None:
                        if strict:
                            yield dangling(t, "entityTypes", f".entityTypes[{i}]")
                    elif k.category != "ENTITY":
                        yield err(f"{name}: entityTypes {t!r} is not an entity type", f".entityTypes[{i}]")

        yield from self._check_hierarchy(server)

    def _check_hierarchy(self, server: ServerTypes) -> Iterator[InputError]:
        """Supertype cycles (ATLAS-400-00-002) and attributes re-declared from a supertype (-09E)."""
        reported_cycles: set[frozenset[str]] = set()
        for name in sorted(self.entries):
            e = self.entries[name]
            if not e.super_types:
                continue
            cycle = self._find_cycle(name, server)
            if cycle:
                key = frozenset(cycle)
                if key not in reported_cycles:
                    reported_cycles.add(key)
                    yield InputError(
                        f"{name}: circular supertypes {' -> '.join(cycle)} (Atlas: ATLAS-400-00-002)",
                        file=e.file,
                        path=e.path + ".superTypes",
                        hint="a type cannot be its own supertype, directly or through others",
                    )
                continue
            declared = self._ancestor_attributes(name, server)
            for i, a in enumerate(e.attributes):
                if a.name in declared:
                    yield InputError(
                        f"{name}.{a.name}: attribute already exists in parent type {declared[a.name]} "
                        "(Atlas: ATLAS-400-00-09E)",
                        file=e.file,
                        path=f"{e.path}.attributeDefs[{i}]",
                        hint=f"remove it: {name} inherits {a.name!r} from {declared[a.name]}",
                    )

    def _find_cycle(self, start: str, server: ServerTypes) -> list[str] | None:
        path: list[str] = []
        on_path: set[str] = set()
        done: set[str] = set()

        def visit(n: str) -> list[str] | None:
            if n in on_path:
                return path[path.index(n) :] + [n]
            if n in done:
                return None
            k = self._lookup(n, server)
            if k is None:
                return None
            path.append(n)
            on_path.add(n)
            for s in k.super_types:
                c = visit(s)
                if c:
                    return c
            path.pop()
            on_path.discard(n)
            done.add(n)
            return None

        return visit(start)

    def _ancestor_attributes(self, name: str, server: ServerTypes) -> dict[str, str]:
        """attribute name -> declaring ancestor, over all transitive supertypes of ``name``."""
        out: dict[str, str] = {}
        seen: set[str] = set()
        k0 = self._lookup(name, server)
        stack = list(k0.super_types) if k0 else []
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            k = self._lookup(s, server)
            if k is None:
                continue
            for a in k.attributes:
                out.setdefault(a, s)
            stack.extend(k.super_types)
        return out


def _strongly_connected(names: list[str], deps: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (bundles from users may be large)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in names:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(deps[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(deps[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp: list[str] = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


# -- loading ---------------------------------------------------------------------------------


def resolve_source(source: str | Path) -> list[Path]:
    """The JSON files of one source: a built-in profile name, a folder, or a file."""
    from atlas_sync.resources import builtin_dir

    text = str(source)
    if isinstance(source, str) and "/" not in text and "\\" not in text and not text.endswith(".json"):
        try:
            builtin = builtin_dir("typedefs") / text
        except FileNotFoundError:
            builtin = None
        if builtin is not None and builtin.is_dir():
            return _folder_files(builtin)
    p = Path(source)
    if p.is_dir():
        files = _folder_files(p)
        if not files:
            raise InputError("no *.json typedef files in this folder", file=text)
        return files
    if p.is_file():
        return [p]
    try:
        profiles = sorted(x.name for x in builtin_dir("typedefs").iterdir() if x.is_dir())
    except FileNotFoundError:
        profiles = []
    raise InputError(
        "no such bundle folder or file, and not a built-in profile",
        file=text,
        hint=f"built-in profiles: {', '.join(profiles) or 'none'}; or give a folder of AtlasTypesDef JSON files",
    )


def _folder_files(folder: Path) -> list[Path]:
    # Atlas's loader: files sorted by name, sub-folders sorted by name, patches/ skipped.
    out: list[Path] = []
    for p in sorted(folder.iterdir(), key=lambda x: x.name):
        if p.is_dir():
            if p.name not in _SKIP_DIRS and not p.name.startswith("."):
                out.extend(_folder_files(p))
        elif p.suffix == ".json":
            out.append(p)
    return out


def load_bundle(*sources: str | Path) -> Bundle:
    """Load and validate typedef bundles: built-in profile names (``"lineage"``, ``"pico"``),
    folders or files of ``AtlasTypesDef`` JSON. Several sources are combined and may refer to each
    other and to Atlas's built-in types. Checks everything that can be checked without a server
    (see :meth:`Bundle.resolve` for the rest) and raises :class:`BundleError` naming the file,
    the JSON path, the type and the attribute."""
    if not sources:
        raise InputError(
            "no typedef bundle given", hint="name a built-in profile (lineage, pico) or a folder"
        )
    files: list[Path] = []
    for s in sources:
        for f in resolve_source(s):
            if f not in files:
                files.append(f)
    problems: list[InputError] = []
    found: dict[str, list[TypeEntry]] = {}
    for f in sorted(files, key=str):
        for item in _read_file(str(f), problems):
            found.setdefault(item.name, []).append(item)
    entries: dict[str, TypeEntry] = {}
    for name in sorted(found):
        items = sorted(found[name], key=lambda e: (e.file, e.path))
        first = items[0]
        for other in items[1:]:
            if other.category != first.category or other.atlas() != first.atlas():
                problems.append(
                    InputError(
                        f"{name}: defined twice, differently (also in {first.file} at {first.path})",
                        file=other.file,
                        path=other.path,
                        hint="keep one definition of each type across the bundles you combine",
                    )
                )
        entries[name] = first
    if problems:
        raise BundleError(_sorted_problems(problems))
    bundle = Bundle(
        entries=entries, sources=sorted(str(s) for s in sources), files=sorted(str(f) for f in files)
    )
    bundle.resolve(ServerTypes.builtin(), strict=False)
    return bundle


def _sorted_problems(problems: list[InputError]) -> list[InputError]:
    return sorted(problems, key=lambda p: (p.file or "", p.path or "", p.message))


def _read_file(file: str, problems: list[InputError]) -> Iterator[TypeEntry]:
    doc = load_json(file)
    if not isinstance(doc, dict):
        problems.append(InputError("expected a JSON object (AtlasTypesDef) at the top", file=file, path="$"))
        return
    for key in sorted(doc):
        if key not in LIST_CATEGORIES:
            close = difflib.get_close_matches(key, list(LIST_CATEGORIES), n=1)
            problems.append(
                InputError(
                    f"unknown key {key!r} in an AtlasTypesDef",
                    file=file,
                    path=f"$.{key}",
                    hint=f"did you mean {close[0]!r}?"
                    if close
                    else f"expected: {', '.join(LIST_CATEGORIES)}",
                )
            )
    for list_name, category in LIST_CATEGORIES.items():
        defs = doc.get(list_name)
        if defs is None:
            continue
        if not isinstance(defs, list):
            problems.append(InputError(f"{list_name} must be a list", file=file, path=f"$.{list_name}"))
            continue
        for i, raw in enumerate(defs):
            path = f"$.{list_name}[{i}]"
            entry = _parse_def(raw, category, file, path, problems)
            if entry is not None:
                yield entry


def _parse_def(raw: Any, category: str, file: str, path: str, problems: list[InputError]) -> TypeEntry | None:
    if not isinstance(raw, dict):
        problems.append(InputError("a typedef must be a JSON object", file=file, path=path))
        return None
    if raw.get("category") not in (None, category):
        problems.append(
            InputError(
                f"category {raw.get('category')!r} does not match the list it is in ({category})",
                file=file,
                path=path + ".category",
            )
        )
        return None
    model = DEF_MODELS[category]
    try:
        definition = model.model_validate(raw)
    except ValidationError as exc:
        label = raw.get("name") if isinstance(raw.get("name"), str) else "typedef"
        for e in exc.errors():
            loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"])
            hint = None
            if e["type"] == "extra_forbidden" and e["loc"]:
                bad = str(e["loc"][-1])
                fields = _fields_at(model, e["loc"][:-1])
                close = difflib.get_close_matches(bad, fields, n=1)
                hint = (
                    f"did you mean {close[0]!r}? (Atlas silently ignores unknown keys)"
                    if close
                    else "Atlas ignores unknown keys; remove it"
                )
            msg = e["msg"]
            if e["type"] == "missing":
                msg = "required field missing"
            problems.append(InputError(f"{label}: {msg}", file=file, path=path + loc, hint=hint))
        return None
    entry = TypeEntry(name=definition.name, category=category, definition=definition, file=file, path=path)  # type: ignore[arg-type]
    problems.extend(_static_checks(entry))
    return entry


def _fields_at(model: type[Any], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (sub)model at a pydantic error location, for did-you-mean hints."""
    m: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        f = m.model_fields.get(part)
        if f is None:
            return []
        ann = f.annotation
        for cand in (AttributeDef, _end_model(), _element_model()):
            if cand is ann or cand in getattr(ann, "__args__", ()):
                m = cand
                break
        else:
            return []
    return list(m.model_fields)


def _end_model() -> type[Any]:
    from atlas_sync.typedefs.model import RelationshipEndDef

    return RelationshipEndDef


def _element_model() -> type[Any]:
    from atlas_sync.typedefs.model import EnumElementDef

    return EnumElementDef


def _static_checks(e: TypeEntry) -> Iterator[InputError]:
    """Checks that need nothing but the def itself (Atlas's preCreate and resolve rules)."""
    d = e.definition
    name = e.name

    def err(msg: str, path: str = "", hint: str | None = None) -> InputError:
        return InputError(msg, file=e.file, path=e.path + path, hint=hint)

    if not TYPE_NAME_RE.match(name):
        yield err(
            f"{name!r}: invalid type name (Atlas: ATLAS-400-00-019)",
            ".name",
            "type names are a letter followed by letters, digits, '_' or spaces (no '.' or '-')",
        )
    elif name.lower() in RESERVED_TYPE_NAMES:
        yield err(f"{name!r}: reserved type name (Atlas 2.4 fails with a 500, 2.5 refuses it)", ".name")
    seen: set[str] = set()
    for i, a in enumerate(e.attributes):
        ap = f".attributeDefs[{i}]"
        if not a.name.strip():
            yield err(f"{name}: attribute name is empty (Atlas: ATLAS-400-00-02B)", ap + ".name")
            continue
        if a.name in seen:
            yield err(f"{name}.{a.name}: attribute declared twice", ap + ".name")
        seen.add(a.name)
        try:
            referenced_names(a.typeName)
        except TypeNameError as exc:
            yield err(f"{name}.{a.name}: {exc}", ap + ".typeName")
            continue
        if a.cardinality in ("LIST", "SET") and not is_collection(a.typeName):
            yield err(
                f"{name}.{a.name}: cardinality {a.cardinality} needs an array<...> type, not {a.typeName!r} "
                "(Atlas: ATLAS-400-00-012)",
                ap + ".cardinality",
            )
    if isinstance(d, EnumDef):
        values: set[str] = set()
        for i, el in enumerate(d.elementDefs):
            if el.value in values:
                yield err(f"{name}: enum value {el.value!r} listed twice", f".elementDefs[{i}].value")
            values.add(el.value)
    if isinstance(d, RelationshipDef):
        ends = (("endDef1", d.endDef1), ("endDef2", d.endDef2))
        for key, end in ends:
            if not end.name.strip():
                yield err(f"{name}: {key}.name is empty (Atlas: ATLAS-400-00-02B)", f".{key}.name")
            if end.cardinality == "LIST":
                yield err(
                    f"{name}: {key} cardinality LIST is not allowed (Atlas: ATLAS-400-00-034)", f".{key}"
                )
        containers = [k for k, end in ends if end.isContainer]
        cat = d.relationshipCategory
        if len(containers) == 2:
            yield err(f"{name}: both ends are containers (Atlas: ATLAS-400-00-02D)")
        elif cat == "ASSOCIATION" and containers:
            yield err(
                f"{name}: an ASSOCIATION cannot have a container end (Atlas: ATLAS-400-00-030)",
                f".{containers[0]}.isContainer",
                "use AGGREGATION or COMPOSITION, or set isContainer false",
            )
        elif cat in ("AGGREGATION", "COMPOSITION") and not containers:
            code = "031" if cat == "COMPOSITION" else "032"
            yield err(f"{name}: a {cat} needs one container end (Atlas: ATLAS-400-00-{code})")
        elif cat == "COMPOSITION":
            child_key, child = next((k, end) for k, end in ends if not end.isContainer)
            if child.cardinality == "SET":
                yield err(
                    f"{name}: the child end of a COMPOSITION must be SINGLE (Atlas: ATLAS-400-00-033)",
                    f".{child_key}.cardinality",
                )


def describe(entry: TypeEntry) -> str:
    """A short description of a def for plan output: ``entity, superTypes DataSet, 3 attributes``."""
    d = entry.definition
    parts = [entry.category.lower()]
    if entry.super_types:
        parts.append("superTypes " + ", ".join(entry.super_types))
    if isinstance(d, RelationshipDef):
        parts.append(
            f"{d.relationshipCategory} {d.endDef1.type}.{d.endDef1.name} <-> {d.endDef2.type}.{d.endDef2.name}"
        )
    if isinstance(d, EnumDef):
        parts.append(counted(len(d.elementDefs), "value"))
    elif entry.attributes:
        parts.append(counted(len(entry.attributes), "attribute"))
    return ", ".join(parts)


def dumps(body: Mapping[str, Any]) -> str:
    return json.dumps(body, indent=2, sort_keys=True)
