"""The runner: background runs recorded in the store; pause, resume, cancel, confirm, recovery."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from core.errors import StoreError
from core.execution.control import RunControl
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.runner import Runner, open_runner
from core.store.run_store import RunStore
from core.store.schema import runs
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, current_idempotency_key, make_tool

REPO = Path(__file__).resolve().parents[1]


class Gate:
    """A slow tool that blocks until the test opens the gate, and a side-effecting tool."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.entered = threading.Event()
        self.keys: list[str | None] = []

    def engine(self) -> Engine:
        registry = ToolRegistry()
        register_builtin_tools(registry)

        def slow(label: str) -> dict:
            """Wait until the gate opens, then echo the label.

            Args:
                label: any text.
            """
            self.entered.set()
            self.open.wait(10)
            return {"label": label, "at": time.time()}

        def refund(order_id: str) -> dict:
            """Refund an order (a side effect).

            Args:
                order_id: the order.
            """
            self.keys.append(current_idempotency_key())
            return {"refunded": order_id}

        registry.add(make_tool(slow))
        registry.add(make_tool(refund, side_effect=True))
        return Engine(registry=registry, model=None)


def calc_plan(goal: str = "sums", expression: str = "6*7") -> Plan:
    return Plan(goal=goal, steps=[
        Step(id="s1", description="first", tool="calculate", args={"expression": expression}),
        Step(id="s2", description="second", tool="calculate",
             args={"expression": "1+1"}, depends_on=["s1"]),
    ])


def slow_plan() -> Plan:
    return Plan(goal="slow work", steps=[
        Step(id="s1", description="slow one", tool="slow", args={"label": "a"}),
        Step(id="s2", description="slow two", tool="slow", args={"label": "b"},
             depends_on=["s1"]),
        Step(id="s3", description="add", tool="calculate", args={"expression": "2+3"},
             depends_on=["s2"]),
    ])


@pytest.fixture
def runner():
    made = Runner(RunStore(), poll_s=0.05)
    yield made
    made.shutdown()
    made.store.close()


def kinds(store: RunStore, run_id: str) -> list[str]:
    return [e.kind for e in store.events(run_id)]


def await_paused(control, paused: bool, timeout: float = 5.0) -> None:
    """Block until the run's control is (or is no longer) paused; fail after ``timeout``.

    Woken by the control's own change listener, not by sleeping.
    """
    changed = threading.Event()
    control.add_listener(changed.set)
    try:
        deadline = time.monotonic() + timeout
        while RunControl.is_paused(control) != paused:
            left = deadline - time.monotonic()
            assert left > 0, f"the run's control never became paused={paused}"
            changed.wait(min(left, 0.2))  # the watcher thread applies the stored request
            changed.clear()
    finally:
        control.remove_listener(changed.set)


