"""core.base.copies: the deep copies plans are made with share nothing mutable with their
original, and equal what pydantic's deep copy makes."""

from __future__ import annotations

from datetime import UTC, datetime

from core.base.copies import copied, json_copy
from core.base.messages import msg
from core.execution.control import RunControl
from core.llm.engine import Engine
from core.plan.model import CheckNote, Phase, Plan, Step
from core.plan.versions import renumber
from core.planning.followup import extend_plan_request
from tests.support.approval import REGISTRY


def _plan() -> Plan:
    return Plan(
        goal="refund order 88231", constraints=["once"], warnings=["w"],
        phases=[Phase(id="p1", title="look", goal="look it up")],
        check_notes=[CheckNote(check="c", stage="plan", action="warned", detail="d")],
        steps=[Step(id="s1", description="look up", tool="query_order", phase="p1",
                    args={"order_id": "88231", "fields": ["total", {"nested": [1, 2]}]},
                    status="completed", result={"rows": [{"total": 12.5}]},
                    resolved_args={"order": "88231"}, error_message=msg("step.cancelled"),
                    started_at=datetime(2026, 12, 7, tzinfo=UTC)),
               Step(id="s2", description="refund {{s1.total}}", tool="apply_refund", phase="p1",
                    args={"order_id": "{{s1.order_id}}", "reason": "broken"},
                    depends_on=["s1"])])


def _mutate_everything(plan: Plan) -> None:
    """Change, in place, every dict, list and model the plan holds."""
    first = plan.steps[0]
    first.args["fields"][1]["nested"].append(3)
    first.args["order_id"] = "00000"
    first.result["rows"][0]["total"] = 0
    first.resolved_args.clear()
    first.error_message.params["changed"] = True
    plan.steps[1].depends_on.append("s9")
    plan.steps.append(Step(id="s3", description="extra"))
    plan.constraints.append("twice")
    plan.warnings.clear()
    plan.phases[0].title = "changed"
    plan.check_notes[0].detail = "changed"


def test_a_copied_plan_equals_pydantic_s_deep_copy_and_keeps_nothing_shared():
    original = _plan()
    deep = original.model_copy(deep=True)
    mine = copied(original)
    assert mine == deep == original
    assert mine.model_fields_set == deep.model_fields_set
    assert [s.model_fields_set for s in mine.steps] == [s.model_fields_set for s in deep.steps]
    _mutate_everything(original)
    assert mine == deep != original


def test_the_original_is_untouched_when_the_copy_is_changed():
    original = _plan()
    kept = original.model_copy(deep=True)
    _mutate_everything(copied(original))
    assert original == kept


def test_replaced_fields_are_taken_as_given_like_pydantic_s_update():
    original = _plan()
    steps = [Step(id="s7", description="new")]
    mine = copied(original, version=4, steps=steps)
    deep = original.model_copy(deep=True, update={"version": 4, "steps": steps})
    assert mine == deep and mine.steps is steps and mine.version == 4
    assert mine.model_fields_set == deep.model_fields_set
    assert original.version == 1 and original.steps[0].id == "s1"


def test_json_copy_copies_containers_and_models_and_deep_copies_anything_else():
    value = {"a": [1, {"b": (1, [2])}], "m": Phase(id="p1", title="t", goal="g")}
    twin = json_copy(value)
    assert twin == value
    value["a"][1]["b"][1].append(3)
    value["m"].title = "changed"
    assert twin == {"a": [1, {"b": (1, [2])}], "m": Phase(id="p1", title="t", goal="g")}


def test_the_approved_plan_does_not_follow_the_run_s_plan_as_it_is_changed():
    plan = _plan()
    control = RunControl()
    control.set_approved(plan)
    kept = plan.model_copy(deep=True)
    _mutate_everything(plan)
    assert control.approved == kept


def test_a_renumbered_step_and_a_follow_up_version_leave_the_old_plan_as_it_was():
    plan = _plan()
    del plan.steps[0].args["fields"]  # the follow-up's checks validate the old steps' args
    kept = plan.model_copy(deep=True)
    renamed = renumber(plan.steps[1], {"s1": "s4", "s2": "s5"})
    assert (renamed.id, renamed.depends_on) == ("s5", ["s4"])
    assert renamed.args == {"order_id": "{{s4.order_id}}", "reason": "broken"}
    renamed.depends_on.append("s9")
    renamed.args["reason"] = "changed"
    extended, _ = extend_plan_request(plan, "also track its parcel SF1234567890",
                                      Engine(REGISTRY))
    assert [s.id for s in extended.steps[:2]] == ["s1", "s2"] and extended.version == 2
    for step in extended.steps[:2]:
        step.args["order_id"] = "00000"
        step.depends_on.append("s9")
    extended.steps[0].result["rows"].clear()
    extended.phases[0].title = "changed"
    extended.constraints.append("twice")
    assert plan == kept
