"""A profile = typedef bundle + Jinja templates + qualified-name conventions (in the templates).

Built-in profiles live in the top-level ``templates/<name>/`` (with ``profile.toml``) and
``typedefs/<name>/``. A user profile is a folder with a ``profile.toml``, its templates, and either a
``typedefs/`` subfolder or a ``typedefs = [...]`` list naming bundle folders or built-in profiles.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas_sync.errors import ConfigError
from atlas_sync.render.schema import EntitySchema
from atlas_sync.resources import builtin_dir

# ``bi`` (optional): the template of BI datasets, charts and dashboards (lineage/bi.py), which also sees
# ``charts`` (references to a dashboard's charts); without it they render with the dataset template.
TEMPLATE_KINDS = ("dataset", "column", "process", "column_lineage", "bi")


@dataclass(frozen=True)
class BookkeepingNames:
    """Names of the string attributes of a profile's types that hold atlas-sync's bookkeeping (each
    ``None``: the profile has none): ``digest``, the digest of what atlas-sync last wrote
    (reconcile.digest: a re-sync reads in full only what may have changed); ``key``, an indexed key of
    the domain and the owning job (reconcile.bookkeeping: the domain and a job are listed by it on
    Atlas's index); ``metadata``, what atlas-sync added of an entity's classifications, labels, terms
    and business attributes (reconcile.metadata: a re-sync removes only those)."""

    digest: str | None = None
    key: str | None = None
    metadata: str | None = None

    def items(self) -> list[tuple[str, str | None]]:
        return [("digest", self.digest), ("key", self.key), ("metadata", self.metadata)]


@dataclass
class Profile:
    name: str
    template_dir: Path
    typedef_sources: list[str | Path]
    templates: dict[str, str]
    reader_options: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    # Attributes written only when an entity is created (ownership of shared datasets).
    create_only_attributes: list[str] = field(default_factory=list)
    # the attributes of the profile's types that atlas-sync keeps its bookkeeping in (reconcile.bookkeeping)
    bookkeeping: BookkeepingNames = field(default_factory=lambda: BookkeepingNames())
    # native profiles (no attribute of ours on Atlas's types): the business metadata and its string
    # attribute that record what atlas-sync added (reconcile.metadata), ``("atlasSync", "metadata")``
    metadata_record: tuple[str, str] | None = None
    # the profile's metadata rules file (lineage.rules), used when a sync names none
    metadata_rules: Path | None = None
    # Atlas's own models (hive_table, hdfs_path, ...) are known to the schema without being registered
    native_types: bool = False
    # mapping.toml (a native profile's mapping table; docs/existing-atlas.md)
    mapping_file: Path | None = None
    # the metadata namespaces a native profile's names use (render.native.Namespaces; set by Publisher)
    namespaces: Any = None
    _schema: EntitySchema | None = None
    _mapping: Any = None
    _env: Any = None
    _fingerprint: str | None = None

    def environment(self, build: Any) -> Any:
        """The profile's Jinja environment, built once (templates are compiled on first use and cached)."""
        if self._env is None:
            self._env = build(self)
        return self._env

    @property
    def schema(self) -> EntitySchema:
        """The profile's entity types, read through the typedef engine (validated, same files)."""
        if self._schema is None:
            from atlas_sync.typedefs import load_bundle

            doc: dict[str, list[dict[str, Any]]] = {"entityDefs": [], "relationshipDefs": []}
            entries = load_bundle(*self.typedef_sources).entries.values() if self.typedef_sources else []
            for entry in entries:
                if entry.category == "ENTITY":
                    doc["entityDefs"].append(entry.atlas())
                elif entry.category == "RELATIONSHIP":
                    doc["relationshipDefs"].append(entry.atlas())
            schema = EntitySchema.with_builtins()
            if self.native_types:
                from atlas_sync.resources import atlas_models

                schema.add_typedefs(atlas_models())
            schema.add_typedefs(doc)
            self._schema = schema
        return self._schema

    def mapping(self, env: Any) -> Any:
        """The compiled mapping table (``None`` for a profile without one), compiled once in ``env``."""
        if self.mapping_file is None:
            return None
        if self._mapping is None:
            from atlas_sync.render.native import load_mapping

            self._mapping = load_mapping(self.mapping_file, env)
        return self._mapping

    def entity_types(self) -> list[str]:
        """Every entity type this profile's bundles declare (the scope of reconcile and teardown); for a
        native profile, the types its mapping table produces."""
        if self.mapping_file is not None:
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            from atlas_sync.render.native import load_mapping

            return sorted(load_mapping(self.mapping_file, ImmutableSandboxedEnvironment()).types())
        return [
            t
            for t in self.schema.own_attributes
            if t not in ("Referenceable", "Asset", "DataSet", "Process", "Infrastructure")
        ]

    def fingerprint(self) -> str:
        """A digest of everything of the profile that decides what it renders: its folder's files,
        its typedef bundles, its rules and mapping files, and atlas-sync's render code (a receipt of
        a sync made with other templates or another atlas-sync does not vouch for this one)."""
        if self._fingerprint is None:
            import hashlib

            import atlas_sync
            from atlas_sync.typedefs.bundle import resolve_source

            h = hashlib.blake2b(digest_size=16)
            h.update(f"{self.name}\x00{atlas_sync.__version__}".encode())
            code = Path(atlas_sync.__file__).parent
            places = [self.template_dir, code / "render", code / "reconcile" / "digest.py"]
            places += [p for p in (self.metadata_rules, self.mapping_file) if p is not None]
            files = [  # (name, file): names relative to their place, so that any checkout gives one digest
                (str(f.relative_to(place)) if f != place else f.name, f)
                for place in places
                for f in (sorted(place.rglob("*")) if place.is_dir() else [place])
                if f.is_file() and f.suffix != ".pyc"
            ]
            files += [(f.name, f) for source in self.typedef_sources for f in resolve_source(source)]
            for name, f in files:
                h.update(f"\x00{name}\x00".encode())
                h.update(f.read_bytes())
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def root_types(self) -> list[str]:
        """Types whose supertypes are all outside the bundle: searching them (with subtypes) covers the scope."""
        own = set(self.entity_types())
        return [
            t for t in self.entity_types() if not any(s in own for s in self.schema.supertypes.get(t, []))
        ]


def load_profile(name_or_path: str | Path) -> Profile:
    """Load a built-in profile by name (``lineage``, ``pico``) or a user profile folder.

    Built-in profiles are loaded once per process (their compiled templates are reused)."""
    if not Path(name_or_path).is_dir():
        return _builtin_profile(str(name_or_path))
    return _load_profile(name_or_path)


@functools.lru_cache(maxsize=8)
def _builtin_profile(name: str) -> Profile:
    return _load_profile(name)


def _load_profile(name_or_path: str | Path) -> Profile:
    p = Path(name_or_path)
    if p.is_dir():
        folder = p
        default_typedefs: list[str | Path] = [folder / "typedefs"] if (folder / "typedefs").is_dir() else []
    else:
        folder = builtin_dir("templates") / str(name_or_path)
        default_typedefs = [str(name_or_path)]
        if not folder.is_dir():
            from atlas_sync.resources import builtin_profiles

            raise ConfigError(
                f"unknown profile {str(name_or_path)!r}",
                hint=f"built-in profiles: {', '.join(builtin_profiles())}; or give a profile folder",
            )
    cfg_file = folder / "profile.toml"
    cfg: dict[str, Any] = {}
    if cfg_file.is_file():
        try:
            cfg = tomllib.loads(cfg_file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{cfg_file}: {exc}") from None
    for old in ("scope_attribute", "job_key_attribute"):
        if old in cfg:
            raise ConfigError(
                f"{cfg_file}: {old} is gone: one indexed key_attribute holds the domain's and the job's key",
                hint="replace scope_attribute and job_key_attribute with key_attribute (docs/profiles.md)",
            )
    sources: list[str | Path] = []
    for s in cfg.get("typedefs", []) or []:
        rel = folder / s
        sources.append(rel if rel.exists() else s)
    native_types = bool(cfg.get("native_types", False))
    if native_types and "typedefs" in cfg:
        default_typedefs = []  # registers only what it lists (the atlas profile: nothing)
    mapping_file = None
    if cfg.get("mapping"):
        mapping_file = folder / str(cfg["mapping"])
        if not mapping_file.is_file():
            raise ConfigError(f"{cfg_file}: mapping {cfg['mapping']!r} not found in {folder}")
    templates = dict(cfg.get("templates") or {})
    for kind in TEMPLATE_KINDS:
        if kind not in templates and (folder / f"{kind}.json.j2").is_file():
            templates[kind] = f"{kind}.json.j2"
    for kind, tpl in templates.items():
        if kind not in TEMPLATE_KINDS:
            raise ConfigError(
                f"{cfg_file}: unknown template kind {kind!r} (one of {', '.join(TEMPLATE_KINDS)})"
            )
        if not (folder / tpl).is_file():
            raise ConfigError(f"{cfg_file}: template {tpl!r} for {kind} not found in {folder}")
    for kind in ("dataset", "process"):
        if kind not in templates:
            raise ConfigError(f"profile {folder}: needs a {kind} template ({kind}.json.j2)")
    return Profile(
        name=str(cfg.get("name") or (p.name if p.is_dir() else name_or_path)),
        template_dir=folder,
        typedef_sources=sources or default_typedefs,
        templates=templates,
        reader_options=dict(cfg.get("reader_options") or {}),
        description=str(cfg.get("description", "")),
        create_only_attributes=list(cfg.get("create_only_attributes") or []),
        bookkeeping=BookkeepingNames(
            digest=_attribute_name(cfg, cfg_file, "digest_attribute"),
            key=_attribute_name(cfg, cfg_file, "key_attribute"),
            metadata=_attribute_name(cfg, cfg_file, "metadata_attribute"),
        ),
        metadata_record=_record_name(cfg, cfg_file),
        metadata_rules=_rules_file(cfg, cfg_file, folder),
        native_types=native_types,
        mapping_file=mapping_file,
    )


def _attribute_name(cfg: dict[str, Any], cfg_file: Path, key: str) -> str | None:
    value = cfg.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.isidentifier():
        raise ConfigError(
            f"{cfg_file}: {key} must be the name of a string attribute of the profile's types, not {value!r}"
        )
    return value


def _record_name(cfg: dict[str, Any], cfg_file: Path) -> tuple[str, str] | None:
    value = cfg.get("metadata_record")
    if value is None:
        return None
    bm, _, attr = value.partition(".") if isinstance(value, str) else ("", "", "")
    if not (bm.isidentifier() and attr.isidentifier()):
        raise ConfigError(
            f"{cfg_file}: metadata_record must name a business metadata and its attribute "
            f"(e.g. 'atlasSync.metadata'), not {value!r}"
        )
    return bm, attr


def _rules_file(cfg: dict[str, Any], cfg_file: Path, folder: Path) -> Path | None:
    value = cfg.get("metadata_rules")
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{cfg_file}: metadata_rules must be a file name (relative to {folder})")
    path = folder / value
    if not path.is_file():
        raise ConfigError(f"{cfg_file}: metadata_rules {value!r} not found in {folder}")
    return path
