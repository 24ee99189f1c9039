"""core.runs.dispatch on a real DBOS over SQLite: submitting runs, steering them through
their mailbox (by the Runner, as the dashboard and the CLI do), cancelling queued ones.

The workflows execute in this process (its DBOS serves the runs queue, as a worker
would); each test has its own home, so DBOS is relaunched per test and shut down when
the module ends.
"""

from __future__ import annotations

import pytest
from dbos import DBOS

from core.base.messages import render
from core.base.usage import Usage
from core.errors import ConfigError, StoreError
from core.execution.scheduler import RunOptions
from core.plan.model import Plan
from core.runs import dispatch, durable
from core.runs.runner import Runner
from core.store.run_store import CANCELLED_STEP, RunStore
from tests.support.durable_runs import await_status, await_workflow, refund_plan
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until

MAILBOX = "planboard.test.mailbox"


@DBOS.workflow(name=MAILBOX)
def mailbox(expected: int) -> list[str | None]:
    """The first ``expected`` messages of the run's mailbox (None: one never came)."""
    return [DBOS.recv(durable.CONTROL_TOPIC, timeout_seconds=DEFAULT_TIMEOUT_S)
            for _ in range(expected)]




def submit(store: RunStore, plan: Plan, **options) -> str:
    return dispatch.submit(store, plan.goal, plan, settings_public={"offline": True},
                           options=RunOptions(**{"confirm_side_effects": False, **options}))






def kinds(store: RunStore, run_id: str) -> list[str]:
    return [event.kind for event in store.events(run_id)]


# ---- the execution mode ------------------------------------------------------------------

def test_the_execution_mode_is_embedded_unless_workers_are_asked_for(monkeypatch):
    assert dispatch.execution_mode() == "embedded"
    monkeypatch.setenv("PLANBOARD_EXECUTION", " Workers ")
    assert dispatch.execution_mode() == "workers"
    monkeypatch.setenv("PLANBOARD_EXECUTION", "cluster")
    with pytest.raises(ConfigError) as raised:
        dispatch.execution_mode()
    for language in ("en", "zh"):
        text = render(raised.value, language)
        assert "'cluster'" in text and "embedded" in text and "workers" in text
        assert "\n" not in text


# ---- submitting ----------------------------------------------------------------------------

def test_submit_records_the_run_as_the_runner_does_and_a_worker_executes_it(launched, store):
    drafted = refund_plan()
    edited = drafted.model_copy(deep=True)
    edited.steps[2].args = {"expression": "2+4"}  # a person changed it before approving

    run_id = dispatch.submit(store, "refund it", edited, settings_public={"offline": True},
                             options=RunOptions(confirm_side_effects=False),
                             planning_usage=Usage(llm_calls=2), drafted=drafted)

    record = store.get_run(run_id)
    assert record.workflow_id == run_id
    assert record.options["run_id"] == run_id
    assert record.options["approved_version"] == 2
    assert record.options["planning_usage"]["llm_calls"] == 2
    assert [v.version for v in store.plan_versions(run_id)] == [1, 2]
    assert await_status(store, run_id, {"completed", "failed"}) == "completed"
    record = store.get_run(run_id)
    assert record.plan.version == 2 and record.plan.step("s3").result["value"] == 6
    assert kinds(store, run_id)[0] == "replanned"  # the edit, as Runner.start records it
    assert len(refunds_for("88231")) == 1


def test_submit_with_no_queue_to_reach_records_nothing(isolated_environment, store):
    durable.shutdown()  # nothing has set up the run queue in this new home
    with pytest.raises(StoreError) as raised:
        submit(store, refund_plan())
    assert "python -m core worker" in str(raised.value) and "\n" not in str(raised.value)
    assert store.list_runs() == []


# ---- steering through the Runner -------------------------------------------------------------

def test_the_runner_steers_a_worker_run_through_its_mailbox(launched, store):
    runner = Runner(store, poll_s=0.05)
    try:
        run_id = submit(store, refund_plan(), confirm_side_effects=True)
        waiting = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S, until_confirmation=True)
        assert waiting.status == "waiting_confirmation"

        runner.pause(run_id)
        assert await_status(store, run_id, {"paused"}) == "paused"
        assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "paused"  # not active
        runner.resume(run_id)
        assert await_status(store, run_id, {"waiting_confirmation"}) == "waiting_confirmation"
        assert refunds_for("88231") == []

        runner.confirm(run_id, "s2")
        assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"
        assert len(refunds_for("88231")) == 1
        assert {"paused", "resumed", "confirmed"} <= set(kinds(store, run_id))

        with pytest.raises(StoreError, match=r"cannot pause run .*: it is completed"):
            runner.pause(run_id)
        with pytest.raises(StoreError, match="nothing to resume"):
            runner.resume(run_id)
        with pytest.raises(StoreError, match="nothing to cancel"):
            runner.cancel(run_id)
    finally:
        runner.shutdown()


