"""AppTest of the review's safety: settings that widen what runs without asking take a second
act and stay in view (sidebar, beside Approve & run, on the run page); a waiting step's card
shows its arguments as they will be sent."""

from __future__ import annotations

import pytest

from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.toolsets import default_registry
from tests.support.app import block_text, generated_plan, keyed_block, open_app
from tests.support.waiting import DEFAULT_TIMEOUT_S
from ui.i18n import TEXT

# each guarded switch: its key and the value that widens what runs without asking
GUARDED = [("confirm_side_effects", False), ("read_ahead", True)]


@pytest.mark.parametrize(("key", "widening"), GUARDED)
def test_a_widening_switch_waits_for_a_second_act_that_names_what_changes(runner, key,
                                                                          widening):
    at = open_app()
    at.toggle(key=key).set_value(widening).run()
    assert at.toggle(key=key).value is (not widening)  # the click alone changes nothing
    asked = keyed_block(at, f"widen_{key}")
    assert asked is not None and [w.value for w in asked.warning] == [
        TEXT[f"widen_{key}_ask"]["en"]]
    at.button(key=f"widen_{key}_no").click().run()
    assert at.toggle(key=key).value is (not widening)
    assert keyed_block(at, f"widen_{key}") is None

    at.toggle(key=key).set_value(widening).run()
    at.button(key=f"widen_{key}_yes").click().run()
    assert at.toggle(key=key).value is widening
    assert keyed_block(at, f"widen_{key}") is None
    said = TEXT[f"widened_{key}"]["en"]
    assert any(said in caption.value for caption in at.sidebar.caption)

    at.toggle(key=key).set_value(not widening).run()  # back towards safety: one click
    assert at.toggle(key=key).value is (not widening)
    assert keyed_block(at, f"widen_{key}") is None
    assert not any(said in caption.value for caption in at.sidebar.caption)
    assert not at.exception


def test_every_sidebar_switch_keeps_its_help_outside_its_label(runner):
    at = open_app()
    toggles = [toggle for toggle in at.sidebar.toggle]
    assert {toggle.key for toggle in toggles} >= {"offline_mode", "confirm_side_effects",
                                                  "read_ahead"}
    for toggle in toggles:
        assert not toggle.help, toggle.key  # a help inside the label is flipped by a click
        beside = keyed_block(at, f"switch_{toggle.key}")
        assert beside is not None and [m.help for m in beside.markdown if m.help], toggle.key


@pytest.mark.parametrize("confirm", [True, False])
def test_the_approve_button_says_whether_side_effects_will_be_confirmed(runner, confirm):
    at = generated_plan(confirm_side_effects=confirm)
    note = block_text(keyed_block(at, "approve_note"))
    assert "s3 (apply\\_refund)" in note  # the demo's refund step, named
    wanted = "Confirmation of side effects is off" if not confirm else "wait for your Confirm"
    assert wanted in note


def test_a_plan_without_side_effects_says_so_beside_the_approve_button(runner):
    at = open_app()
    at.text_area(key="request").input("What is 2+3?").run()
    at.button(key="blank_plan").click().run()
    assert TEXT["approve_no_side_effects"]["en"] in block_text(keyed_block(at, "approve_note"))


@pytest.mark.parametrize(("options", "says", "not_says"), [
    (RunOptions(), "run_confirmed", "run_unconfirmed"),
    (RunOptions(confirm_side_effects=False, new_versions="approve"), "run_unconfirmed",
     "run_confirmed"),
])
def test_the_run_page_says_whether_its_side_effects_are_confirmed(runner, options, says,
                                                                   not_says):
    plan = Plan(goal="Look up order 88231", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"})])
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=options, settings_public={"offline": True})
    runner.wait(run_id)
    at = open_app("pages/run.py", query={"run": run_id})
    note = block_text(keyed_block(at, "run_safety"))
    assert TEXT[says]["en"] in note and TEXT[not_says]["en"] not in note
    approved = TEXT["run_new_versions_approved"]["en"] in note
    assert approved is (options.new_versions == "approve")


# ---- what is confirmed is what runs --------------------------------------------------------


def _waiting_refund(store, order_id: str) -> str:
    """A run whose refund (s2, its order_id as given) waits for a person; s1 looked up order
    88231. Stored as the workflow leaves it; nobody executes it."""
    plan = Plan(goal="Refund order 88231 if it arrived", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="Refund it", tool="apply_refund",
             args={"order_id": order_id, "reason": "item is broken"}, depends_on=["s1"]),
    ])
    plan.steps[0].advance("running")
    plan.steps[0].advance("completed")
    plan.steps[0].result = {"order_id": "88231", "status": "delivered"}
    run_id = store.create_run(plan.goal, {"offline": True}, plan,
                              status="waiting_confirmation",
                              options=RunOptions().model_dump(mode="json"))
    store.append_event(run_id, RunEvent(kind="waiting_confirmation", step_id="s2",
                                        data={"tool": "apply_refund", "args": plan.steps[1].args}))
    return run_id


def test_the_card_shows_a_referenced_value_as_it_will_be_sent(runner):
    at = open_app("pages/run.py", query={"run": _waiting_refund(runner.store,
                                                                "{{s1.order_id}}")})
    shown = block_text(keyed_block(at, "decision_args_s2"))
    assert "**88231** ← s1.order\\_id" in shown  # in body type, not a caption
    assert "{{" not in shown and "item is broken" in shown
    assert not keyed_block(at, "decision_args_s2").caption
    assert at.button(key="confirm_step_s2").disabled is False


def test_confirm_waits_while_a_value_cannot_be_resolved(runner):
    at = open_app("pages/run.py", query={"run": _waiting_refund(runner.store,
                                                                "{{s1.order_number}}")})
    shown = block_text(keyed_block(at, "decision_args_s2"))
    assert "cannot be resolved yet" in shown and "order\\_number" in shown
    assert at.button(key="confirm_step_s2").disabled is True
    assert at.button(key="reject_step_s2").disabled is False
    assert any(TEXT["card_confirm_waits"]["en"] in c.value for c in at.caption)


# ---- one approval, one run ------------------------------------------------------------------


def test_a_second_approval_of_the_version_opens_its_run_or_starts_another_deliberately(runner):
    at = generated_plan(confirm_side_effects=False)
    at.button(key="approve_run").click().run()
    first = at.query_params["run"]
    at.switch_page("pages/plan.py").run()  # back on the plan page: the plan is still there
    at.button(key="approve_run").click().run()
    asked = keyed_block(at, "version_run")
    assert [w.value for w in asked.warning] == [
        TEXT["version_has_run"]["en"].format(run_id=first)]
    assert [r.run_id for r in runner.store.list_runs()] == [first]

    at.button(key="open_version_run").click().run()
    assert at.query_params["run"] == first
    at.switch_page("pages/plan.py").run()
    assert keyed_block(at, "version_run") is None  # said once, for the approval that found it
    at.button(key="approve_run").click().run()
    at.button(key="start_another_run").click().run()
    second = at.query_params["run"]
    assert second != first and len(runner.store.list_runs()) == 2
    for run_id in (first, second):
        assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
