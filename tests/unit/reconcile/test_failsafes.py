"""The fail-safes' messages name jobs as users name them, under native profiles too."""

from __future__ import annotations

import pytest

from atlas_sync.reconcile.failsafes import refuse_foreign_processes
from atlas_sync.reconcile.plan import PlanRefused
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
    spool.add_actual([(*PROCESS, "g-1", owner, None, True)])
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
