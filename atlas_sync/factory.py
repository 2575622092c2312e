"""Wiring: settings -> transport -> client.

The client (:mod:`atlas_sync.atlas`) speaks HTTP and knows neither the settings nor the embedded
emulator; the emulator is a server model and knows no client. This module sits above both and
builds the client a configuration describes, the way openlineage-python's ``factory`` builds a
transport from its config.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import requests
from requests.auth import AuthBase

from atlas_sync.atlas.client import AtlasClient, kerberos_auth
from atlas_sync.atlas.hook import DEFAULT_TOPIC, AtlasHookClient, HookConfig, HookProducer
from atlas_sync.atlas.retry import RetryPolicy
from atlas_sync.config import load_client_properties
from atlas_sync.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable

    from atlas_sync.config import Settings
    from atlas_sync.emulator import Emulator

# The host the in-process transport is mounted on; never resolved (``.invalid`` is reserved).
EMBEDDED_URL = "http://atlas-emulator.invalid"


def embedded_client(
    data_dir: str | Path | None = ".atlas-sync", *, emulator: Emulator | None = None, **kwargs: Any
) -> AtlasClient:
    """A client of the embedded emulator, mounted in-process (no socket).

    State lives in ``<data_dir>/atlas.db`` (created if missing); ``data_dir=None`` keeps it in
    memory. Pass ``emulator=`` to share an existing :class:`~atlas_sync.emulator.Emulator`.
    Other keyword arguments go to :class:`~atlas_sync.atlas.AtlasClient`.
    """
    # Lazy: a client of a real Atlas never loads the emulator.
    from atlas_sync.emulator import Emulator
    from atlas_sync.emulator.adapter import EmulatorAdapter

    where = "in memory"
    if emulator is None:
        db_path: Path | None = None
        if data_dir is not None:
            try:
                Path(data_dir).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(
                    f"cannot create the emulator's data folder {data_dir}: {exc.strerror}",
                    hint="set ATLAS_SYNC_DATA_DIR (or data_dir in atlas-sync.toml) to a writable folder",
                ) from None
            db_path = Path(data_dir) / "atlas.db"
            where = str(db_path)
        emulator = Emulator(db_path)
    session = requests.Session()
    session.mount(EMBEDDED_URL, EmulatorAdapter(emulator))
    kwargs.setdefault("auth", ("admin", "admin"))
    client = AtlasClient(EMBEDDED_URL, session=session, **kwargs)
    client.emulator = emulator
    client.target = f"embedded emulator ({where})"
    return client


def client_from_settings(settings: Settings, *, prompt: Callable[[str], str] | None = None) -> AtlasClient:
    """The client the settings describe: the embedded emulator when ``settings.url`` is None.

    ``prompt`` (a callable ``prompt(text) -> str``) is used to ask for a missing password; without
    it a missing password for a real Atlas is a :class:`~atlas_sync.errors.ConfigError` with a hint.
    """
    common: dict[str, Any] = {
        "timeout": (settings.connect_timeout, settings.read_timeout),
        "retry": RetryPolicy(max_attempts=settings.retries + 1, max_total=settings.max_retry_seconds),
        "batch_size": settings.batch_size,
        "max_batch_bytes": settings.max_batch_bytes,
        "max_in_flight": settings.parallel,
    }
    if settings.url is None:
        return embedded_client(settings.data_dir, **common)
    auth: tuple[str, Any] | AuthBase | None
    if settings.kerberos:
        auth = kerberos_auth()
    else:
        auth = (settings.username, settings.resolve_password(prompt=prompt))
    verify: bool | str = True
    if settings.insecure:
        verify = False
    elif settings.ca_bundle:
        verify = str(settings.ca_bundle)
    client = AtlasClient(settings.url, auth=auth, verify=verify, **common)
    if settings.kerberos:
        client.target = f"Atlas at {client.base_url} (Kerberos)"
    return client


def hook_client(
    rest: AtlasClient,
    bootstrap_servers: str,
    *,
    topic: str | None = None,
    kafka_config: str | Path | None = None,
    producer: Any = None,
) -> AtlasHookClient:
    """The ``ATLAS_HOOK`` write path over ``rest``: entity writes as hook messages to ``topic`` on the
    Kafka brokers ``bootstrap_servers``, everything else through ``rest``. ``kafka_config``: a
    ``key=value`` file of librdkafka settings (security settings stay out of argv). ``producer``: a
    Kafka producer to use instead of confluent-kafka's (tests)."""
    config = HookConfig(
        bootstrap_servers=bootstrap_servers,
        topic=topic or DEFAULT_TOPIC,
        kafka_config=load_client_properties(kafka_config) if kafka_config else {},
    )
    return AtlasHookClient(rest, HookProducer(config, producer=producer))


__all__ = ["EMBEDDED_URL", "client_from_settings", "embedded_client", "hook_client"]
