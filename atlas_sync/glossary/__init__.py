"""Glossary bootstrap: load a glossary file, plan it against Atlas, apply it, tear it down.

Public API (the CLI's ``atlas-sync glossary plan|apply|teardown`` is a thin layer over it)::

    spec = load_glossary_file("glossary.toml")     # TOML, YAML or Atlas's import CSV; validated
    plan = plan_glossary(client, spec)              # reads only; per-object + ~ = - !
    print(plan.render())
    result = apply_glossary(client, plan)           # nothing when nothing changed
    print(result.summary())                         # "N created, N updated, N unchanged"
    teardown_glossary(client, spec, force=False)    # only the glossaries this file created
"""

from atlas_sync.glossary.engine import (
    Change,
    GlossaryConflictError,
    GlossaryInUseError,
    GlossaryPlan,
    GlossaryResult,
    TeardownResult,
    apply_glossary,
    plan_glossary,
    teardown_glossary,
)
from atlas_sync.glossary.spec import GlossaryFile, GlossaryFileError, load_glossary_file

__all__ = [
    "Change",
    "GlossaryConflictError",
    "GlossaryFile",
    "GlossaryFileError",
    "GlossaryInUseError",
    "GlossaryPlan",
    "GlossaryResult",
    "TeardownResult",
    "apply_glossary",
    "load_glossary_file",
    "plan_glossary",
    "teardown_glossary",
]
