"""``atlas-sync typedefs plan|apply|delete|validate``: bootstrap and tear down typedef bundles."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import click

from atlas_sync.cli.common import client_from_options, connection_options, echo_json, settings_from_options
from atlas_sync.errors import AtlasSyncError
from atlas_sync.wording import counted

_SOURCES_HELP = (
    "SOURCES are bundle folders or files of Atlas AtlasTypesDef JSON, or built-in profile names "
    "(lineage, pico); several may be combined. Default: the configured profile (lineage)."
)


def _sources(sources: tuple[str, ...], profiles: tuple[str, ...]) -> list[str | Path]:
    """Bundle sources from arguments and --profile; the configured profile when none is given."""
    out: list[str | Path] = list(sources)
    names = list(profiles)
    if not out and not names:
        names = [settings_from_options().profile]
    for p in names:
        if Path(p).is_dir() and (Path(p) / "profile.toml").is_file():
            from atlas_sync.render.profile import load_profile

            out.extend(load_profile(p).typedef_sources)
        else:
            out.append(p)
    return out


def _bundle_options(func: Any) -> Any:
    func = click.option(
        "--profile",
        "-p",
        "profiles",
        multiple=True,
        metavar="P",
        help="a built-in profile name or a profile folder (repeatable)",
    )(func)
    func = click.argument("sources", nargs=-1, type=click.Path())(func)
    return func


@click.group("typedefs")
def typedefs() -> None:
    """Register, diff and remove typedef bundles (idempotent, in dependency order).

    \b
    plan      show what apply would do: + create, ~ update, = unchanged, ! incompatible
    apply     create what is missing, update what changed, nothing else
    delete    remove the bundle's types (refuses while entities use them)
    validate  check bundle files offline, without any server
    """


@typedefs.command("plan")
@_bundle_options
@click.option("--json", "as_json", is_flag=True, help="print the plan as JSON")
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="exit 2 when there are changes (0: none, 1: error or incompatible)",
)
@connection_options
def plan_cmd(
    sources: tuple[str, ...], profiles: tuple[str, ...], as_json: bool, detailed_exitcode: bool
) -> int:
    """Show what `typedefs apply` would change, one line per type, without writing anything.

    One read request: the server's typedefs are fetched once and diffed. SOURCES: see `typedefs --help`.
    """
    from atlas_sync.typedefs import load_bundle, plan_typedefs

    bundle = load_bundle(*_sources(sources, profiles))
    client = client_from_options()
    plan = plan_typedefs(client, bundle)
    if as_json:
        echo_json(plan.to_dict())
    else:
        click.echo(plan.render())
    if plan.incompatible:
        return 1
    return 2 if detailed_exitcode and plan.has_changes else 0


plan_cmd.help = inspect.cleandoc(plan_cmd.help or "") + "\n\n" + _SOURCES_HELP


@typedefs.command("apply")
@_bundle_options
@click.option("--json", "as_json", is_flag=True, help="print the plan and the result as JSON")
@connection_options
def apply_cmd(sources: tuple[str, ...], profiles: tuple[str, ...], as_json: bool) -> int:
    """Create missing types (one POST) and update changed ones (one PUT); nothing when nothing changed.

    Incompatible changes (removed attribute, changed attribute type, new mandatory attribute,
    removed supertype, changed relationship ends) are refused before any write.
    """
    from atlas_sync.typedefs import apply_typedefs, load_bundle, plan_typedefs

    bundle = load_bundle(*_sources(sources, profiles))
    client = client_from_options()
    plan = plan_typedefs(client, bundle)
    if not as_json:
        click.echo(plan.render())
    if plan.incompatible:
        from atlas_sync.typedefs import IncompatibleTypedefsError

        if as_json:
            echo_json({"plan": plan.to_dict(), "applied": None})
        raise IncompatibleTypedefsError(plan)
    result = apply_typedefs(client, plan)
    if as_json:
        echo_json({"plan": plan.to_dict(), "applied": result.to_dict()})
    else:
        click.echo(result.summary())
    return 0


apply_cmd.help = inspect.cleandoc(apply_cmd.help or "") + "\n\n" + _SOURCES_HELP


@typedefs.command("delete")
@_bundle_options
@click.option(
    "--with-entities",
    is_flag=True,
    help="first delete and purge every entity of these types, in every domain",
)
@click.option("--yes", "-y", is_flag=True, help="do not ask for confirmation")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@connection_options
def delete_cmd(
    sources: tuple[str, ...], profiles: tuple[str, ...], with_entities: bool, yes: bool, as_json: bool
) -> int:
    """Delete the bundle's types (one DELETE body: subtypes and relationshipDefs go together).

    Refuses while entities of these types exist (Atlas counts soft-deleted ones too), saying how
    many per type and domain, unless --with-entities.
    """
    from atlas_sync.typedefs import delete_typedefs, load_bundle, plan_delete

    bundle = load_bundle(*_sources(sources, profiles))
    client = client_from_options()
    plan = plan_delete(client, bundle)
    if not as_json:
        click.echo(f"Typedef delete for {', '.join(bundle.sources)} against {client.target}")
        click.echo(plan.render())
    if plan.present and not plan.blockers and (with_entities or not plan.instances) and not yes:
        if not sys.stdin.isatty():
            raise AtlasSyncError("refusing to delete typedefs without confirmation", hint="pass --yes")
        what = counted(len(plan.present), "type")
        if with_entities and plan.instances:
            what += f" and {counted(plan.instance_count, 'entity')}"
        click.confirm(f"Delete {what}?", abort=True, err=True)
    result = delete_typedefs(client, bundle, with_entities=with_entities, plan=plan)
    if as_json:
        echo_json({"plan": plan.to_dict(), "deleted": result.to_dict()})
    else:
        extra = (
            f", {counted(result.entities_purged, 'entity')} purged first" if result.entities_purged else ""
        )
        was = "was" if len(result.absent) == 1 else "were"
        click.echo(
            f"Deleted {counted(len(result.deleted), 'type')} ({len(result.absent)} {was} absent){extra}."
        )
    return 0


delete_cmd.help = inspect.cleandoc(delete_cmd.help or "") + "\n\n" + _SOURCES_HELP


@typedefs.command("validate")
@_bundle_options
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
def validate_cmd(sources: tuple[str, ...], profiles: tuple[str, ...], as_json: bool) -> int:
    """Check bundle files offline: JSON, every def, names, relationship ends, cycles, attributes
    re-declared from a supertype, and references against Atlas's built-in types.

    Types neither in the bundles nor built into Atlas are listed: they must exist on the server.
    """
    from atlas_sync.typedefs import BundleError, ServerTypes, load_bundle

    try:
        bundle = load_bundle(*_sources(sources, profiles))
    except BundleError as exc:
        # Unlike the other commands, list every problem, not just the first.
        for p in exc.problems:
            click.echo(f"error: {p}" + (f" (hint: {p.hint})" if p.hint else ""), err=True)
        raise AtlasSyncError(
            f"{counted(len(exc.problems), 'problem')} in the bundles", hint="nothing was sent"
        ) from None
    builtin = ServerTypes.builtin()
    external = sorted(bundle.external_references())
    unknown = [t for t in external if t not in builtin]
    if as_json:
        echo_json(
            {
                "sources": bundle.sources,
                "types": len(bundle),
                "order": bundle.order(),
                "external": external,
                "must_exist_on_server": unknown,
            }
        )
    else:
        click.echo(f"{counted(len(bundle), 'type')} OK in {counted(len(bundle.files), 'file')}")
        click.echo("Order: " + " -> ".join(bundle.order()))
        if external:
            click.echo("Refers to: " + ", ".join(external))
        if unknown:
            click.echo("Not built into Atlas (must exist on the server): " + ", ".join(unknown))
    return 0


validate_cmd.help = inspect.cleandoc(validate_cmd.help or "") + "\n\n" + _SOURCES_HELP

COMMANDS = [typedefs]
