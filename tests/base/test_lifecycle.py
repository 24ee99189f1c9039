"""The lifecycle: every run and step status, every transition, the controls each status allows."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from core import lifecycle
from core.lifecycle import (
    CONTROLS,
    RUN_STATUSES,
    RUN_TRANSITIONS,
    STEP_STATUSES,
    STEP_TRANSITIONS,
    allowed_controls,
    run_may_become,
    statuses_allowing,
    step_may_become,
)
from core.plan.model import Step
from tests.support import REPO

CORE = REPO / "core"


def test_every_run_status_is_named_once_in_order():
    assert RUN_STATUSES == ("planned", "running", "waiting_confirmation", "paused",
                            "completed", "failed", "cancelled", "interrupted")
    assert set(RUN_TRANSITIONS) == set(CONTROLS) == set(RUN_STATUSES)
    assert set(RUN_STATUSES) == lifecycle.TERMINAL_STATUSES | lifecycle.UNFINISHED_STATUSES
    assert {"planned", "running", "waiting_confirmation", "paused"} == lifecycle.HELD_STATUSES
    assert {"planned", "running", "waiting_confirmation"} == lifecycle.ACTIVE_STATUSES


def test_every_step_status_is_named_once():
    assert STEP_STATUSES == ("pending", "running", "completed", "failed", "skipped")
    assert set(STEP_TRANSITIONS) == set(STEP_STATUSES)
    assert {"completed", "failed", "skipped"} == lifecycle.FINISHED_STEP_STATUSES


RUN_MOVES = {
    ("planned", "running"), ("planned", "waiting_confirmation"), ("planned", "paused"),
    ("running", "waiting_confirmation"), ("running", "paused"),
    ("waiting_confirmation", "running"), ("waiting_confirmation", "paused"),
    ("paused", "running"),
    ("interrupted", "running"), ("interrupted", "failed"), ("interrupted", "cancelled"),
    ("completed", "running"), ("failed", "running"), ("cancelled", "running"),
    *((old, end) for old in ("planned", "running", "waiting_confirmation", "paused")
      for end in ("completed", "failed", "cancelled", "interrupted")),
}


@pytest.mark.parametrize("old", RUN_STATUSES)
@pytest.mark.parametrize("new", RUN_STATUSES)
def test_run_transitions(old, new):
    assert run_may_become(old, new) == (old == new or (old, new) in RUN_MOVES)


def test_nothing_returns_to_planned_and_a_cancelled_run_only_runs_again():
    assert not any(run_may_become(s, "planned") for s in RUN_STATUSES if s != "planned")
    assert [s for s in RUN_STATUSES if run_may_become("cancelled", s)] == [
        "running", "cancelled"]  # a re-run from one step, which a person asks for
    assert not run_may_become("exploded", "running") and not run_may_become("running", "x")


STEP_MOVES = {("pending", "running"), ("pending", "skipped"), ("pending", "failed"),
              ("running", "completed"), ("running", "failed"), ("running", "skipped")}


@pytest.mark.parametrize("old", STEP_STATUSES)
@pytest.mark.parametrize("new", STEP_STATUSES)
def test_step_transitions(old, new):
    assert step_may_become(old, new) == ((old, new) in STEP_MOVES)
    assert step_may_become(old, new, "crash reset") == ((old, new) == ("running", "pending"))


@pytest.mark.parametrize("old", STEP_STATUSES)
@pytest.mark.parametrize("new", STEP_STATUSES)
def test_advance_follows_the_lifecycle(old, new):
    step = Step(id="s1", description="a", status=old)
    if old == new or (old, new) in STEP_MOVES:
        step.advance(new)
        assert step.status == new
    else:
        with pytest.raises(ValueError, match=f"s1 cannot go from {old} to {new}"):
            step.advance(new)
        assert step.status == old


def test_crash_reset_is_the_one_way_back():
    step = Step(id="s1", description="a")
    step.advance("running")
    step.error = "boom"
    step.advance("pending", reason="crash reset")
    assert (step.status, step.started_at, step.error, step.attempts) == (
        "pending", None, None, 1)
    with pytest.raises(ValueError, match="pending to pending \\(crash reset\\)"):
        step.advance("pending", reason="crash reset")
    done = Step(id="s2", description="b", status="completed")
    with pytest.raises(ValueError, match="completed to pending"):
        done.advance("pending", reason="crash reset")


CONTROLS_BY_STATUS = {
    "planned": {"pause", "cancel", "confirm"},
    "running": {"pause", "cancel", "confirm"},
    "waiting_confirmation": {"pause", "cancel", "confirm"},
    "paused": {"resume", "cancel", "confirm"},
    "interrupted": {"resume", "cancel"},
    "completed": {"follow_up", "rerun"},
    "failed": {"follow_up", "rerun"},
    "cancelled": {"rerun"},
}


@pytest.mark.parametrize("status", RUN_STATUSES)
def test_controls_per_status(status):
    assert allowed_controls(status) == CONTROLS_BY_STATUS[status]


def test_controls_agree_with_the_transitions():
    assert statuses_allowing("resume") == {"paused", "interrupted"}
    assert statuses_allowing("follow_up") == {"completed", "failed"}
    assert statuses_allowing("rerun") == lifecycle.TERMINAL_STATUSES
    assert statuses_allowing("cancel") == lifecycle.UNFINISHED_STATUSES
    assert all(run_may_become(s, "running") for s in statuses_allowing("resume"))
    assert all(run_may_become(s, "running") for s in statuses_allowing("follow_up"))
    assert all(run_may_become(s, "running") for s in statuses_allowing("rerun"))
    assert all(run_may_become(s, "cancelled") for s in statuses_allowing("cancel"))
    assert allowed_controls("exploded") == frozenset()


# ---- one writer of a step's status -----------------------------------------------------

# LiveRun's status (self.status there, live.status in the runner) is a run's, not a step's
_RUN_STATUS_HOLDERS = {("core/runs/live_run.py", "self"), ("core/runs/runner.py", "live")}


def _status_writes(path: Path, relative: str) -> list[str]:
    """Lines of ``path`` that set a step's status outside Step.advance."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
        if any(isinstance(t, ast.Attribute) and t.attr == "status"
               and (relative, getattr(t.value, "id", None)) not in _RUN_STATUS_HOLDERS
               for t in targets):
            found.append(f"{node.lineno}: .status =")
        if isinstance(node, ast.Call) and _builds_finished_step(node):
            found.append(f"{node.lineno}: Step(status=...)")
    return found


def _builds_finished_step(call: ast.Call) -> bool:
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
    if name == "Step":
        status = next((k.value for k in call.keywords if k.arg == "status"), None)
        return status is not None and not (
            isinstance(status, ast.Constant) and status.value == "pending")
    if name == "model_copy":
        update = next((k.value for k in call.keywords if k.arg == "update"), None)
        return isinstance(update, ast.Dict) and any(
            isinstance(key, ast.Constant) and key.value == "status" for key in update.keys)
    return False


def test_only_step_advance_changes_a_step_status():
    offenders = {}
    for path in sorted(CORE.rglob("*.py")):
        relative = path.relative_to(CORE.parent).as_posix()
        if relative == "core/plan/model.py":
            continue
        if found := _status_writes(path, relative):
            offenders[relative] = found
    assert offenders == {}
