"""The approved plan is the boundary: widening() and the gate every later version passes."""

from __future__ import annotations

import threading

import pytest

from core.execution.control import RunControl
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions, run_plan
from core.llm.engine import Engine
from core.plan.approval import widening
from core.plan.model import Plan, Step
from tests.support.approval import REGISTRY, failing_plan, lookup, plan, refund, replan_to_a_refund
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S

# ---- widening(): the one rule --------------------------------------------------------------


def test_the_same_plan_and_read_only_changes_widen_nothing():
    approved = plan(lookup("s1", "88231"), refund("s2", "88231", depends_on=["s1"]))
    assert widening(approved, approved.model_copy(deep=True), REGISTRY) == []
    read_only = plan(lookup("s1", "70412"), lookup("s3", "66001"),
                     refund("s2", "88231", depends_on=["s1"]), version=2)
    assert widening(approved, read_only, REGISTRY) == []


def test_a_new_side_effecting_step_or_new_arguments_widen_it():
    approved = plan(lookup("s1", "88231"), refund("s2", "88231"))
    added = plan(lookup("s1", "88231"), refund("s2", "88231"), refund("s3", "70412"))
    assert widening(approved, added, REGISTRY) == ["s3"]
    changed = plan(lookup("s1", "88231"), refund("s2", "70412"))
    assert widening(approved, changed, REGISTRY) == ["s2"]
    from_reasoning = plan(lookup("s1", "88231"), refund("s2", "88231"),
                          Step(id="s3", description="Refund again", tool="apply_refund",
                               args={"order_id": "88231"}))
    assert widening(approved, from_reasoning, REGISTRY) == ["s3"]


def test_a_changed_condition_or_a_changed_step_it_reads_widens_it():
    approved = plan(lookup("s1", "88231"),
                    refund("s2", "{{s1.order_id}}", depends_on=["s1"],
                           condition="s1.status == 'delivered'"))
    unconditional = plan(lookup("s1", "88231"),
                         refund("s2", "{{s1.order_id}}", depends_on=["s1"]))
    assert widening(approved, unconditional, REGISTRY) == ["s2"]
    other_source = plan(lookup("s1", "70412"),
                        refund("s2", "{{s1.order_id}}", depends_on=["s1"],
                               condition="s1.status == 'delivered'"))
    assert widening(approved, other_source, REGISTRY) == ["s2"]


def test_a_renumbered_copy_keeps_its_approval_once():
    approved = plan(lookup("s1", "00000"), refund("s2", "88231"))
    renumbered = plan(lookup("s3", "88231"), refund("s4", "88231"), version=2)
    assert widening(approved, renumbered, REGISTRY) == []
    twice = plan(lookup("s3", "88231"), refund("s4", "88231"), refund("s5", "88231"))
    assert widening(approved, twice, REGISTRY) == ["s5"]


def test_a_step_that_already_ran_used_its_approval():
    approved = plan(refund("s1", "88231"))
    ran = plan(refund("s1", "88231"), refund("s2", "88231"))
    ran.steps[0].advance("running")
    ran.steps[0].advance("completed")
    assert widening(approved, ran, REGISTRY) == ["s2"]
    assert widening(approved, plan(refund("s1", "88231"), lookup("s2", "1")), REGISTRY) == []


# ---- the gate in run_plan ------------------------------------------------------------------




def _replan_read_only(old: Plan, failure: str, engine) -> Plan:
    return Plan(goal=old.goal, version=old.version + 1, steps=[
        lookup("s4", "88231"), Step(id="s5", description="Summarise", depends_on=["s4"]),
    ])




def _run(replanner, options: RunOptions, control: RunControl | None = None,
         on_event=None):
    return run_plan(failing_plan(), Engine(REGISTRY), options=options,
                    control=control or RunControl(), replanner=replanner,
                    on_event=on_event)


def test_refused_when_nobody_can_be_asked():
    events: list[RunEvent] = []
    outcome = _run(replan_to_a_refund, RunOptions(confirm_side_effects=False, max_replans=1,
                                                   new_versions="refuse"),
                   on_event=events.append)
    assert outcome.status == "failed"
    step = outcome.plan.step("s4")
    assert step.status == "failed" and step.error.startswith("needs approval: plan v2")
    assert refunds_for("88231") == []
    assert "waiting_confirmation" not in [e.kind for e in events]


def test_approved_in_advance_runs_the_refund_once():
    events: list[RunEvent] = []
    outcome = _run(replan_to_a_refund, RunOptions(confirm_side_effects=False, max_replans=1,
                                                   new_versions="approve"),
                   on_event=events.append)
    assert outcome.plan.step("s4").status == "completed"
    assert len(refunds_for("88231")) == 1
    approval = next(e for e in events if e.kind == "confirmed")
    assert approval.data == {"version": 2, "steps": ["s4"], "by": "opt-in"}


@pytest.mark.parametrize("approve", [True, False])
def test_the_run_waits_for_a_person_and_follows_the_decision(approve):
    control = RunControl()
    asked = threading.Event()
    events: list[RunEvent] = []

    def follow(event: RunEvent) -> None:
        events.append(event)
        if event.kind == "waiting_confirmation":
            asked.set()

    result = {}
    worker = threading.Thread(target=lambda: result.update(outcome=_run(
        replan_to_a_refund, RunOptions(confirm_side_effects=False, max_replans=1),
        control, follow)))
    worker.start()
    assert asked.wait(DEFAULT_TIMEOUT_S)
    waiting = next(e for e in events if e.kind == "waiting_confirmation")
    assert waiting.step_id is None
    assert waiting.data == {"version": 2, "approved_version": 1, "steps": ["s4"]}
    assert refunds_for("88231") == []  # nothing ran while it waited
    (control.approve_version if approve else control.reject_version)(2)
    worker.join(DEFAULT_TIMEOUT_S)
    step = result["outcome"].plan.step("s4")
    if approve:
        assert step.status == "completed" and len(refunds_for("88231")) == 1
        assert control.approved.version == 2
    else:
        assert (step.status, step.error) == ("skipped", "rejected by a person")
        assert refunds_for("88231") == []
        assert result["outcome"].plan.step("s5").status in {"completed", "failed"}


def test_a_read_only_replan_needs_no_approval():
    events: list[RunEvent] = []
    outcome = _run(_replan_read_only, RunOptions(confirm_side_effects=False, max_replans=1,
                                                 new_versions="refuse"),
                   on_event=events.append)
    assert outcome.plan.step("s4").status == "completed"
    assert not {"waiting_confirmation", "confirmed", "rejected"} & {e.kind for e in events}