def test_the_runner_cancels_a_paused_worker_run_through_its_mailbox(launched, store):
    runner = Runner(store, poll_s=0.05)
    try:
        run_id = submit(store, refund_plan(), step_delay_s=1.0)
        assert await_status(store, run_id, {"running"}) == "running"
        runner.pause(run_id)
        assert await_status(store, run_id, {"paused"}) == "paused"
        record = runner.cancel(run_id, timeout=DEFAULT_TIMEOUT_S)
        assert record.status == "cancelled"
        assert "pending" not in {step.status for step in record.plan.steps}
        assert await_workflow(run_id) == "SUCCESS"  # the run recorded it itself
        events = store.events(run_id)
        assert [event.kind for event in events].count("cancelled") == 1
        assert not any("reason" in event.data for event in events if event.kind == "cancelled")
        assert (events[-1].kind, events[-1].data["status"]) == ("run_finished", "cancelled")
        assert refunds_for("88231") == []
    finally:
        runner.shutdown()


def test_every_control_is_delivered_even_the_same_one_again(launched, store):
    run_id = store.create_run("mailbox", {"offline": True}, refund_plan(), run_id="mailbox-1",
                              workflow_id="mailbox-1")
    durable.enqueue(MAILBOX, run_id, 3)

    dispatch.pause(store, run_id)
    dispatch.resume(store, run_id)
    dispatch.pause(store, run_id)  # nothing happened in between: still a new request

    assert DBOS.retrieve_workflow(run_id).get_result(polling_interval_sec=0.1) == [
        "pause", "resume", "pause"]


def test_a_resume_no_worker_takes_is_said_in_one_line(launched, store):
    durable.shutdown()  # the queue exists, but nobody serves it: nobody reads the mailbox
    run_id = submit(store, refund_plan())
    store.set_status(run_id, "running")
    store.set_status(run_id, "paused")  # as its worker left it

    asked = dispatch.resume(store, run_id)
    with pytest.raises(StoreError) as raised:
        dispatch.await_resumed(store, run_id, asked, timeout=0.5, poll_s=0.05)

    assert store.get_run(run_id).status == "paused"
    for language in ("en", "zh"):
        text = render(raised.value, language)
        assert run_id in text and "python -m core worker" in text and "\n" not in text


# ---- cancelling without the worker -----------------------------------------------------------

def test_a_run_no_worker_took_is_cancelled_in_dbos_and_the_store(launched, store):
    durable.shutdown()  # the queue exists in this home, but nobody serves it now
    run_id = submit(store, refund_plan())
    assert durable.workflow_status(run_id) == "ENQUEUED"

    record = dispatch.cancel(store, run_id, timeout=DEFAULT_TIMEOUT_S)

    assert record.status == "cancelled"
    assert {step.error for step in record.plan.steps} == {str(CANCELLED_STEP)}
    assert kinds(store, run_id)[-1] == "cancelled"
    assert durable.workflow_status(run_id) == "CANCELLED"
    durable.launch()  # a process serving the queue again does not start it:
    for later in ("probe-1", "probe-2"):  # the queue takes its runs oldest first
        durable.enqueue(MAILBOX, later, 0)
        assert await_workflow(later) == "SUCCESS"
    assert durable.workflow_status(run_id) == "CANCELLED"
    assert store.get_run(run_id).status == "cancelled"
    assert kinds(store, run_id).count("cancelled") == 1 and "step_started" not in kinds(
        store, run_id)


def test_the_runner_submits_to_the_workers_under_workers_mode(launched, store, monkeypatch):
    from core.llm.engine import Engine
    from core.tools.registry import ToolRegistry

    monkeypatch.setenv("PLANBOARD_EXECUTION", "workers")
    runner = Runner(store)
    try:
        # the engine passed here is not used: a worker builds its own from the settings
        run_id = runner.start("refund order 88231", refund_plan(), engine=Engine(ToolRegistry()),
                              options=RunOptions(confirm_side_effects=False),
                              settings_public={"offline": True})
        assert store.get_run(run_id).workflow_id == run_id
        record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    finally:
        runner.shutdown()
    assert record.status == "completed"
    assert len(refunds_for("88231")) == 1


def test_a_short_cancel_only_asks_and_the_worker_records_the_cancellation(launched, store):
    run_id = submit(store, refund_plan(), step_delay_s=3.0)  # s1 paced: the refund is far
    wait_until(lambda: "step_started" in kinds(store, run_id),  # s1 under way, in its pace
               what="s1 to start")

    asked = dispatch.cancel(store, run_id, timeout=0.05, poll_s=0.01)  # the dashboard's click
    assert asked.status == "running"
    assert await_workflow(run_id) == "SUCCESS"  # the run's own workflow ended it, not DBOS
    assert store.get_run(run_id).status == "cancelled"
    assert not any("did not answer" in str(e.data.get("reason", ""))
                   for e in store.events(run_id))
    assert refunds_for("88231") == []
