"""Steps start and finish through a StepLauncher; a run waiting for a person holds no thread."""

from __future__ import annotations

import threading
from concurrent.futures import wait

from core.execution.control import ControlWake, RunControl
from core.execution.events import RunEvent
from core.execution.executor import StepOutcome
from core.execution.launcher import Finished, StepHandle, StepWork, ThreadPoolLauncher, paced_work
from core.execution.scheduler import RunOptions, RunOutcome, run_plan
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from tests.support.approval import REGISTRY, failing_plan, replan_to_a_refund
from tests.support.fakes import answer, lookup
from tests.support.shop import refunds_for
from tests.support.steered_tools import Tools
from tests.support.waiting import DEFAULT_TIMEOUT_S


class InlineLauncher:
    """A test double: runs the started steps on the coordinator's own thread when it asks
    what finished (all of them, in launch order), and records every call."""

    def __init__(self, work: StepWork) -> None:
        self.work = work
        self.started: list[StepHandle] = []
        self.answers: list[list[str]] = []  # step ids each next_done returned
        self.recorded: list[str] = []  # names of the coordinator's recorded model calls
        self._queued: list[tuple[StepHandle, Plan, Step]] = []

    def start(self, plan: Plan, step: Step, key: str) -> StepHandle:
        handle = StepHandle(seq=len(self.started), step_id=step.id, key=key)
        self.started.append(handle)
        self._queued.append((handle, plan, step))
        return handle

    def next_done(self, timeout: float, wake: ControlWake) -> list[Finished]:
        if not self._queued:  # nothing runs: wait for the control to change
            wait([wake.future], timeout=timeout)
        finished = [Finished(handle, self.work(plan, step, handle.key))
                    for handle, plan, step in self._queued]
        self._queued.clear()
        self.answers.append([done.handle.step_id for done in finished])
        return finished

    def record(self, name: str, call, *args, **kwargs):
        self.recorded.append(name)
        return call(*args, **kwargs)

    def catch_up(self) -> None:
        """Controls reach this test's run directly: nothing arrives late."""


class CountingLauncher(ThreadPoolLauncher):
    """The default launcher, counting the steps it started."""

    def __init__(self, work: StepWork, max_parallel: int) -> None:
        super().__init__(work, max_parallel)
        self.started: list[str] = []

    def start(self, plan: Plan, step: Step, key: str) -> StepHandle:
        self.started.append(step.id)
        return super().start(plan, step, key)


def _in_background(run) -> tuple[threading.Thread, dict[str, RunOutcome]]:
    result: dict[str, RunOutcome] = {}
    thread = threading.Thread(target=lambda: result.update(outcome=run()))
    return thread, result


def _new_planboard_threads(before: set[threading.Thread]) -> list[str]:
    """PlanBoard's threads (planboard-step and the like) started since ``before``; threads
    of other tests or libraries do not count."""
    return [thread.name for thread in threading.enumerate()
            if thread not in before and thread.name.startswith("planboard-")]


# ---- waiting for people -----------------------------------------------------------------


def test_thirty_confirmations_wait_without_a_thread_and_all_run_once_confirmed():
    tools, control = Tools(), RunControl()
    engine = Engine(registry=tools.registry(), model=None)
    refunds = [Step(id=f"s{i}", description="refund", tool="refund", args={"order_id": str(i)})
               for i in range(1, 31)]
    plan = Plan(goal="g", steps=[*refunds, answer("s31", *(s.id for s in refunds))])
    asked: list[str] = []
    all_asked = threading.Event()

    def sink(event: RunEvent) -> None:
        if event.kind == "waiting_confirmation":
            asked.append(event.step_id)
            if len(asked) == 30:
                all_asked.set()

    options = RunOptions(confirm_side_effects=True, run_id="run30")
    launcher = CountingLauncher(paced_work(engine, control, 0), options.max_parallel)
    before = set(threading.enumerate())
    thread, result = _in_background(lambda: run_plan(
        plan, engine, options=options, control=control, on_event=sink, launcher=launcher))
    thread.start()
    try:
        assert all_asked.wait(DEFAULT_TIMEOUT_S)
        assert _new_planboard_threads(before) == []  # no step waits on a thread
        assert launcher.started == [] and tools.calls == []
    finally:
        for step in refunds:
            control.confirm(step.id)
        thread.join(DEFAULT_TIMEOUT_S)
        launcher.close()
    outcome = result["outcome"]
    assert outcome.status == "completed"
    assert sorted(launcher.started) == sorted(s.id for s in plan.steps)
    assert sorted(key for name, _, key in tools.calls if name == "refund") == sorted(
        f"run30:s{i}:v1" for i in range(1, 31))
    assert sorted(asked) == sorted(s.id for s in refunds)  # each one asked once


