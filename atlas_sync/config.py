"""Settings: flags > environment > ``atlas-sync.toml`` > defaults, remembering where each value came from.

``load_settings()`` builds a :class:`Settings`; ``settings.sources`` says, per field, ``default``,
``file <path>``, ``env <VAR>`` or ``flag <--name>``. Passwords are ``SecretStr`` and never printed;
they come from ``ATLAS_PASSWORD``, a password file, or an interactive prompt, never from a flag or a
config file (both end up in shell history, process lists or git).
"""

from __future__ import annotations

import difflib
import logging
import os
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, ValidationError, field_validator

from atlas_sync.errors import ConfigError
from atlas_sync.secrets import read_secret_file

log = logging.getLogger("atlas_sync.config")

CONFIG_FILE_NAME = "atlas-sync.toml"

# Environment variable of each setting.
ENV_VARS: dict[str, str] = {
    "url": "ATLAS_URL",
    "username": "ATLAS_USERNAME",
    "password": "ATLAS_PASSWORD",
    "password_file": "ATLAS_PASSWORD_FILE",
    "ca_bundle": "ATLAS_CA_BUNDLE",
    "insecure": "ATLAS_INSECURE",
    "kerberos": "ATLAS_KERBEROS",
    "connect_timeout": "ATLAS_CONNECT_TIMEOUT",
    "read_timeout": "ATLAS_READ_TIMEOUT",
    "retries": "ATLAS_RETRIES",
    "max_retry_seconds": "ATLAS_MAX_RETRY_SECONDS",
    "data_dir": "ATLAS_SYNC_DATA_DIR",
    "domain": "ATLAS_SYNC_DOMAIN",
    "metadata_namespace": "ATLAS_SYNC_METADATA_NAMESPACE",
    "missing_datasets": "ATLAS_SYNC_MISSING_DATASETS",
    "metadata_rules": "ATLAS_SYNC_METADATA_RULES",
    "job": "ATLAS_SYNC_JOB",
    "profile": "ATLAS_SYNC_PROFILE",
    "batch_size": "ATLAS_SYNC_BATCH_SIZE",
    "max_batch_bytes": "ATLAS_SYNC_MAX_BATCH_BYTES",
    "parallel": "ATLAS_SYNC_PARALLEL",
    "max_delete_percent": "ATLAS_SYNC_MAX_DELETE_PERCENT",
}
CONFIG_ENV_VAR = "ATLAS_SYNC_CONFIG"

# Settings that may not be written in a config file (files get committed and shared).
_NOT_IN_FILE = {"password": 'use password_file = "..." or the ATLAS_PASSWORD environment variable'}
# Settings that are TOML tables in a config file.
_TABLE_FIELDS = {"metadata_namespaces"}
# Path settings given in a config file are relative to the file's folder.
_PATH_FIELDS = ("password_file", "ca_bundle", "data_dir", "metadata_rules")


