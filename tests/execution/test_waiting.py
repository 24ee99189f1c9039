"""Waiting for a person is plain state in the coordinator: each way such a wait can end."""

from __future__ import annotations

import threading

from core.execution.control import RunControl
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions, RunOutcome, run_plan
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from tests.support.approval import REGISTRY, failing_plan, replan_to_a_refund
from tests.support.fakes import ScriptedChatModel, answer, lookup
from tests.support.shop import refunds_for
from tests.support.steered_tools import Tools
from tests.support.waiting import DEFAULT_TIMEOUT_S


def _run(**kwargs) -> RunOutcome:
    """run_plan on another thread, so that a run that never ends fails instead of hanging."""
    result: dict[str, RunOutcome] = {}
    thread = threading.Thread(target=lambda: result.update(outcome=run_plan(**kwargs)))
    thread.start()
    thread.join(DEFAULT_TIMEOUT_S)
    assert not thread.is_alive(), "the run did not end"
    return result["outcome"]


def _refund(step_id: str, *deps: str) -> Step:
    return Step(id=step_id, description="refund", tool="refund", args={"order_id": "9"},
                depends_on=list(deps))


def test_a_cancel_while_a_step_waits_for_confirmation_skips_it():
    tools, control = Tools(), RunControl()
    events: list[RunEvent] = []

    def sink(event: RunEvent) -> None:
        events.append(event)
        if event.kind == "waiting_confirmation":
            control.cancel()

    plan = Plan(goal="g", steps=[lookup("s1", "a"), _refund("s2", "s1"), answer("s3", "s2")])
    outcome = _run(plan=plan, engine=Engine(registry=tools.registry(), model=None),
                   control=control, on_event=sink,
                   options=RunOptions(confirm_side_effects=True))
    assert outcome.status == "cancelled"
    assert (plan.step("s2").status, plan.step("s2").error) == ("skipped", "cancelled by a person")
    assert [name for name, _, _ in tools.calls] == ["lookup"]
    assert [e.kind for e in events].count("cancelled") == 1


def test_a_step_a_new_version_drops_is_no_longer_awaited():
    tools = Tools()
    events: list[RunEvent] = []

    def without_the_refund(old: Plan, _reason: str, _engine: Engine) -> Plan:
        new = old.model_copy(deep=True, update={"version": old.version + 1})
        new.steps = [s for s in new.steps if s.id != "s2"]
        return new

    plan = Plan(goal="g", steps=[lookup("s1", "a"), _refund("s2"), answer("s3", "s1")])
    outcome = _run(plan=plan, engine=Engine(registry=tools.registry(),
                                            model=ScriptedChatModel(replies=["final"])),
                   on_event=events.append, replanner=without_the_refund,
                   options=RunOptions(confirm_side_effects=True, checkpoint="every_step"))
    kinds = [(e.kind, e.step_id) for e in events]
    assert ("waiting_confirmation", "s2") in kinds  # asked while s1 ran
    assert outcome.status == "completed" and outcome.plan.ids() == ["s1", "s3"]
    assert plan.step("s2").status == "skipped"  # version 1's copy, replaced
    assert not {"confirmed", "rejected"} & {kind for kind, _ in kinds}
    assert [name for name, _, _ in tools.calls] == ["lookup"]


def test_a_pause_while_a_version_waits_for_approval_asks_again_on_resume():
    control = RunControl()
    asked: list[int] = []

    def pause_then_approve(event: RunEvent) -> None:
        if event.kind == "waiting_confirmation":
            asked.append(event.data["version"])
            if len(asked) == 1:
                control.pause()
            else:
                control.approve_version(event.data["version"])

    options = RunOptions(confirm_side_effects=False, max_replans=1)
    paused = _run(plan=failing_plan(), engine=Engine(REGISTRY), control=control,
                  on_event=pause_then_approve, replanner=replan_to_a_refund, options=options)
    assert paused.status == "paused" and paused.plan.step("s4").status == "pending"
    assert refunds_for("88231") == []
    control.resume()
    resumed = _run(plan=paused.plan, engine=Engine(REGISTRY), control=control,
                   on_event=pause_then_approve, replanner=replan_to_a_refund, options=options)
    assert asked == [2, 2]
    assert resumed.plan.step("s4").status == "completed" and len(refunds_for("88231")) == 1
