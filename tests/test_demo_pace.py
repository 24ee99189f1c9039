"""Demo pace: the coordinator waits ``step_delay_s`` before each step, on the run's control."""

from __future__ import annotations

import threading
import time

import pytest
from pydantic import ValidationError

from core.execution.control import RunControl
from core.execution.scheduler import RunOptions, run_plan
from core.llm.engine import Engine
from core.plan.model import Plan
from tests.fakes import ScriptedChatModel, lookup
from tests.test_scheduler import Tools


class RecordingControl(RunControl):
    """A control that notes every demo-pace wait and returns at once (as if it ran out)."""

    def __init__(self) -> None:
        super().__init__()
        self.holds: list[float] = []

    def hold_for(self, seconds: float) -> bool:
        self.holds.append(seconds)
        return True


def _plan() -> Plan:
    return Plan(goal="look two things up", steps=[lookup("s1", "a"), lookup("s2", "b", "s1")])


def _engine(tools: Tools) -> Engine:
    return Engine(registry=tools.registry(), model=ScriptedChatModel(replies=["done"]))


def test_the_pace_is_waited_on_the_control_before_every_step():
    tools, control = Tools(), RecordingControl()
    outcome = run_plan(_plan(), _engine(tools), control=control,
                       options=RunOptions(step_delay_s=1.5, confirm_side_effects=False))
    assert outcome.status == "completed"
    assert control.holds == [1.5, 1.5]
    assert [name for name, _, _ in tools.calls] == ["lookup", "lookup"]


def test_no_pace_by_default_means_no_wait():
    control = RecordingControl()
    outcome = run_plan(_plan(), _engine(Tools()), control=control,
                       options=RunOptions(confirm_side_effects=False))
    assert outcome.status == "completed" and control.holds == []


def test_the_pace_really_delays_the_step():
    started = time.monotonic()
    outcome = run_plan(Plan(goal="g", steps=[lookup("s1", "a")]), _engine(Tools()),
                       options=RunOptions(step_delay_s=0.3, confirm_side_effects=False))
    assert outcome.status == "completed"
    assert time.monotonic() - started >= 0.3  # a lower bound only: the machine may be slow


@pytest.mark.parametrize("action", ["cancel", "pause"])
def test_cancel_or_pause_interrupts_the_wait_and_the_step_never_starts(action):
    tools, control = Tools(), RunControl()
    timer = threading.Timer(0.2, getattr(control, action))
    timer.start()
    started = time.monotonic()
    try:
        outcome = run_plan(_plan(), _engine(tools), control=control,
                           options=RunOptions(step_delay_s=10, confirm_side_effects=False))
    finally:
        timer.cancel()
    assert time.monotonic() - started < 9  # far less than the 10 s pace
    assert tools.calls == []
    expected = {"cancel": ("cancelled", "skipped"), "pause": ("paused", "pending")}[action]
    assert (outcome.status, outcome.plan.step("s1").status) == expected


def test_hold_for_returns_false_at_once_when_cancelled_and_true_when_it_ran_out():
    control = RunControl()
    assert control.hold_for(0.01) is True
    control.cancel()
    started = time.monotonic()
    assert control.hold_for(10) is False
    assert time.monotonic() - started < 5


def test_the_pace_is_bounded():
    with pytest.raises(ValidationError):
        RunOptions(step_delay_s=11)
    with pytest.raises(ValidationError):
        RunOptions(step_delay_s=-1)
