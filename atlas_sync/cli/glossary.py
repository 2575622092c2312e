"""``atlas-sync glossary plan|apply|teardown FILE``: bootstrap glossaries, categories and terms."""

from __future__ import annotations

import inspect
import sys

import click

from atlas_sync.cli.common import client_from_options, connection_options, echo_json
from atlas_sync.errors import AtlasSyncError

_FILE_HELP = (
    "FILE is a glossary file: TOML or YAML (docs/glossary.md), or Atlas's glossary-import CSV layout "
    "(GlossaryName, TermName, ShortDescription, ...). It is validated completely before anything is sent."
)


def _file_argument(func: click.decorators.FC) -> click.decorators.FC:
    return click.argument("file", type=click.Path(dir_okay=False))(func)


@click.group("glossary")
def glossary() -> None:
    """Create, update and remove glossaries from a file (idempotent, ownership kept in Atlas).

    \b
    plan      show what apply would do: + create, ~ update, = unchanged, - delete, ! blocked
    apply     create what is missing, update what changed, delete what this file no longer has
    teardown  delete the glossaries this file created, with their terms and categories
    """


@glossary.command("plan")
@_file_argument
@click.option("--json", "as_json", is_flag=True, help="print the plan as JSON")
@click.option("--all", "show_all", is_flag=True, help="also list unchanged objects")
@click.option("--force", is_flag=True, help="plan deletes of terms still assigned to entities")
@click.option("--detailed-exitcode", is_flag=True, help="exit 2 when there are changes (0: none, 1: error)")
@connection_options
def plan_cmd(file: str, as_json: bool, show_all: bool, force: bool, detailed_exitcode: bool) -> int:
    """Show what `glossary apply` would change, one line per object, without writing anything.

    A term whose `id` is kept and whose `name` changed is shown as renamed (an update).
    """
    from atlas_sync.glossary import load_glossary_file, plan_glossary

    spec = load_glossary_file(file)
    plan = plan_glossary(client_from_options(), spec, force=force)
    if as_json:
        echo_json(plan.to_dict())
    else:
        click.echo(plan.render(unchanged=show_all))
    if plan.blocked:
        return 1
    return 2 if detailed_exitcode and plan.has_changes else 0


@glossary.command("apply")
@_file_argument
@click.option("--json", "as_json", is_flag=True, help="print the plan and the result as JSON")
@click.option("--force", is_flag=True, help="delete removed terms even when assigned (assignments go first)")
@connection_options
def apply_cmd(file: str, as_json: bool, force: bool) -> int:
    """Create missing objects, update changed ones, delete the ones this file created and no longer lists.

    Prints `N created, N updated, N unchanged`. A second apply of the same file writes nothing.
    """
    from atlas_sync.glossary import apply_glossary, load_glossary_file, plan_glossary

    spec = load_glossary_file(file)
    client = client_from_options()
    plan = plan_glossary(client, spec, force=force)
    if not as_json:
        click.echo(plan.render())
    result = apply_glossary(client, plan)
    if as_json:
        echo_json({"plan": plan.to_dict(), "applied": result.to_dict()})
    else:
        click.echo(result.summary())
    return 0


@glossary.command("teardown")
@_file_argument
@click.option(
    "--force", is_flag=True, help="also remove term assignments and others' terms in these glossaries"
)
@click.option("--yes", "-y", is_flag=True, help="do not ask for confirmation")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@connection_options
def teardown_cmd(file: str, force: bool, yes: bool, as_json: bool) -> int:
    """Delete the glossaries this file created (found by the ownership Atlas keeps), nothing else.

    Refuses, before deleting anything, while a term is assigned to entities or someone else added
    terms or categories to one of them, unless --force.
    """
    from atlas_sync.glossary import load_glossary_file, teardown_glossary

    spec = load_glossary_file(file)
    client = client_from_options()
    if not yes:
        if not sys.stdin.isatty():
            raise AtlasSyncError("refusing to tear down glossaries without confirmation", hint="pass --yes")
        names = ", ".join(g.name for g in spec.glossaries)
        click.confirm(f"Delete glossaries {names} (only if this file created them)?", abort=True, err=True)
    result = teardown_glossary(client, spec, force=force)
    if as_json:
        echo_json(result.to_dict())
    else:
        click.echo(result.summary())
    return 0


for _cmd in (plan_cmd, apply_cmd, teardown_cmd):
    # dedented first: click dedents the whole text by its common indent, which the appended line has not
    _cmd.help = inspect.cleandoc(_cmd.help or "") + "\n\n" + _FILE_HELP

COMMANDS = [glossary]
