"""The runner: background runs recorded in the store; pause, resume, cancel, confirm, recovery.

A second :class:`Runner` over the same store steers a run as another process would: through
the run's DBOS mailbox.
"""

from __future__ import annotations

import threading

import pytest

from core.errors import StoreError
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.runner import Runner, open_runner
from core.store.run_store import RunStore
from tests.support.child_runs import crash_when, step_started
from tests.support.pg import on_both_backends
from tests.support.runs import Gate, await_mail_taken, kinds, slow_plan
from tests.support.waiting import DEFAULT_TIMEOUT_S

# every test once on SQLite and once on PostgreSQL (the store and DBOS's tables alike)
pytestmark = [pytest.mark.usefixtures("dbos_of_the_module"), on_both_backends]





def calc_plan(goal: str = "sums", expression: str = "6*7") -> Plan:
    return Plan(goal=goal, steps=[
        Step(id="s1", description="first", tool="calculate", args={"expression": expression}),
        Step(id="s2", description="second", tool="calculate",
             args={"expression": "1+1"}, depends_on=["s1"]),
    ])




@pytest.fixture(autouse=True)
def on_the_backend_under_test(db_url: str, runner: Runner) -> None:
    """The runner (tests/conftest.py) stores on the backend this variant of the test is for
    (``db_url`` first: it names the backend before the store opens)."""
    assert runner.store.url == db_url






def test_start_records_and_completes(runner):
    seen: list[RunEvent] = []
    run_id = runner.start("sums", calc_plan(), engine=Gate().engine(),
                          settings_public={"planner_model": "m", "api_key": "sk-test-SECRET123"},
                          on_event=seen.append)
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert record.settings == {"planner_model": "m"}
    assert record.options["run_id"] == run_id
    assert [s.result["value"] for s in record.plan.steps] == [42, 2]
    assert record.finished_at is not None and record.workflow_id == run_id
    events = runner.store.events(run_id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [e.kind for e in events] == [
        "run_started", "step_started", "step_completed", "step_started", "step_completed",
        "run_finished"]
    assert [e.kind for e in seen] == [e.kind for e in events]
    assert events[2].data["result"]["value"] == 42


def broken_plan() -> Plan:
    return Plan(goal="divide", steps=[
        Step(id="s1", description="divide", tool="calculate", args={"expression": "1/0"})])


def test_replanned_versions_are_all_stored(runner):
    def fix(plan: Plan, failure: str, engine: Engine) -> Plan:
        return Plan(goal=plan.goal, version=plan.version + 1, steps=[
            Step(id="s2", description="fixed", tool="calculate", args={"expression": "2*21"})])

    run_id = runner.start("divide", broken_plan(), engine=Gate().engine(), replanner=fix)
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert record.plan.version == 2 and record.plan.steps[0].result["value"] == 42
    versions = runner.store.plan_versions(run_id)
    assert [v.version for v in versions] == [1, 2]
    assert versions[0].plan.steps[0].status == "failed"
    assert "s1" in versions[1].reason and "failed" in versions[1].reason
    replanned = [e for e in runner.store.events(run_id) if e.kind == "replanned"]
    assert [(e.plan_version, e.data["from_version"]) for e in replanned] == [(2, 1)]


def test_an_unusable_replan_is_not_stored(runner):
    def bad(plan: Plan, failure: str, engine: Engine) -> Plan:
        return Plan(goal=plan.goal, version=2, steps=[
            Step(id="s2", description="x", tool="no_such_tool")])

    run_id = runner.start("divide", broken_plan(), engine=Gate().engine(), replanner=bad)
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "failed"
    assert [v.version for v in runner.store.plan_versions(run_id)] == [1]
    assert record.plan.steps[0].status == "failed"


def test_pause_then_resume_keeps_finished_steps(runner):
    gate = Gate()
    run_id = runner.start("slow", slow_plan(), engine=gate.engine())
    assert gate.entered.wait(DEFAULT_TIMEOUT_S)
    runner.pause(run_id)
    gate.open.set()
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "paused"
    assert [s.status for s in record.plan.steps] == ["completed", "pending", "pending"]
    first = record.plan.steps[0]
    runner.resume(run_id, engine=gate.engine())
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert record.plan.steps[0].result == first.result
    assert record.plan.steps[0].finished_at == first.finished_at
    assert record.plan.steps[2].result["value"] == 5
    sequence = kinds(runner.store, run_id)
    assert sequence.index("paused") < sequence.index("resumed")
    assert sequence.count("step_started") == 3  # nothing ran twice


def test_cancel_returns_once_recorded(runner):
    gate = Gate()
    run_id = runner.start("slow", slow_plan(), engine=gate.engine())
    assert gate.entered.wait(DEFAULT_TIMEOUT_S)

    def open_once_cancelled() -> None:  # s1 ends after the run has taken the cancel
        await_mail_taken(run_id, "cancel")
        gate.open.set()

    opener = threading.Thread(target=open_once_cancelled)
    opener.start()
    record = runner.cancel(run_id, timeout=DEFAULT_TIMEOUT_S)
    opener.join(DEFAULT_TIMEOUT_S)
    assert record.status == "cancelled"
    assert "cancelled" in kinds(runner.store, run_id)
    assert record.plan.steps[2].status == "skipped"
    with pytest.raises(StoreError, match="already cancelled"):
        runner.cancel(run_id)


def test_control_from_another_process_goes_through_the_mailbox(runner):
    gate = Gate()
    other = Runner(RunStore(runner.store.url), poll_s=0.05)  # as a CLI process would
    run_id = runner.start("slow", slow_plan(), engine=gate.engine())
    assert gate.entered.wait(DEFAULT_TIMEOUT_S)
    assert other.recover_interrupted() == []  # a run of a live process is not an orphan
    other.pause(run_id)
    await_mail_taken(run_id, "pause")
    gate.open.set()
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "paused"
    assert [s.status for s in record.plan.steps] == ["completed", "pending", "pending"]
    other.resume(run_id)  # its workflow waits in this process: the mailbox resumes it
    assert other.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"
    sequence = kinds(runner.store, run_id)
    assert sequence.index("paused") < sequence.index("resumed")
    assert sequence.count("step_started") == 3  # nothing ran twice
    other.shutdown()
    other.store.close()


def test_a_resume_while_the_run_is_still_pausing_is_told_and_one_once_paused_continues(
        runner):
    gate = Gate()
    other = Runner(RunStore(runner.store.url), poll_s=0.05)
    run_id = runner.start("slow", slow_plan(), engine=gate.engine())
    assert gate.entered.wait(DEFAULT_TIMEOUT_S)
    other.pause(run_id)
    await_mail_taken(run_id, "pause")
    with pytest.raises(StoreError) as told:  # its step still runs: it runs, and is held
        other.resume(run_id)
    assert told.value.message.code == "run.busy"
    assert runner.store.get_run(run_id).options["executor"] in str(told.value)
    gate.open.set()
    assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "paused"
    other.resume(run_id)
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    sequence = kinds(runner.store, run_id)
    assert sequence.count("paused") == sequence.count("resumed") == 1
    assert sequence.count("step_started") == 3
    other.shutdown()
    other.store.close()


def test_confirmation_is_waited_for_and_recorded(runner):
    gate = Gate()
    plan = Plan(goal="refund", steps=[
        Step(id="s1", description="refund", tool="refund", args={"order_id": "88231"})])
    run_id = runner.start("refund", plan, engine=gate.engine(),
                          options=RunOptions(confirm_side_effects=True))
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S, until_confirmation=True)
    assert record.status == "waiting_confirmation"
    assert gate.keys == []
    other = Runner(RunStore(runner.store.url))
    other.confirm(run_id, "s1")
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert gate.keys == [f"{run_id}:s1:v1"]
    assert kinds(runner.store, run_id)[1:3] == ["waiting_confirmation", "confirmed"]
    other.shutdown()
    other.store.close()