def test_a_version_waiting_for_approval_holds_no_thread():
    control = RunControl()
    engine = Engine(REGISTRY)
    asked = threading.Event()

    def sink(event: RunEvent) -> None:
        if event.kind == "waiting_confirmation":
            asked.set()

    launcher = InlineLauncher(paced_work(engine, control, 0))  # steps need no thread either
    before = set(threading.enumerate())
    thread, result = _in_background(lambda: run_plan(
        failing_plan(), engine, control=control, on_event=sink, replanner=replan_to_a_refund,
        options=RunOptions(confirm_side_effects=False, max_replans=1), launcher=launcher))
    thread.start()
    try:
        assert asked.wait(DEFAULT_TIMEOUT_S)
        assert _new_planboard_threads(before) == []  # no step waits on a thread
        assert refunds_for("88231") == []
    finally:
        control.approve_version(2)
        thread.join(DEFAULT_TIMEOUT_S)
    assert result["outcome"].plan.step("s4").status == "completed"
    assert len(refunds_for("88231")) == 1
    assert "s4" in [handle.step_id for handle in launcher.started]
    assert launcher.recorded == ["replan:v1"]  # the replan went through the launcher


# ---- a launcher of one's own ----------------------------------------------------------------


def _parallel_plan() -> Plan:
    return Plan(goal="g", steps=[lookup("s1", "a"), lookup("s2", "b"), lookup("s3", "c"),
                                 lookup("s4", "d", "s1", "s2"),
                                 answer("s5", "s3", "s4")])


def _run(launcher_for) -> tuple[RunOutcome, Tools, object]:
    tools, control = Tools(), RunControl()
    engine = Engine(registry=tools.registry(), model=None)
    launcher = launcher_for(paced_work(engine, control, 0))
    outcome = run_plan(_parallel_plan(), engine, control=control, launcher=launcher,
                       options=RunOptions(run_id="run1"))
    return outcome, tools, launcher


def test_a_launcher_of_ones_own_sees_every_start_and_end_and_changes_nothing():
    inline, inline_tools, launcher = _run(InlineLauncher)
    pooled, pooled_tools, pool = _run(lambda work: ThreadPoolLauncher(work, 4))
    pool.close()
    assert [handle.step_id for handle in launcher.started] == ["s1", "s2", "s3", "s4", "s5"]
    assert [answer for answer in launcher.answers if answer] == [
        ["s1", "s2", "s3"], ["s4"], ["s5"]]  # the parallel steps started together
    assert len({handle.key for handle in launcher.started}) == 5
    for outcome in (inline, pooled):
        assert outcome.status == "completed"
    assert [(s.id, s.status, s.result) for s in inline.plan.steps] == [
        (s.id, s.status, s.result) for s in pooled.plan.steps]
    assert inline.answer == pooled.answer
    assert sorted(map(repr, inline_tools.calls)) == sorted(map(repr, pooled_tools.calls))


# ---- the default launcher -------------------------------------------------------------------


def _blocking_work(release: dict[str, threading.Event],
                   ended: dict[str, threading.Event]) -> StepWork:
    def work(plan: Plan, step: Step, key: str) -> StepOutcome:
        release[step.id].wait(DEFAULT_TIMEOUT_S)
        ended[step.id].set()
        return StepOutcome(status="completed", result=step.id)

    return work


def test_the_thread_pool_wakes_on_a_change_and_reports_steps_once_in_launch_order():
    ids = ["s1", "s2", "s3"]
    release = {i: threading.Event() for i in ids}
    ended = {i: threading.Event() for i in ids}
    plan = Plan(goal="g", steps=[Step(id=i, description=i) for i in ids])
    wake = ControlWake()
    with ThreadPoolLauncher(_blocking_work(release, ended), 3) as launcher:
        handles = [launcher.start(plan, plan.step(i), f"k:{i}") for i in ids]
        waiter, answers = _in_background(lambda: launcher.next_done(DEFAULT_TIMEOUT_S * 10, wake))
        waiter.start()
        wake.fire()  # a person clicked something: the wait ends with nothing finished
        waiter.join(DEFAULT_TIMEOUT_S)
        assert not waiter.is_alive() and answers["outcome"] == []
        for step_id in reversed(ids):  # the last one started ends first
            release[step_id].set()
            assert ended[step_id].wait(DEFAULT_TIMEOUT_S)
    # closing waited for every step: all have ended, and come back in launch order
    done = launcher.next_done(0, wake)
    assert [d.handle for d in done] == handles
    assert [d.outcome.result for d in done] == ids
    assert launcher.next_done(0, wake) == []  # each one is reported once