def normalize_base_url(url: str) -> str:
    """``http://host:21000`` from ``http://host:21000/``, ``.../api/atlas`` or ``.../api/atlas/v2``.

    Credentials in the URL are refused: they would end up in shell history and logs.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"Atlas URL {url!r} is not an http(s) URL",
            hint="give it like https://atlas.example.com:21000 (ATLAS_URL or --url)",
        )
    if parts.password is not None:
        raise ConfigError(
            "the Atlas URL contains a password",
            hint="remove it from the URL and set ATLAS_PASSWORD or ATLAS_PASSWORD_FILE instead",
        )
    path = parts.path.rstrip("/")
    for suffix in ("/api/atlas/v2", "/api/atlas"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, path, "", ""))


class Settings(BaseModel):
    """Effective atlas-sync settings. Build with :func:`load_settings`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    url: str | None = Field(None, description="Atlas base URL; unset = the embedded emulator")
    username: str = Field("admin", description="Atlas user")
    password: SecretStr | None = Field(None, description="Atlas password (env ATLAS_PASSWORD only)")
    password_file: Path | None = Field(None, description="file holding the password (first line)")
    ca_bundle: Path | None = Field(None, description="CA bundle (PEM) to verify Atlas's TLS certificate")
    insecure: bool = Field(False, description="skip TLS verification (test servers only)")
    kerberos: bool = Field(False, description="authenticate with Kerberos (needs requests-kerberos)")
    connect_timeout: float = Field(10.0, gt=0, description="seconds to connect")
    read_timeout: float = Field(60.0, gt=0, description="seconds to wait for an answer")
    retries: int = Field(4, ge=0, description="retries of a failed request (connection errors, 429, 5xx)")
    max_retry_seconds: float = Field(120.0, ge=0, description="give up retrying after this many seconds")
    data_dir: Path = Field(Path(".atlas-sync"), description="state of the embedded emulator")
    domain: str | None = Field(None, description="domain: suffix @<domain> of every qualified name")
    job: str | None = Field(None, description="job scope of a sync (default: derived from the input)")
    metadata_namespace: str | None = Field(
        None, description="native profiles (atlas): Atlas's metadata namespace in names (default primary)"
    )
    missing_datasets: Literal["create", "skip", "fail"] = Field(
        "create", description="native profiles: a dataset missing from Atlas is created, left out or refused"
    )
    metadata_namespaces: dict[str, str] = Field(
        default_factory=dict,
        description="native profiles: metadata namespace per source namespace (exact or fnmatch pattern)",
    )
    metadata_rules: Path | None = Field(
        None,
        description="metadata rules file (classifications, terms, owners, ... by pattern; docs/metadata.md)",
    )
    profile: str = Field("lineage", description="profile: typedefs + templates + naming")
    batch_size: int = Field(500, ge=1, description="entities per request")
    max_batch_bytes: int = Field(4_000_000, ge=1024, description="JSON bytes per request")
    parallel: int = Field(
        2,
        ge=1,
        description="requests in flight against Atlas at most, reads and writes (write batches: never two on the same entities)",
    )
    max_delete_percent: float = Field(50.0, ge=0, le=100, description="refuse larger deletes without --force")

    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    @field_validator("url", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            if not value:
                return None
            return normalize_base_url(value)
        return value

    @property
    def sources(self) -> dict[str, str]:
        """Where each setting came from: ``default``, ``file <path>``, ``env <VAR>``, ``flag <--x>``."""
        return {name: self._sources.get(name, "default") for name in type(self).model_fields}

    @property
    def embedded(self) -> bool:
        """True when no Atlas URL is set: commands use the embedded emulator."""
        return self.url is None

    def resolve_password(self, prompt: Callable[[str], str] | None = None) -> str:
        """The password to use for ``username``.

        Order: ``password`` (ATLAS_PASSWORD) > ``password_file`` > the embedded emulator's ``admin``
        (only when no URL is set) > ``prompt``. For a real Atlas no password is assumed: without a
        prompt this raises :class:`ConfigError` with a hint.
        """
        if self.password is not None:
            return self.password.get_secret_value()
        if self.password_file is not None:
            return read_password_file(self.password_file)
        if self.url is None:
            return "admin"
        if prompt is not None:
            return prompt(f"Atlas password for {self.username} at {self.url}")
        raise ConfigError(
            f"no password for Atlas user {self.username!r} at {self.url}",
            hint="set ATLAS_PASSWORD or ATLAS_PASSWORD_FILE (or --password-file FILE); atlas-sync does "
            "not assume admin/admin for a real Atlas",
        )

    def describe(self) -> list[dict[str, Any]]:
        """``[{key, value, source}]`` for ``config show``; secrets masked, paths as text."""
        rows = []
        for name, source in self.sources.items():
            value: Any = getattr(self, name)
            if isinstance(value, SecretStr):
                value = "********"
            elif isinstance(value, Path):
                value = str(value)
            rows.append({"key": name, "value": value, "source": source, "env": ENV_VARS.get(name)})
        return rows


def read_password_file(path: str | Path) -> str:
    """The first line of a password file (trailing newline stripped); warns if others can read it."""
    return read_secret_file(path, hint="check ATLAS_PASSWORD_FILE / --password-file")


def find_config_file(config_file: str | Path | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The config file to read: the given one (must exist), ``$ATLAS_SYNC_CONFIG``, or ./atlas-sync.toml."""
    if config_file is not None:
        path = Path(config_file).expanduser()
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist", hint="check --config")
        return path
    if env.get(CONFIG_ENV_VAR):
        path = Path(env[CONFIG_ENV_VAR]).expanduser()
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist", hint=f"check {CONFIG_ENV_VAR}")
        return path
    path = cwd / CONFIG_FILE_NAME
    return path if path.is_file() else None


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of a TOML file; unknown keys, secrets and bad TOML are :class:`ConfigError`."""
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    known = set(Settings.model_fields)
    for key, value in data.items():
        if key in _NOT_IN_FILE:
            raise ConfigError(f"{path}: key {key!r} is not allowed in a config file", hint=_NOT_IN_FILE[key])
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            raise ConfigError(
                f"{path}: unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
                hint="known keys: " + ", ".join(k for k in Settings.model_fields if k not in _NOT_IN_FILE),
            )
        if isinstance(value, dict) and key not in _TABLE_FIELDS:
            raise ConfigError(f"{path}: key {key!r} must be a value, not a table")
    for key in _PATH_FIELDS:
        if isinstance(data.get(key), str):
            p = Path(data[key]).expanduser()
            data[key] = p if p.is_absolute() else path.parent / p
    return data


def load_settings(
    config_file: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    flag_names: Mapping[str, str] | None = None,
) -> Settings:
    """Effective settings: ``overrides`` (flags; None values ignored) > env > config file > defaults.

    ``flag_names`` maps a setting to the flag that set it (for ``sources``). Empty environment
    variables count as unset. Invalid values are a :class:`ConfigError` naming the file/variable/flag.
    """
    env = os.environ if env is None else env
    cwd_path = Path(cwd) if cwd is not None else Path.cwd()
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}

    path = find_config_file(config_file, env, cwd_path)
    if path is not None:
        for key, value in read_config_file(path).items():
            values[key] = value
            sources[key] = f"file {path}"
    for key, var in ENV_VARS.items():
        raw = env.get(var)
        if raw is not None and raw.strip() != "":
            values[key] = raw if key == "password" else raw.strip()
            sources[key] = f"env {var}"
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key not in Settings.model_fields:
            raise ConfigError(f"unknown setting {key!r}")
        values[key] = value
        flag = (flag_names or {}).get(key)
        sources[key] = f"flag {flag}" if flag else "flag"
    try:
        settings = Settings(**values)
    except ValidationError as exc:
        raise _config_error(exc, sources) from None
    except ConfigError as exc:  # raised by a validator (the URL): say where the value came from
        source = sources.get("url", "default")
        where = source.split(" ", 1)[1] if " " in source else "setting 'url'"
        if source.startswith("file "):
            where += ": key 'url'"
        raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None
    settings._sources = sources
    return settings


def _config_error(exc: ValidationError, sources: Mapping[str, str]) -> ConfigError:
    first = exc.errors()[0]
    key = str(first["loc"][0]) if first.get("loc") else "?"
    source = sources.get(key, "default")
    where = {
        "env": lambda s: s.split(" ", 1)[1],
        "file": lambda s: f"{s.split(' ', 1)[1]}: key {key!r}",
        "flag": lambda s: s.split(" ", 1)[1] if " " in s else f"setting {key!r}",
    }.get(source.split(" ", 1)[0], lambda s: f"setting {key!r}")(source)
    # Never echo the input value (it could be a secret); pydantic's message names the expected type.
    return ConfigError(f"{where}: {first['msg']}", hint=f"fix {key} (see `atlas-sync config show`)")


def load_client_properties(path: str | Path) -> dict[str, str]:
    """librdkafka settings from a ``key=value`` file (Kafka's ``client.properties`` style; ``#`` comments).

    Security settings (``security.protocol``, ``sasl.*``, ``ssl.*``) belong here, not on the command line:
    a password in argv is visible to every user of the machine.
    """
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read Kafka client properties {p}: {exc.strerror}") from None
    out: dict[str, str] = {}
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            # the line itself is not shown: it may hold a password written another way
            raise ConfigError(f"{p}:{n}: expected key=value (no '=' on this line)")
        out[key.strip()] = value.strip()
    return out