def test_reject_skips_the_step(runner):
    gate = Gate()
    plan = Plan(goal="refund", steps=[
        Step(id="s1", description="refund", tool="refund", args={"order_id": "1"})])
    run_id = runner.start("refund", plan, engine=gate.engine(),
                          options=RunOptions(confirm_side_effects=True))
    runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S, until_confirmation=True)
    runner.reject(run_id, "s1")
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.plan.steps[0].status == "skipped"
    assert "rejected" in kinds(runner.store, run_id)
    assert gate.keys == []


def test_recover_interrupted_then_resume(runner, tmp_path):
    plan = calc_plan()
    plan.steps[1] = Step(id="s2", description="slow", tool="slow", args={"label": "b"},
                         depends_on=["s1"])
    run_id = crash_when(tmp_path, plan, step_started(runner.store, "s2"))  # s2 is killed
    before = runner.store.get_run(run_id).plan.step("s1")
    assert before.status == "completed"
    assert runner.recover_interrupted() == [run_id]
    record = runner.store.get_run(run_id)
    assert record.status == "interrupted"
    assert [s.status for s in record.plan.steps] == ["completed", "pending"]
    assert kinds(runner.store, run_id)[-2:] == ["step_reset", "interrupted"]
    assert runner.recover_interrupted() == []
    gate = Gate()
    gate.open.set()
    runner.resume(run_id, engine=gate.engine())
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert record.plan.steps[0].result == before.result and before.result["value"] == 42
    assert record.plan.steps[0].finished_at == before.finished_at
    assert record.plan.steps[1].result["label"] == "b"
    assert kinds(runner.store, run_id).count("step_completed") == 2  # s1 did not run again


def test_closing_a_runner_pauses_its_runs_and_closes_its_own_store():
    gate = Gate()
    with open_runner() as owner:
        run_id = owner.start("slow", slow_plan(), engine=gate.engine())
        assert gate.entered.wait(DEFAULT_TIMEOUT_S)

        def open_once_paused() -> None:  # the close below sends the pause
            await_mail_taken(run_id, "pause")
            gate.open.set()

        opener = threading.Thread(target=open_once_paused)
        opener.start()
    opener.join(DEFAULT_TIMEOUT_S)
    store = RunStore()
    try:
        record = store.get_run(run_id)
        assert record.status == "paused"
        assert [s.status for s in record.plan.steps] == ["completed", "pending", "pending"]
        with pytest.raises(StoreError, match="closed"):
            owner.start("slow", slow_plan(), engine=gate.engine())
        assert len(store.list_runs()) == 1
    finally:
        store.close()

