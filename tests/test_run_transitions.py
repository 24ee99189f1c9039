"""Run statuses move only forward: a stopped run cancels cleanly, a finished run stays finished."""

from __future__ import annotations

import pytest

from core.errors import StoreError
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions
from core.runs.live_run import LiveRun
from tests.stored_runs import calc_engine, stopped_run, three_calcs


@pytest.mark.parametrize(("status", "running_step"), [("paused", False),
                                                       ("interrupted", True)])
def test_cancel_of_a_stopped_run_ends_every_step(runner, store, status, running_step):
    run_id = stopped_run(store, status, running_step=running_step)
    record = runner.cancel(run_id)
    assert record.status == "cancelled" and record.owner_pid is None
    assert [s.status for s in record.plan.steps] == ["completed", "skipped", "skipped"]
    assert [s.error for s in record.plan.steps[1:]] == ["cancelled by a person"] * 2
    assert record.plan.steps[0].result == {"value": 2}
    cancelled = [e for e in store.events(run_id) if e.kind == "cancelled"]
    assert [e.data["skipped"] for e in cancelled] == [["s2", "s3"]]
    with pytest.raises(StoreError, match="already cancelled"):
        runner.cancel(run_id)


def test_a_finished_live_run_is_not_brought_back_to_running(store):
    run_id = store.create_run("sums", {}, three_calcs())
    live = LiveRun(store=store, run_id=run_id, engine=calc_engine(),
                   options=RunOptions(run_id=run_id, max_attempts=1), plan=three_calcs())
    live.run()
    assert store.get_run(run_id).status == "completed"
    live.remote_action("resume")  # a late resume from another process
    live.request_resume()
    live.record(RunEvent(kind="resumed", plan_version=1))
    assert store.get_run(run_id).status == "completed"
    with pytest.raises(StoreError, match="already completed"):
        store.set_status(run_id, "running")
    store.set_status(run_id, "completed")  # staying put is fine
    store.set_status(run_id, "running", reopen=True)
    assert store.get_run(run_id).status == "running"


def test_resumed_only_leaves_paused(store):
    run_id = store.create_run("sums", {}, three_calcs())
    live = LiveRun(store=store, run_id=run_id, engine=calc_engine(),
                   options=RunOptions(run_id=run_id), plan=three_calcs())
    live.record(RunEvent(kind="waiting_confirmation", step_id="s1"))
    live.record(RunEvent(kind="resumed"))
    assert store.get_run(run_id).status == "waiting_confirmation"
    live.record(RunEvent(kind="paused"))
    live.record(RunEvent(kind="resumed"))
    assert store.get_run(run_id).status == "running"
