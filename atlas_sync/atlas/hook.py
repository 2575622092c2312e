"""Atlas hook notifications as a write path: entity writes go to Atlas's ``ATLAS_HOOK`` Kafka topic.

Atlas's own hooks (Hive, Sqoop, Storm...) do not call the REST API: they publish notification messages to
``ATLAS_HOOK`` and Atlas consumes them at its own pace. :class:`AtlasHookClient` does the same for the
publisher's writes: it looks like an :class:`~atlas_sync.atlas.AtlasClient` to the reconcile layer, reads
through REST (plans need to know what Atlas holds), and turns

* ``upsert_entities`` into ``ENTITY_CREATE_V2`` (a batch holding new entities) and ``ENTITY_FULL_UPDATE_V2``
  (updates of entities that exist) messages,
* ``delete_entities`` into ``ENTITY_DELETE_V2`` messages (entities named by type and ``qualifiedName``),

each in Atlas's notification envelope as ``AbstractNotification.createNotificationMessages`` writes it:
``{"version": {"version": "1.0.0", ...}, "msgCompressionKind": "NONE", "msgSplitIdx": 1,
"msgSplitCount": 1, "msgSourceIP": ..., "msgCreatedBy": ..., "msgCreationTime": <ms>, "spooled": false,
"message": {"type": ..., "user": ..., "entities": {...}}}``. Atlas splits or gzips a message only when it is
over ``atlas.notification.message.max.length.bytes`` (1,000,000 by default, 512 of them for the envelope);
its consumer takes plain messages as they are, so this writer keeps every message under ``max_message_bytes``
by sending the entities in several messages (references to an entity of another message by type and
``qualifiedName``, which Atlas resolves when it processes them in order).

All messages carry one key, so they land in one partition of ``ATLAS_HOOK`` and Atlas applies them in the
order sent (creates before the updates and deletes that follow). Nothing is applied when ``apply`` returns:
the result says what was *queued*; :func:`wait_until` polls Atlas (through REST) until it shows the result.
Hard deletes (purge) and relationship repairs have no hook message: they are refused / skipped here.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from atlas_sync.atlas.client import AtlasClient
from atlas_sync.atlas.interface import Capabilities
from atlas_sync.atlas.mutation import MutationResult, is_placeholder
from atlas_sync.atlas.retry import RetryPolicy
from atlas_sync.atlas.stats import ClientStats
from atlas_sync.errors import AtlasSyncError, ConfigError

if TYPE_CHECKING:
    from atlas_sync.atlas.interface import AtlasApi

log = logging.getLogger("atlas_sync.atlas.hook")

DEFAULT_TOPIC = "ATLAS_HOOK"
#: Atlas's default limit (1,000,000) less its 512-byte envelope allowance, less a margin for our own envelope.
DEFAULT_MAX_MESSAGE_BYTES = 900_000
MESSAGE_VERSION = {"version": "1.0.0", "versionParts": [1]}


class HookError(AtlasSyncError):
    """A hook notification could not be queued (Kafka refused it or did not acknowledge it in time)."""


@dataclass
class HookConfig:
    """Where hook notifications go. ``kafka_config`` (security settings, passwords) is never shown."""

    bootstrap_servers: str
    topic: str = DEFAULT_TOPIC
    kafka_config: Mapping[str, str] = field(default_factory=dict, repr=False)
    user: str | None = None  # the "user" of each message (Atlas authorizes hook messages by it)
    key: str = "atlas-sync"  # one key: one partition, Atlas applies the messages in order
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    flush_timeout: float = 60.0


def envelope(
    message: Mapping[str, Any], *, created_at_ms: int | None = None, source: str = ""
) -> dict[str, Any]:
    """A hook message in Atlas's ``AtlasNotificationMessage`` envelope (uncompressed, not split)."""
    return {
        "version": dict(MESSAGE_VERSION),
        "msgCompressionKind": "NONE",
        "msgSplitIdx": 1,
        "msgSplitCount": 1,
        "msgSourceIP": source,
        "msgCreatedBy": "atlas-sync",
        "msgCreationTime": int(time.time() * 1000) if created_at_ms is None else created_at_ms,
        "spooled": False,
        "message": dict(message),
    }


def _size(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode())


def _unique_ref(ref: Mapping[str, Any], names: Mapping[str, tuple[str, str]]) -> Any:
    guid = ref.get("guid")
    if isinstance(guid, str) and guid in names:
        type_name, qualified_name = names[guid]
        return {"typeName": type_name, "uniqueAttributes": {"qualifiedName": qualified_name}}
    return ref


