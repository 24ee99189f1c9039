"""A replan that plans again the call that just failed is sent back once with the error."""

from __future__ import annotations

import json

from core.plan.model import Plan, Step
from core.planning.planner import replan_request
from tests.support.planning import REQUEST, engine_with

FAILED = "query_order failed: order_id must be digits, got '{{s1}}'"


def failed_plan() -> Plan:
    return Plan(goal=REQUEST, version=1, steps=[
        Step(id="s1", description="Read the order number", status="completed",
             result="Order 88231"),
        Step(id="s2", description="Look the order up", tool="query_order",
             args={"order_id": "{{s1}}"}, depends_on=["s1"], status="failed", error=FAILED),
        Step(id="s3", description="Tell the user", depends_on=["s1", "s2"]),
    ])


def _reply(order_id: str) -> str:
    return json.dumps({"steps": [
        {"id": "s4", "description": "Look the order up again", "tool": "query_order",
         "args": {"order_id": order_id}, "depends_on": ["s1"]},
        {"id": "s5", "description": "Tell the user", "tool": None, "depends_on": ["s4"]}]})


def test_the_same_failed_call_planned_again_is_sent_back_with_its_error(planner_registry):
    engine, model = engine_with(planner_registry, _reply("{{s1}}"), _reply("88231"))
    result = replan_request(failed_plan(), f"s2 failed: {FAILED}", engine)
    correction = model.requests[1]["messages"][-1]["content"]
    assert ("s4 calls query_order with the same arguments as s2, which failed: "
            f"{FAILED}.") in correction
    assert result.attempts == 2 and result.plan.step("s4").args == {"order_id": "88231"}


def test_a_changed_call_is_not_sent_back(planner_registry):
    engine, model = engine_with(planner_registry, _reply("88231"))
    result = replan_request(failed_plan(), f"s2 failed: {FAILED}", engine)
    assert result.attempts == 1 and len(model.requests) == 1


def test_repeated_twice_it_stays_a_warning_and_the_plan_is_kept(planner_registry):
    engine, _ = engine_with(planner_registry, _reply("{{s1}}"), _reply("{{s1}}"))
    result = replan_request(failed_plan(), f"s2 failed: {FAILED}", engine)
    assert result.attempts == 2 and result.plan is not None
    assert any(warning.startswith("s4 calls query_order with the same arguments as s2")
               for warning in result.plan.warnings)


def test_the_same_call_under_a_new_condition_is_not_sent_back(planner_registry):
    guarded = json.loads(_reply("{{s1}}"))
    guarded["steps"][0]["condition"] = "s1 != ''"
    engine, model = engine_with(planner_registry, json.dumps(guarded))
    result = replan_request(failed_plan(), f"s2 failed: {FAILED}", engine)
    assert result.attempts == 1 and len(model.requests) == 1
    assert result.plan.step("s4").condition == "s1 != ''"
