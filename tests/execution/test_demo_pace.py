"""Demo pace: a started step shows as running for ``step_delay_s`` before it works."""

from __future__ import annotations

import threading
import time

import pytest
from pydantic import ValidationError

from core.execution.control import RunControl
from core.execution.scheduler import RunOptions, run_plan
from core.llm.engine import Engine
from core.plan.model import Plan
from tests.support.fakes import ScriptedChatModel, lookup
from tests.support.steered_tools import Tools


class RecordingControl(RunControl):
    """A control that notes every demo-pace wait (with the step's status then) at once."""

    def __init__(self, plan: Plan) -> None:
        super().__init__()
        self.plan = plan
        self.holds: list[tuple[float, list[str]]] = []

    def pace(self, seconds: float) -> None:
        self.holds.append((seconds, [s.status for s in self.plan.steps]))


def _plan() -> Plan:
    return Plan(goal="look two things up", steps=[lookup("s1", "a"), lookup("s2", "b", "s1")])


def _engine(tools: Tools) -> Engine:
    return Engine(registry=tools.registry(), model=ScriptedChatModel(replies=["done"]))


def test_each_step_is_running_while_its_pace_is_waited():
    plan = _plan()
    tools, control = Tools(), RecordingControl(plan)
    outcome = run_plan(plan, _engine(tools), control=control,
                       options=RunOptions(step_delay_s=1.5, confirm_side_effects=False))
    assert outcome.status == "completed"
    assert control.holds == [(1.5, ["running", "pending"]), (1.5, ["completed", "running"])]
    assert [name for name, _, _ in tools.calls] == ["lookup", "lookup"]


class MeetingControl(RunControl):
    """A pace that returns only when two steps are pacing at the same time."""

    def __init__(self) -> None:
        super().__init__()
        self.meeting = threading.Barrier(2, timeout=30)

    def pace(self, seconds: float) -> None:
        self.meeting.wait()  # breaks (and the step fails) if the paces ran one after another


def test_parallel_steps_wait_their_pace_side_by_side():
    plan = Plan(goal="two lookups", steps=[lookup("s1", "a"), lookup("s2", "b")])
    outcome = run_plan(plan, _engine(Tools()), control=MeetingControl(),
                       options=RunOptions(step_delay_s=1.0, confirm_side_effects=False))
    assert outcome.status == "completed"
    assert [s.status for s in outcome.plan.steps] == ["completed", "completed"]


def test_no_pace_by_default_means_no_wait():
    plan = _plan()
    control = RecordingControl(plan)
    outcome = run_plan(plan, _engine(Tools()), control=control,
                       options=RunOptions(confirm_side_effects=False))
    assert outcome.status == "completed" and control.holds == []


def test_the_pace_really_delays_the_step():
    started = time.monotonic()
    outcome = run_plan(Plan(goal="g", steps=[lookup("s1", "a")]), _engine(Tools()),
                       options=RunOptions(step_delay_s=0.3, confirm_side_effects=False))
    assert outcome.status == "completed"
    assert time.monotonic() - started >= 0.3  # a lower bound only: the machine may be slow


def test_cancel_ends_the_pace_at_once_and_the_step_never_works():
    tools, control = Tools(), RunControl()
    timer = threading.Timer(0.2, control.cancel)
    timer.start()
    started = time.monotonic()
    try:
        outcome = run_plan(_plan(), _engine(tools), control=control,
                           options=RunOptions(step_delay_s=10, confirm_side_effects=False))
    finally:
        timer.cancel()
    assert time.monotonic() - started < 9  # far less than the 10 s pace
    assert tools.calls == []
    assert (outcome.status, outcome.plan.step("s1").status) == ("cancelled", "skipped")


class PausingControl(RunControl):
    """A person who clicks Pause while the first step waits its pace."""

    def pace(self, seconds: float) -> None:
        self.pause()
        super().pace(seconds)


def test_a_pause_lets_the_started_step_finish_and_starts_no_other():
    tools = Tools()
    outcome = run_plan(_plan(), _engine(tools), control=PausingControl(),
                       options=RunOptions(step_delay_s=0.1, confirm_side_effects=False))
    assert outcome.status == "paused"
    assert [s.status for s in outcome.plan.steps] == ["completed", "pending"]
    assert [name for name, _, _ in tools.calls] == ["lookup"]


def test_the_pace_is_bounded():
    with pytest.raises(ValidationError):
        RunOptions(step_delay_s=11)
    with pytest.raises(ValidationError):
        RunOptions(step_delay_s=-1)