def await_condition(check, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """Poll ``check()`` (the child writes to the database) until true; fail on timeout."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not check():
        assert proc.poll() is None, f"the child process exited early: {proc.returncode}"
        assert time.monotonic() < deadline, "timed out waiting for the child process"
        tick.wait(0.05)


def stop(proc: subprocess.Popen) -> None:
    """Kill the child (if still alive) and release its pipes."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def test_start_records_and_completes(runner):
    seen: list[RunEvent] = []
    run_id = runner.start("sums", calc_plan(), engine=Gate().engine(),
                          settings_public={"planner_model": "m", "api_key": "sk-test-SECRET123"},
                          on_event=seen.append)
    record = runner.wait(run_id, timeout=10)
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
    record = runner.wait(run_id, timeout=10)
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
    record = runner.wait(run_id, timeout=10)
    assert record.status == "failed"
    assert [v.version for v in runner.store.plan_versions(run_id)] == [1]
    assert record.plan.steps[0].status == "failed"


def test_pause_then_resume_keeps_finished_steps(runner):
    gate = Gate()
    run_id = runner.start("slow", slow_plan(), engine=gate.engine())
    assert gate.entered.wait(5)
    runner.pause(run_id)
    gate.open.set()
    record = runner.wait(run_id, timeout=10)
    assert record.status == "paused"
    assert [s.status for s in record.plan.steps] == ["completed", "pending", "pending"]
    first = record.plan.steps[0]
    runner.resume(run_id, engine=gate.engine())
    record = runner.wait(run_id, timeout=10)
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
    assert gate.entered.wait(5)
    threading.Timer(0.2, gate.open.set).start()
    record = runner.cancel(run_id, timeout=10)
    assert record.status == "cancelled"
    assert "cancelled" in kinds(runner.store, run_id)
    assert record.plan.steps[2].status == "skipped"
    with pytest.raises(StoreError, match="already cancelled"):
        runner.cancel(run_id)


def test_control_from_another_process_goes_through_the_store(runner):
    gate = Gate()
    other = Runner(RunStore(runner.store.url), poll_s=0.05)  # as a CLI process would
    run_id = runner.start("slow", slow_plan(), engine=gate.engine())
    assert gate.entered.wait(5)
    assert other.recover_interrupted() == []  # a run of this process is not an orphan
    other.pause(run_id)
    await_paused(runner._live[run_id].control, True)
    gate.open.set()
    assert runner.wait(run_id, timeout=10).status == "paused"
    other.resume(run_id, engine=gate.engine())  # nobody runs it now: resumes in `other`
    assert other.wait(run_id, timeout=10).status == "completed"
    other.shutdown()
    other.store.close()


def test_resume_requested_by_another_process_while_pausing(runner):
    gate = Gate()
    other = Runner(RunStore(runner.store.url), poll_s=0.05)
    run_id = runner.start("slow", slow_plan(), engine=gate.engine())
    assert gate.entered.wait(5)
    other.pause(run_id)
    control = runner._live[run_id].control
    await_paused(control, True)
    other.resume(run_id)  # the owner is alive: the request goes through the store
    await_paused(control, False)
    gate.open.set()
    record = runner.wait(run_id, timeout=10)
    assert record.status == "completed"
    resumed = [e for e in runner.store.events(run_id) if e.kind == "resumed"]
    assert [e.data for e in resumed] == [{"requested_by": "another process"}]
    other.shutdown()
    other.store.close()


def test_confirmation_is_waited_for_and_recorded(runner):
    gate = Gate()
    plan = Plan(goal="refund", steps=[
        Step(id="s1", description="refund", tool="refund", args={"order_id": "88231"})])
    run_id = runner.start("refund", plan, engine=gate.engine(),
                          options=RunOptions(confirm_side_effects=True))
    record = runner.wait(run_id, timeout=10, until_confirmation=True)
    assert record.status == "waiting_confirmation"
    assert gate.keys == []
    other = Runner(RunStore(runner.store.url))
    other.confirm(run_id, "s1")
    record = runner.wait(run_id, timeout=10)
    assert record.status == "completed"
    assert gate.keys == [f"{run_id}:s1:v1"]
    assert kinds(runner.store, run_id)[1:3] == ["waiting_confirmation", "confirmed"]
    other.shutdown()


def test_reject_skips_the_step(runner):
    gate = Gate()
    plan = Plan(goal="refund", steps=[
        Step(id="s1", description="refund", tool="refund", args={"order_id": "1"})])
    run_id = runner.start("refund", plan, engine=gate.engine(),
                          options=RunOptions(confirm_side_effects=True))
    runner.wait(run_id, timeout=10, until_confirmation=True)
    runner.reject(run_id, "s1")
    record = runner.wait(run_id, timeout=10)
    assert record.plan.steps[0].status == "skipped"
    assert "rejected" in kinds(runner.store, run_id)
    assert gate.keys == []


def test_recover_interrupted_then_resume(runner):
    plan = calc_plan()
    plan.steps[0].advance("running")
    plan.steps[0].advance("completed")
    plan.steps[0].result = {"value": 42, "original": True}
    plan.steps[1].advance("running")
    run_id = runner.store.create_run("sums", {}, plan, status="running")
    with runner.store.engine.begin() as conn:
        conn.execute(runs.update().where(runs.c.id == run_id).values(owner_pid=2**22 + 11))
    assert runner.recover_interrupted() == [run_id]
    record = runner.store.get_run(run_id)
    assert record.status == "interrupted"
    assert [s.status for s in record.plan.steps] == ["completed", "pending"]
    assert kinds(runner.store, run_id) == ["step_reset", "interrupted"]
    assert runner.recover_interrupted() == []
    runner.resume(run_id, engine=Gate().engine())
    record = runner.wait(run_id, timeout=10)
    assert record.status == "completed"
    assert record.plan.steps[0].result == {"value": 42, "original": True}
    assert record.plan.steps[0].finished_at == plan.steps[0].finished_at
    assert record.plan.steps[1].result["value"] == 2


def test_closing_a_runner_pauses_its_runs_and_closes_its_own_store():
    gate = Gate()
    with open_runner() as owner:
        run_id = owner.start("slow", slow_plan(), engine=gate.engine())
        assert gate.entered.wait(5)
        threading.Timer(0.2, gate.open.set).start()
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


# ---- separate processes --------------------------------------------------------------------
