"""The Atlas interface the layers above the transport are written against, and how clients differ.

Three clients satisfy :class:`AtlasApi`: the REST client (:class:`~atlas_sync.atlas.AtlasClient`),
the same client mounted on the embedded emulator (:func:`atlas_sync.factory.embedded_client`), and the
``ATLAS_HOOK`` client (:class:`~atlas_sync.atlas.hook.AtlasHookClient`: entity writes as Kafka messages,
everything else through REST). Where they behave differently, :class:`Capabilities` says so: callers
ask ``client.capabilities`` instead of probing for attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from atlas_sync.atlas.mutation import MutationResult
from atlas_sync.atlas.retry import RetryPolicy
from atlas_sync.atlas.stats import ClientStats

BeforeRetry = Callable[[int | None, str], None]


@dataclass(frozen=True)
class Capabilities:
    """What a client can do, where clients differ."""

    #: entity writes go to Atlas's ``ATLAS_HOOK`` Kafka topic (reads, metadata and typedef calls stay on REST)
    hook_transport: bool = False
    #: writes are applied when Atlas consumes them, not when the call returns: no guid assignments,
    #: nothing to read back or settle afterwards
    queued_writes: bool = False
    #: where :meth:`AtlasApi.server_time_ms` comes from: the ``Date`` header of the server's first answer
    #: (to the second), or the clock of this process (the embedded emulator runs in it)
    server_clock: Literal["date-header", "in-process"] = "date-header"
    #: basic search takes several type names joined by commas (Atlas 2.2+); False once the server refused
    #: it (Atlas 2.1: ``ATLAS-400-00-00A``): one search per type
    joined_type_search: bool = True
    #: :meth:`AtlasApi.create_relationship` writes (the REST repair of a relationship Atlas left DELETED)
    relationship_writes: bool = True
    #: :meth:`AtlasApi.purge_entities` hard-deletes (the hook has no purge message)
    purge: bool = True


class AtlasApi(Protocol):
    """The calls atlas-sync makes on Atlas (signatures as :class:`~atlas_sync.atlas.AtlasClient`'s)."""

    @property
    def target(self) -> str:
        """What the client talks to, for messages (``Atlas at https://...``)."""
        ...

    @property
    def stats(self) -> ClientStats: ...

    @property
    def retry(self) -> RetryPolicy: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def note_one_type_per_search(self) -> None:
        """The server refused type names joined by commas: ``capabilities.joined_type_search`` is False
        from now on."""
        ...

    def server_time_ms(self) -> int: ...

    def call(
        self,
        kind: str,
        method: str,
        path: str,
        *,
        params: Sequence[tuple[str, str]] | None = None,
        body: Any = None,
        idempotent: bool = True,
        not_found_ok: bool = False,
    ) -> Any:
        """One REST call (under ``/api/atlas``) with the client's retries and counters, for the calls
        that have no method of their own (:mod:`atlas_sync.atlas.metadata`, :mod:`atlas_sync.atlas.glossary`)."""
        ...

    # admin
    def status(self) -> str: ...

    def version(self) -> dict[str, Any]: ...

    # typedefs
    def get_typedefs(
        self,
        type_: str | None = None,
        name: str | None = None,
        supertype: str | None = None,
        service_type: str | None = None,
    ) -> dict[str, Any]: ...

    def get_typedef_headers(self) -> list[dict[str, Any]]: ...

    def get_typedef_by_name(self, name: str) -> dict[str, Any] | None: ...

    def create_typedefs(self, body: dict[str, Any]) -> dict[str, Any]: ...

    def update_typedefs(self, body: dict[str, Any]) -> dict[str, Any]: ...

    def delete_typedefs(self, body: dict[str, Any]) -> None: ...

    def delete_typedef_by_name(self, name: str) -> None: ...

    # entity writes
    def upsert_entities(
        self,
        entities: Sequence[dict[str, Any]],
        *,
        batch_size: int | None = None,
        max_bytes: int | None = None,
        before_retry: BeforeRetry | None = None,
        headers: bool = True,
    ) -> MutationResult: ...

    def delete_entities(
        self, guids: Iterable[str], *, hard: bool = False, before_retry: BeforeRetry | None = None
    ) -> MutationResult: ...

    def purge_entities(
        self, guids: Iterable[str], *, before_retry: BeforeRetry | None = None
    ) -> MutationResult: ...

    def create_relationship(self, body: dict[str, Any]) -> dict[str, Any]: ...

    def set_entity_attribute(self, guid: str, name: str, value: Any) -> MutationResult: ...

    # entity reads
    def get_entity(
        self, guid: str, *, min_ext_info: bool = False, ignore_relationships: bool = False
    ) -> dict[str, Any] | None: ...

    def get_entity_by_unique(
        self,
        type_name: str,
        qualified_name: str,
        *,
        attribute: str = "qualifiedName",
        min_ext_info: bool = False,
        ignore_relationships: bool = False,
    ) -> dict[str, Any] | None: ...

    def get_entities(
        self, guids: Iterable[str], *, min_ext_info: bool = False, ignore_relationships: bool = False
    ) -> list[dict[str, Any]]: ...

    def get_entities_by_unique(
        self,
        type_name: str,
        qualified_names: Iterable[str],
        *,
        attribute: str = "qualifiedName",
        min_ext_info: bool = False,
        ignore_relationships: bool = False,
    ) -> list[dict[str, Any]]: ...

    def get_relationship(self, guid: str) -> dict[str, Any]: ...

    # search
    def search_basic(
        self,
        type_name: str,
        *,
        query: str | None = None,
        entity_filters: dict[str, Any] | None = None,
        exclude_deleted: bool = True,
        attributes: Sequence[str] | None = None,
        page_size: int = 1000,
        include_subtypes: bool = True,
        sort_by: str | None = None,
        dedupe: bool = True,
        include_classifications: bool = False,
    ) -> Iterator[dict[str, Any]]: ...

    def search_count(
        self, type_name: str, *, entity_filters: dict[str, Any] | None = None, exclude_deleted: bool = True
    ) -> int | None: ...

    def search_newest(
        self, type_name: str, *, entity_filters: dict[str, Any] | None = None, exclude_deleted: bool = False
    ) -> tuple[int | None, int | None]: ...

    # lineage
    def lineage(self, guid: str, direction: str = "BOTH", depth: int = 3) -> dict[str, Any]: ...

    def lineage_by_unique(
        self, type_name: str, qualified_name: str, direction: str = "BOTH", depth: int = 3
    ) -> dict[str, Any]: ...


__all__ = ["AtlasApi", "BeforeRetry", "Capabilities"]
