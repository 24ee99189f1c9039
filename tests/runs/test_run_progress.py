"""The run view's progress counts and skip reasons (core/runs/view.py), and the demo pace."""

from __future__ import annotations

import pytest
import streamlit as st

from core.base.messages import msg
from core.execution.executor import StepOutcome
from core.plan.model import Plan, Step
from core.runs.view import Progress, SkipReason, count_progress, skip_reason
from ui import state


def _step(step_id: str, status: str, error: str | None = None, **extra) -> Step:
    step = Step(id=step_id, description=step_id, **extra)
    if status != "pending":
        step.advance("running" if status != "skipped" else status)
        if status not in {"running", "skipped"}:
            step.advance(status)
    step.error = error
    return step


def _plan() -> Plan:
    return Plan(goal="g", steps=[
        _step("s1", "completed"), _step("s2", "completed"), _step("s3", "failed", "boom"),
        _step("s4", "skipped", "condition not met: s1.x == 1", condition="s1.x == 1"),
        _step("s5", "skipped", "cancelled by a person"), _step("s6", "pending"),
    ])


def test_progress_counts_steps_by_outcome():
    progress = count_progress(_plan(), cancelled=False)
    assert progress == Progress(total=6, done=2, skipped=2, failed=1)
    assert progress.fraction == pytest.approx(5 / 6)


def test_a_cancelled_runs_unrun_steps_are_set_apart_and_its_bar_is_not_full():
    progress = count_progress(_plan(), cancelled=True)
    assert (progress.done, progress.skipped, progress.failed, progress.not_run) == (2, 1, 1, 2)
    assert progress.cancelled and progress.fraction == pytest.approx(4 / 6)


def test_an_empty_plan_has_no_progress():
    assert count_progress(None, cancelled=False).fraction == 0.0


@pytest.mark.parametrize(("error", "expected"), [
    ("condition not met: s1.x == 1", SkipReason(kind="condition", detail="s1.x == 1")),
    ("rejected by a person", SkipReason(kind="rejected")),
    ("cancelled by a person", SkipReason(kind="cancelled")),
    ("cancelled before it started", SkipReason(kind="cancelled")),
    ("skipped: depends on failed step s1, s2", SkipReason(kind="blocked", detail="s1, s2")),
    ("the model could not judge the condition", SkipReason(
        kind="other", detail="the model could not judge the condition")),
])
def test_skip_reasons_are_read_from_the_recorded_reason(error, expected):
    step = _step("s2", "skipped", error, condition="s1.x == 1")
    assert skip_reason(step) == expected


@pytest.mark.parametrize(("why", "kind"), [
    (msg("step.condition_not_met", condition="s1.x == 1"), "condition"),
    (msg("step.rejected"), "rejected"),
    (msg("step.cancelled"), "cancelled"),
    (msg("step.blocked", steps="s1"), "blocked"),
])
def test_the_reason_the_scheduler_records_is_the_one_the_run_view_reads(why, kind):
    step = _step("s2", "skipped", StepOutcome.skipped(why).error, condition="s1.x == 1")
    assert skip_reason(step).kind == kind


def test_the_sidebars_demo_pace_reaches_the_run_options(monkeypatch):
    monkeypatch.setattr(st, "session_state", {"demo_pace": 1.5})
    assert state.run_options().step_delay_s == 1.5
    monkeypatch.setattr(st, "session_state", {})
    assert state.run_options().step_delay_s == 0
