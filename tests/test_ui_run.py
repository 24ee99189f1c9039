"""AppTest of the Run page: live progress, confirm and reject, pause, resume and cancel."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.runner import Runner
from core.tools.catalog import default_registry
from tests.test_ui_app import (
    TIMEOUT_S,
    block_text,
    fresh_runner,
    keyed_block,
    open_app,
    wait_for,
)


@pytest.fixture
def runner() -> Iterator[Runner]:
    """The app's runner on this test's PLANBOARD_HOME."""
    yield from fresh_runner()



def _refund_plan() -> Plan:
    return Plan(goal="Refund order 88231 if it was delivered", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="Refund it if delivered", tool="apply_refund",
             args={"order_id": "88231", "reason": "broken"}, depends_on=["s1"],
             condition="s1.status == 'delivered'"),
    ])


def _start(runner, *, confirm: bool = True) -> str:
    plan = _refund_plan()
    return runner.start(plan.goal, plan, engine=Engine(default_registry()),
                        options=RunOptions(confirm_side_effects=confirm),
                        settings_public={"offline": True})


def _open_run(run_id: str):
    return open_app("pages/run.py", query={"run": run_id})


def _status(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Status:**"))


def _keys(at) -> set[str]:
    return {button.key for button in at.button}


def test_without_a_run_the_page_says_how_to_open_one(runner):
    at = open_app("pages/run.py")
    assert at.info[0].value.startswith("No run selected")


def test_an_unknown_run_is_a_one_line_error(runner):
    at = _open_run("nope")
    assert at.error[0].value == "There is no run nope. Open one from the history."
    assert not at.exception


def test_confirming_the_refund_runs_it_and_the_button_disappears(runner):
    run_id = _start(runner)
    assert runner.wait(run_id, TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    at = _open_run(run_id)
    assert _status(at) == "**Status:** Waiting for confirmation"
    assert {"confirm_step_s2", "reject_step_s2"} <= _keys(at)
    assert at.get("graphviz_chart")[0].proto.spec.count("#D3F9D8") == 1  # s1 completed
    at.button(key="confirm_step_s2").click().run()
    assert "confirm_step_s2" not in _keys(at)
    assert runner.wait(run_id, TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: "Completed" in _status(a))
    assert "confirm_step_s2" not in _keys(at) and "reject_step_s2" not in _keys(at)
    refund_id = runner.store.get_run(run_id).plan.step("s2").result["refund_id"]
    assert refund_id in block_text(keyed_block(at, "run_answer"))
    assert at.button(key="run_pause").disabled and at.button(key="run_cancel").disabled
    assert at.progress[0].value == 100


def test_rejecting_the_refund_skips_it(runner):
    run_id = _start(runner)
    runner.wait(run_id, TIMEOUT_S, until_confirmation=True)
    at = _open_run(run_id)
    at.button(key="reject_step_s2").click().run()
    assert "reject_step_s2" not in _keys(at)
    assert runner.wait(run_id, TIMEOUT_S).status in {"completed", "failed"}
    plan = runner.store.get_run(run_id).plan
    assert plan.step("s2").status == "skipped"
    at = wait_for(at, lambda a: "Waiting" not in _status(a) and "Running" not in _status(a))
    assert "⏭ Skipped" in " ".join(c.value for c in at.caption)


def test_pause_resume_and_cancel(runner):
    run_id = _start(runner)
    runner.wait(run_id, TIMEOUT_S, until_confirmation=True)
    at = _open_run(run_id)
    at.button(key="run_pause").click().run()
    assert runner.wait(run_id, TIMEOUT_S).status == "paused"
    at = wait_for(at, lambda a: _status(a) == "**Status:** Paused")
    assert "confirm_step_s2" not in _keys(at)
    assert not at.button(key="run_resume").disabled
    at.button(key="run_resume").click().run()
    assert runner.wait(run_id, TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    at = wait_for(at, lambda a: "confirm_step_s2" in _keys(a))
    at.button(key="run_cancel").click().run()
    assert runner.wait(run_id, TIMEOUT_S).status == "cancelled"
    at = wait_for(at, lambda a: _status(a) == "**Status:** Cancelled")
    assert "confirm_step_s2" not in _keys(at)
    assert at.button(key="run_resume").disabled and at.button(key="run_cancel").disabled


def _replanner(plan: Plan, failure: str, engine) -> Plan:
    new = plan.model_copy(deep=True)
    new.version = plan.version + 1
    new.steps = [Step(id="s2", description="Calculate something that works",
                      tool="calculate", args={"expression": "1 + 1"})]
    return new


def test_replan_history_shows_the_diff_between_versions(runner):
    plan = Plan(goal="Divide", steps=[
        Step(id="s1", description="Divide by zero", tool="calculate", args={"expression": "1/0"}),
    ])
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=RunOptions(max_replans=1), replanner=_replanner,
                          settings_public={"offline": True})
    runner.wait(run_id, TIMEOUT_S)
    at = _open_run(run_id)
    titles = [e.label for e in at.expander]
    assert "Version 1 → 2 · replan after a failure" in titles
    diff = next(e for e in at.expander if e.label.startswith("Version 1 → 2"))
    text = " ".join(m.value for m in diff.markdown)
    assert ":material/add: **s2** Calculate something that works" in text
    assert ":material/remove: ~~s1 Divide by zero~~" in text


def _replan_to_a_refund(plan: Plan, failure: str, engine) -> Plan:
    """s1 failed; the new version refunds another order (issue 9's scenario)."""
    return Plan(goal=plan.goal, version=plan.version + 1, steps=[
        Step(id="s3", description="Refund order 88231 instead", tool="apply_refund",
             args={"order_id": "88231", "reason": "lost"}),
    ])


def _start_widening(runner) -> str:
    plan = Plan(goal="Where is my parcel?", steps=[
        Step(id="s1", description="Look up order 00000", tool="query_order",
             args={"order_id": "00000"}),
        Step(id="s2", description="Track its parcel", tool="query_logistics",
             args={"tracking_no": "{{s1.tracking_no}}"}, depends_on=["s1"]),
    ])
    return runner.start(plan.goal, plan, engine=Engine(default_registry()),
                        options=RunOptions(max_replans=1, max_attempts=1),
                        replanner=_replan_to_a_refund, settings_public={"offline": True})


@pytest.mark.parametrize("approve", [True, False])
def test_a_new_version_that_adds_a_refund_waits_for_approval(runner, approve):
    run_id = _start_widening(runner)
    assert runner.wait(run_id, TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    at = _open_run(run_id)
    assert {"approve_version", "reject_version"} <= _keys(at)
    shown = block_text(keyed_block(at, "version_wait"))
    assert ":material/add: **s3** Refund order 88231 instead" in shown
    assert "Plan version 2 adds or changes" in at.warning[0].value
    assert runner.store.get_run(run_id).plan.step("s3").status == "pending"  # not run yet
    at.button(key="approve_version" if approve else "reject_version").click().run()
    assert "approve_version" not in _keys(at)
    runner.wait(run_id, TIMEOUT_S)
    refund = runner.store.get_run(run_id).plan.step("s3")
    if approve:
        assert refund.status == "completed" and refund.result["created"] is True
    else:
        assert (refund.status, refund.error) == ("skipped", "rejected by a person")
    assert not at.exception