def _rewrite_refs(entity: dict[str, Any], outside: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """References to placeholders of other messages, by type and qualifiedName instead."""
    if not outside:
        return entity
    out = dict(entity)
    for section in ("attributes", "relationshipAttributes"):
        attrs = entity.get(section)
        if not isinstance(attrs, dict):
            continue
        new: dict[str, Any] = {}
        for name, value in attrs.items():
            if isinstance(value, dict) and "guid" in value:
                value = _unique_ref(value, outside)
            elif isinstance(value, list):
                value = [_unique_ref(v, outside) if isinstance(v, dict) and "guid" in v else v for v in value]
            new[name] = value
        out[section] = new
    return out


def entity_messages(
    entities: Sequence[dict[str, Any]], user: str, *, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> list[dict[str, Any]]:
    """``ENTITY_CREATE_V2`` / ``ENTITY_FULL_UPDATE_V2`` messages (without envelope) for an upsert batch.

    Entities with a placeholder guid are new: they go in create messages, first; the others in full-update
    messages. A message holds as many entities as fit in ``max_bytes``; a reference to a new entity that
    sits in another message names it by type and ``qualifiedName``.
    """
    names = {
        str(e["guid"]): (str(e["typeName"]), str((e.get("attributes") or {}).get("qualifiedName")))
        for e in entities
        if is_placeholder(e.get("guid"))
    }
    creates = [e for e in entities if is_placeholder(e.get("guid"))]
    updates = [e for e in entities if not is_placeholder(e.get("guid"))]
    messages: list[dict[str, Any]] = []
    for kind, group in (("ENTITY_CREATE_V2", creates), ("ENTITY_FULL_UPDATE_V2", updates)):
        chunks: list[list[dict[str, Any]]] = []
        size = 0
        for e in group:
            n = _size(_rewrite_refs(e, names)) + 1  # as if every reference were rewritten: an upper bound
            if not chunks or size + n > max_bytes - 200:
                chunks.append([])
                size = 0
            chunks[-1].append(e)
            size += n
        for chunk in chunks:
            inside = {str(e.get("guid")) for e in chunk}
            outside = {g: k for g, k in names.items() if g not in inside}
            body = [_rewrite_refs(e, outside) for e in chunk]
            message = {"type": kind, "user": user, "entities": {"entities": body, "referredEntities": {}}}
            if _size(message) > max_bytes:
                raise HookError(
                    f"entity {body[0].get('typeName')} {names.get(str(chunk[0].get('guid')), ('', '?'))[1]} "
                    f"alone is over {max_bytes} bytes as a hook message",
                    hint="write it through REST (--write-path rest), or raise Atlas's "
                    "atlas.notification.message.max.length.bytes and --hook-max-message-bytes",
                )
            messages.append(message)
    return messages


def delete_messages(
    keys: Iterable[tuple[str, str]], user: str, *, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> list[dict[str, Any]]:
    """``ENTITY_DELETE_V2`` messages naming entities by type and ``qualifiedName``."""
    messages: list[dict[str, Any]] = []
    ids: list[dict[str, Any]] = []
    size = 0
    for type_name, qualified_name in keys:
        obj = {"typeName": type_name, "uniqueAttributes": {"qualifiedName": qualified_name}}
        n = _size(obj) + 1
        if ids and size + n > max_bytes - 200:
            messages.append({"type": "ENTITY_DELETE_V2", "user": user, "entities": ids})
            ids, size = [], 0
        ids.append(obj)
        size += n
    if ids:
        messages.append({"type": "ENTITY_DELETE_V2", "user": user, "entities": ids})
    return messages


class HookProducer:
    """Sends enveloped hook messages to the topic and waits until Kafka acknowledged every one."""

    def __init__(self, config: HookConfig, producer: Any = None) -> None:
        self.config = config
        if producer is None:
            try:
                from confluent_kafka import Producer
            except ImportError:  # pragma: no cover - depends on the installation
                raise ConfigError(
                    "the atlas-hook write path needs the confluent-kafka package",
                    hint="pip install 'atlas-sync[kafka]'",
                ) from None
            settings: dict[str, Any] = {
                "bootstrap.servers": config.bootstrap_servers,
                "enable.idempotence": True,  # no duplicate or reordered message on a producer retry
                "acks": "all",
                "message.max.bytes": max(1_000_000, config.max_message_bytes + 4096),
            }
            settings.update(config.kafka_config)
            producer = Producer(settings)
        self.producer = producer
        try:
            self.source = socket.gethostbyname(socket.gethostname())
        except OSError:
            self.source = ""

    def send(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Queue ``messages`` in order; returns how many Kafka acknowledged (all, or it raises)."""
        errors: list[str] = []

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(str(err))

        for message in messages:
            value = json.dumps(
                envelope(message, source=self.source), ensure_ascii=False, separators=(",", ":")
            )
            while True:
                try:
                    self.producer.produce(
                        self.config.topic,
                        value=value.encode(),
                        key=self.config.key.encode(),
                        on_delivery=delivered,
                    )
                    break
                except BufferError:  # the local queue is full: let it drain
                    self.producer.poll(0.5)
        left = self.producer.flush(self.config.flush_timeout)
        if left or errors:
            raise HookError(
                f"{len(errors) + left} of {len(messages)} hook messages were not acknowledged by Kafka"
                + (f": {errors[0]}" if errors else f" within {self.config.flush_timeout:.0f} s"),
                hint=f"is {self.config.bootstrap_servers} reachable, and may this user write to {self.config.topic}?",
            )
        return len(messages)


@dataclass
class Queued:
    """What the hook write path queued so far (entity counts and messages)."""

    created: int = 0
    updated: int = 0
    deleted: int = 0
    messages: int = 0

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


class AtlasHookClient:
    """An Atlas client whose entity writes go to ``ATLAS_HOOK``; every other call goes to ``rest``.

    The reconcile layer uses it as it uses :class:`~atlas_sync.atlas.AtlasClient` (both are
    :class:`~atlas_sync.atlas.interface.AtlasApi`). Writes return a :class:`~atlas_sync.atlas.MutationResult`
    with no guid assignments (Atlas assigns guids later, when it consumes the messages); ``requests``
    counts the messages queued. What differs from REST is in :attr:`capabilities`: writes are queued, and
    there is no purge and no relationship write. Metadata calls (classifications, labels, terms, business
    attributes), typedef writes and single-attribute updates go through REST.
    """

    def __init__(self, rest: AtlasClient, producer: HookProducer, *, user: str | None = None) -> None:
        self.rest = rest
        self.producer = producer
        self.user = user or producer.config.user or rest.username or "atlas-sync"
        self.queued = Queued()
        self.target = f"{rest.target}, writes to Kafka topic {producer.config.topic}"

    def __repr__(self) -> str:
        return f"AtlasHookClient({self.target!r})"

    @property
    def capabilities(self) -> Capabilities:
        return replace(
            self.rest.capabilities,
            hook_transport=True,
            queued_writes=True,
            relationship_writes=False,
            purge=False,
        )

    # ------------------------------------------------------------------ entity writes: hook messages

    def upsert_entities(self, entities: Sequence[dict[str, Any]], **_kw: Any) -> MutationResult:
        messages = entity_messages(entities, self.user, max_bytes=self.producer.config.max_message_bytes)
        sent = self.producer.send(messages)
        created = sum(1 for e in entities if is_placeholder(e.get("guid")))
        self.queued.created += created
        self.queued.updated += len(entities) - created
        self.queued.messages += sent
        return MutationResult(requests=sent)

    def delete_entities(self, guids: Iterable[str], **_: Any) -> MutationResult:
        # hard / before_retry are REST's: a hook message is a (soft) delete, retried by the producer
        wanted = list(dict.fromkeys(guids))
        if not wanted:
            return MutationResult()
        # the hook message names entities by unique attributes: read them (REST) once
        found = self.rest.get_entities(wanted, min_ext_info=True, ignore_relationships=True)
        keys = [
            (str(e["typeName"]), str((e.get("attributes") or {}).get("qualifiedName")))
            for e in found
            if e.get("status", "ACTIVE") == "ACTIVE"
        ]
        messages = delete_messages(keys, self.user, max_bytes=self.producer.config.max_message_bytes)
        sent = self.producer.send(messages)
        self.queued.deleted += len(keys)
        self.queued.messages += sent
        return MutationResult(requests=sent + 1)

    def purge_entities(self, guids: Iterable[str], **_: Any) -> MutationResult:
        raise AtlasSyncError(
            "purge (hard delete) has no Atlas hook message",
            hint="purge through REST (--write-path rest), or leave the entities soft-deleted",
        )

    def create_relationship(self, body: dict[str, Any]) -> dict[str, Any]:
        # the relationship repair of reconcile is a REST write (capabilities.relationship_writes)
        raise AtlasSyncError(
            "a relationship write has no Atlas hook message",
            hint="write through REST (--write-path rest)",
        )

    # ------------------------------------------------------------------ everything else: REST

    @property
    def stats(self) -> ClientStats:
        return self.rest.stats

    @property
    def retry(self) -> RetryPolicy:
        return self.rest.retry

    def note_one_type_per_search(self) -> None:
        self.rest.note_one_type_per_search()

    def server_time_ms(self) -> int:
        return self.rest.server_time_ms()

    def call(self, kind: str, method: str, path: str, **kw: Any) -> Any:
        return self.rest.call(kind, method, path, **kw)

    def status(self) -> str:
        return self.rest.status()

    def version(self) -> dict[str, Any]:
        return self.rest.version()

    def get_typedefs(
        self,
        type_: str | None = None,
        name: str | None = None,
        supertype: str | None = None,
        service_type: str | None = None,
    ) -> dict[str, Any]:
        return self.rest.get_typedefs(type_, name, supertype, service_type)

    def get_typedef_headers(self) -> list[dict[str, Any]]:
        return self.rest.get_typedef_headers()

    def get_typedef_by_name(self, name: str) -> dict[str, Any] | None:
        return self.rest.get_typedef_by_name(name)

    def create_typedefs(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.rest.create_typedefs(body)

    def update_typedefs(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.rest.update_typedefs(body)

    def delete_typedefs(self, body: dict[str, Any]) -> None:
        self.rest.delete_typedefs(body)

    def delete_typedef_by_name(self, name: str) -> None:
        self.rest.delete_typedef_by_name(name)

    def set_entity_attribute(self, guid: str, name: str, value: Any) -> MutationResult:
        return self.rest.set_entity_attribute(guid, name, value)

    def get_entity(self, guid: str, **kw: Any) -> dict[str, Any] | None:
        return self.rest.get_entity(guid, **kw)

    def get_entity_by_unique(self, type_name: str, qualified_name: str, **kw: Any) -> dict[str, Any] | None:
        return self.rest.get_entity_by_unique(type_name, qualified_name, **kw)

    def get_entities(self, guids: Iterable[str], **kw: Any) -> list[dict[str, Any]]:
        return self.rest.get_entities(guids, **kw)

    def get_entities_by_unique(
        self, type_name: str, qualified_names: Iterable[str], **kw: Any
    ) -> list[dict[str, Any]]:
        return self.rest.get_entities_by_unique(type_name, qualified_names, **kw)

    def get_relationship(self, guid: str) -> dict[str, Any]:
        return self.rest.get_relationship(guid)

    def search_basic(self, type_name: str, **kw: Any) -> Iterator[dict[str, Any]]:
        return self.rest.search_basic(type_name, **kw)

    def search_count(self, type_name: str, **kw: Any) -> int | None:
        return self.rest.search_count(type_name, **kw)

    def search_newest(self, type_name: str, **kw: Any) -> tuple[int | None, int | None]:
        return self.rest.search_newest(type_name, **kw)

    def lineage(self, guid: str, direction: str = "BOTH", depth: int = 3) -> dict[str, Any]:
        return self.rest.lineage(guid, direction, depth)

    def lineage_by_unique(
        self, type_name: str, qualified_name: str, direction: str = "BOTH", depth: int = 3
    ) -> dict[str, Any]:
        return self.rest.lineage_by_unique(type_name, qualified_name, direction, depth)


def wait_until(
    pending: Callable[[], int],
    timeout: float,
    *,
    interval: float = 2.0,
    progress: Callable[[int, float], None] | None = None,
) -> int:
    """Call ``pending()`` (changes Atlas does not show yet) until it is 0 or ``timeout`` seconds passed.

    Returns the last count (0: Atlas shows everything). ``progress(left, elapsed)`` after each check.
    """
    t0 = time.monotonic()
    while True:
        left = pending()
        elapsed = time.monotonic() - t0
        if progress is not None:
            progress(left, elapsed)
        if left == 0 or elapsed >= timeout:
            return left
        time.sleep(min(interval, max(0.0, timeout - elapsed)))


if TYPE_CHECKING:  # mypy checks that both clients are what the layers above are written against

    def _both_are_atlas_apis(rest: AtlasClient, hook: AtlasHookClient) -> list[AtlasApi]:
        return [rest, hook]
