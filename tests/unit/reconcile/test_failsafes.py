"""The fail-safes' messages name jobs as users name them, under native profiles too."""

from __future__ import annotations

import pytest

from atlas_sync.reconcile.failsafes import heirs, refuse_foreign_processes
from atlas_sync.reconcile.plan import PlanOptions, PlanRefused, check_deletes
from atlas_sync.reconcile.spool import Spool
from atlas_sync.render.native import JOB_LABEL, label_for
from atlas_sync.render.renderer import DesiredEntity, DesiredState

PROCESS = ("Process", "etl.daily@prod")


def _spool_holding(owner: str) -> Spool:
    spool = Spool(memory=True)
    state = DesiredState("prod", "hourly")
    state.entities[PROCESS] = DesiredEntity(
        type_name=PROCESS[0], qualified_name=PROCESS[1], attributes={"qualifiedName": PROCESS[1]}
    )
    spool.add_desired(state)
    spool.add_actual([(*PROCESS, "g-1", owner, None)])
    return spool


@pytest.mark.parametrize(
    ("theirs", "mine"),
    [("nightly", "hourly"), (label_for(JOB_LABEL, "nightly"), label_for(JOB_LABEL, "hourly"))],
    ids=["owner attribute", "native job label"],
)
def test_another_job_s_process_is_refused_naming_both_jobs(theirs: str, mine: str) -> None:
    spool = _spool_holding(theirs)
    with pytest.raises(PlanRefused, match="belongs to job 'nightly', not 'hourly'"):
        refuse_foreign_processes(spool, {"Process"}, mine, "hourly")
    spool.close()


def test_the_job_s_own_process_is_not_refused() -> None:
    spool = _spool_holding(label_for(JOB_LABEL, "hourly"))
    refuse_foreign_processes(spool, {"Process"}, label_for(JOB_LABEL, "hourly"), "hourly")
    spool.close()


def test_deletes_of_an_input_that_produced_nothing_are_skipped_unless_the_job_is_synced_to_nothing() -> None:
    opts = PlanOptions(force=True)
    why = check_deletes(8, 14, False, "shared", "a", opts)
    assert why is not None and why.startswith("8 deletes skipped: the input produced nothing (--allow-empty")
    assert check_deletes(8, 14, False, "shared", "a", PlanOptions(force=True, allow_empty=True)) is None
    # the domain's share still applies to an empty input: only --force lets 8 of 14 go
    with pytest.raises(PlanRefused, match="8 of the 14 entities"):
        check_deletes(8, 14, False, "shared", "a", PlanOptions(allow_empty=True))


def test_a_partial_input_says_why_it_deletes_nothing() -> None:
    opts = PlanOptions(allow_delete=False, partial=True)
    assert check_deletes(3, 30, True, "shop", "dbt", opts) == (
        "3 deletes skipped: the input is part of the job's lineage (a selection or a run)"
    )


class _Reads:
    """Answers get_entities from a dict (guid -> (owner job, qualifiedName))."""

    def __init__(self, held: dict[str, tuple[str, str]]) -> None:
        self.held = held

    def get_entities(self, guids: list[str], **_: object) -> list[dict[str, object]]:
        return [
            {"guid": g, "attributes": {"atlasSyncJob": self.held[g][0], "qualifiedName": self.held[g][1]}}
            for g in guids
            if g in self.held
        ]


def test_what_a_torn_down_job_leaves_passes_to_the_first_job_that_uses_it() -> None:
    client = _Reads(
        {
            "p-b": ("b", "b:load@d"),
            "p-c": ("c", "c:load@d"),
            "p-x": ("x", "x:load@other"),  # another domain's job: never an heir
        }
    )
    kept = [
        ("t2@d", "g-t2", {"p-c", "p-b", "g-t2a"}),  # read by two jobs: the first by name
        ("t2.a@d", "g-t2a", {"g-t2"}),  # kept only by its kept dataset: the first of all heirs
        ("t9@d", "g-t9", {"p-x"}),  # only another domain refers to it: it stays a's
    ]
    assert heirs(client, kept, "a", "d") == {"g-t2": "b", "g-t2a": "b"}
