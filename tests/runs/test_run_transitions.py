"""Run statuses move only forward: a stopped run cancels cleanly, a finished run stays finished."""

from __future__ import annotations

import pytest

from core.errors import StoreError
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions, RunOutcome
from core.runs.workflow import DurableRun
from core.store.run_store import RunStore
from tests.support.stored_runs import calc_engine, stopped_run, three_calcs


def durable_run(store: RunStore, run_id: str) -> DurableRun:
    """The object the run's workflow drives, built without DBOS: recording an event needs
    only the store (its replay keys start with the run id)."""
    return DurableRun(store=store, run_id=run_id, engine=calc_engine(),
                      options=RunOptions(run_id=run_id, max_attempts=1), plan=three_calcs(),
                      events_key=run_id)


@pytest.mark.parametrize(("status", "running_step"), [("paused", False),
                                                       ("interrupted", True)])
def test_cancel_of_a_stopped_run_ends_every_step(runner, store, status, running_step):
    run_id = stopped_run(store, status, running_step=running_step)
    record = runner.cancel(run_id)
    assert record.status == "cancelled" and record.finished_at is not None
    assert [s.status for s in record.plan.steps] == ["completed", "skipped", "skipped"]
    assert [s.error for s in record.plan.steps[1:]] == ["cancelled by a person"] * 2
    assert record.plan.steps[0].result == {"value": 2}
    cancelled = [e for e in store.events(run_id) if e.kind == "cancelled"]
    assert [e.data["skipped"] for e in cancelled] == [["s2", "s3"]]
    with pytest.raises(StoreError, match="already cancelled"):
        runner.cancel(run_id)


def test_a_finished_run_is_not_brought_back_to_running(store):
    run_id = store.create_run("sums", {}, three_calcs(), status="running")
    live = durable_run(store, run_id)
    done = three_calcs()
    for step in done.steps:
        step.advance("running")
        step.advance("completed")
    live._finish(RunOutcome(status="completed", plan=done, versions=[], answer="6"))
    assert store.get_run(run_id).status == "completed"
    live.record(RunEvent(kind="paused", plan_version=1))  # late controls, once it ended
    live.record(RunEvent(kind="resumed", plan_version=1))
    assert (live.status, store.get_run(run_id).status) == ("completed", "completed")
    with pytest.raises(StoreError, match="already completed"):
        store.set_status(run_id, "running")
    store.set_status(run_id, "completed")  # staying put is fine
    store.set_status(run_id, "running", reopen=True)
    assert store.get_run(run_id).status == "running"


def test_resumed_only_leaves_paused(store):
    run_id = store.create_run("sums", {}, three_calcs())
    live = durable_run(store, run_id)
    live.record(RunEvent(kind="waiting_confirmation", step_id="s1"))
    live.record(RunEvent(kind="resumed"))
    assert store.get_run(run_id).status == "waiting_confirmation"
    live.record(RunEvent(kind="paused"))
    live.record(RunEvent(kind="resumed"))
    assert store.get_run(run_id).status == "running"
