"""``--write-path rest|atlas-hook`` and its Kafka flags, shared by the commands that write entities."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from atlas_sync.cli.common import stderr
from atlas_sync.wording import counted

if TYPE_CHECKING:
    from collections.abc import Callable

    from atlas_sync.atlas.client import AtlasClient
    from atlas_sync.atlas.interface import AtlasApi

_META_KEY = "atlas_sync.write_path"


def _store(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if value is not None:
        ctx.meta.setdefault(_META_KEY, {})[param.name] = value
    return value


def _opt(*decls: str, **kwargs: Any) -> Any:
    return click.option(*decls, expose_value=False, callback=_store, **kwargs)


def write_path_options(func: Any = None, *, wait: bool = True) -> Any:
    """Add ``--write-path --hook-bootstrap-servers --hook-topic --hook-kafka-config`` (and ``--wait``)."""
    if func is None:
        return lambda f: write_path_options(f, wait=wait)
    options = [
        _opt(
            "--write-path",
            type=click.Choice(["rest", "atlas-hook"]),
            envvar="ATLAS_SYNC_WRITE_PATH",
            help="how entity writes reach Atlas: REST calls, or hook notification messages to the "
            "ATLAS_HOOK Kafka topic that Atlas consumes (reads stay on REST) [env ATLAS_SYNC_WRITE_PATH; "
            "default rest]",
        ),
        _opt(
            "--hook-bootstrap-servers",
            metavar="HOST:PORT[,...]",
            envvar="ATLAS_HOOK_BOOTSTRAP_SERVERS",
            help="Kafka brokers of Atlas's notification topics [env ATLAS_HOOK_BOOTSTRAP_SERVERS]",
        ),
        _opt("--hook-topic", metavar="TOPIC", help="hook topic Atlas consumes [default ATLAS_HOOK]"),
        _opt(
            "--hook-kafka-config",
            type=click.Path(dir_okay=False),
            help="key=value file of librdkafka settings for the hook producer (security.protocol, sasl.*)",
        ),
        _opt(
            "--wait",
            type=click.FloatRange(0),
            metavar="SECONDS",
            help="with atlas-hook: wait up to SECONDS until Atlas shows what was queued (exit 3 if it does not)",
        ),
    ]
    if not wait:
        options.pop()
    for option in reversed(options):
        func = option(func)
    return func


def write_path_state(ctx: click.Context | None = None) -> dict[str, Any]:
    ctx = ctx or click.get_current_context(silent=True)
    return dict(ctx.meta.get(_META_KEY, {})) if ctx is not None else {}


def wrap_client(client: AtlasClient, ctx: click.Context | None = None) -> AtlasApi:
    """``client`` itself (REST), or an :class:`~atlas_sync.atlas.hook.AtlasHookClient` around it."""
    state = write_path_state(ctx)
    if state.get("write_path", "rest") != "atlas-hook":
        if state.get("wait") is not None:
            raise click.UsageError(
                "--wait goes with --write-path atlas-hook (REST writes are visible at once)"
            )
        return client
    from atlas_sync.factory import hook_client

    servers = state.get("hook_bootstrap_servers")
    if not servers:
        raise click.UsageError(
            "--write-path atlas-hook needs --hook-bootstrap-servers (or env ATLAS_HOOK_BOOTSTRAP_SERVERS): "
            "the Kafka brokers Atlas reads ATLAS_HOOK from (atlas.kafka.bootstrap.servers)"
        )
    return hook_client(
        client, servers, topic=state.get("hook_topic"), kafka_config=state.get("hook_kafka_config")
    )


def wait_for_atlas(
    client: AtlasApi, pending: Callable[[], int], ctx: click.Context | None = None, *, quiet: bool = False
) -> int | None:
    """After an atlas-hook apply with ``--wait``: poll ``pending()`` until 0 or the time is up.

    Returns the changes Atlas still does not show (None when not asked to wait)."""
    from atlas_sync.atlas.hook import AtlasHookClient, wait_until

    timeout = write_path_state(ctx).get("wait")
    if timeout is None or not isinstance(client, AtlasHookClient):
        return None

    def report(left: int, elapsed: float) -> None:
        if not quiet:
            stderr(f"waiting for Atlas: {counted(left, 'change')} not visible yet after {elapsed:.0f} s")

    left = wait_until(pending, float(timeout), progress=report)
    return left
