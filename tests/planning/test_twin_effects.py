"""One side effect planned twice in one plan is done once, unless the request asks again.

Issue 44: the mixed request below went to Phases, and phases p2 and p3 each got an
``apply_refund`` of order 88231 ("if delivered 就 refund it", "tell me the refund number").
The repair folds such twins for any planner; a plan that was right stays as it was: the same
tool with other arguments, a request that asks twice, a repeat ordered after its twin,
other conditions, arguments still to be inferred.
"""

from __future__ import annotations

import json

import pytest

from core.llm.engine import Engine
from core.plan.model import Plan
from core.planning.checks.repeated_calls import repeated_calls
from core.planning.checks.twin_effects import fold_twin_effects
from core.planning.clauses import asks_repeat
from core.planning.planner import plan_request
from core.runs.session import request_language
from tests.support.checks import found
from tests.support.fakes import ScriptedChatModel

MIXED = "帮我查一下 order 88231 到了没, if delivered 就 refund it，然后 tell me the refund number"
LOOKUP = {"tool": "query_order", "args": {"order_id": "88231"}, "depends_on": []}
REFUND = {"tool": "apply_refund", "args": {"order_id": "88231", "reason": "用户申请退款"},
          "depends_on": ["s1"], "condition": "s1.status == 'delivered'"}


def step(step_id: str, description: str, **fields) -> dict:
    return {"id": step_id, "description": description, **fields}


def phased_twins() -> Plan:
    """The plan of the issue: the same refund in phases p2 and p3."""
    return Plan.model_validate({"goal": MIXED, "phases": [
        {"id": "p1", "title": "帮我查一下 order 88231 到了没"},
        {"id": "p2", "title": "If delivered 就 refund it", "depends_on": ["p1"]},
        {"id": "p3", "title": "Tell me the refund number", "depends_on": ["p1"]},
        {"id": "p4", "title": "综合以上结果，给出最终回复", "depends_on": ["p1", "p2", "p3"]},
    ], "steps": [
        step("s1", "查询订单 88231", phase="p1", **LOOKUP),
        step("s2", "如果已签收，申请退款", phase="p2", **REFUND),
        step("s3", "如果已签收，申请退款", phase="p3", **REFUND),
        step("s4", "综合以上结果，给出最终回复", phase="p4", depends_on=["s1", "s2", "s3"]),
    ]})


def test_the_issues_phased_plan_keeps_one_refund_and_drops_the_phase_it_emptied(registry):
    plan = phased_twins()
    notes = found(fold_twin_effects, plan, registry)
    assert [s.id for s in plan.steps if s.tool == "apply_refund"] == ["s2"]
    assert plan.step("s4").depends_on == ["s1", "s2"]
    assert [(p.id, p.depends_on) for p in plan.phases] == [
        ("p1", []), ("p2", ["p1"]), ("p4", ["p1", "p2"])]
    assert plan.validate(registry) == []
    assert notes == [
        "s3 与 s2 的 apply_refund 调用完全相同（参数和条件都一样），而请求只要求做一次："
        "已把 s3 并入 s2。如果确实要做两次，请再加回来。",
        "阶段 p3（“Tell me the refund number”）只含 s3，已随它一起去掉。"]


def test_a_models_reply_with_the_refund_twice_is_planned_with_it_once(planner_registry):
    reply = {"goal": MIXED, "steps": [
        step("s1", "Look up order 88231", **LOOKUP),
        step("s2", "If delivered, refund it", **REFUND),
        step("s3", "Get the refund number", **REFUND),
        step("s4", "Tell the user the refund number", depends_on=["s3"]),
    ]}
    model = ScriptedChatModel(replies=[json.dumps(reply)])
    result = plan_request(MIXED, Engine(registry=planner_registry, model=model),
                          language=request_language(MIXED))
    assert not result.fallback, result.errors
    assert [(s.id, s.tool) for s in result.plan.steps] == [
        ("s1", "query_order"), ("s2", "apply_refund"), ("s4", None)]
    assert result.plan.step("s4").depends_on == ["s2"]
    assert any("并入 s2" in warning for warning in result.plan.warnings)
    assert len(model.requests) == 1  # repaired, not sent back


def _unchanged(plan: Plan, registry, request: str) -> None:
    before = plan.model_dump()
    assert found(fold_twin_effects, plan, registry, request) == []
    assert plan.model_dump() == before


@pytest.mark.parametrize("request_text", [
    "Refund order 88231 twice", "Refund order 88231, then refund it again",
    "订单 88231 退款两次", "先退款，再给订单 88231 退一次款", MIXED + "，退两次"])
def test_a_request_that_asks_twice_keeps_both(registry, request_text):
    plan = phased_twins()
    _unchanged(plan, registry, request_text)
    assert found(repeated_calls, plan, registry, request_text) == []


def test_the_same_tool_with_other_arguments_or_conditions_stays(registry):
    other_order = {**REFUND, "args": {"order_id": "66001", "reason": "用户申请退款"}}
    other_reason = {**REFUND, "args": {"order_id": "88231", "reason": "屏幕碎了"}}
    other_condition = {**REFUND, "condition": "s1.status == 'lost'"}
    for twin in (other_order, other_reason, other_condition):
        plan = Plan.model_validate({"goal": MIXED, "steps": [
            step("s1", "look up", **LOOKUP), step("s2", "refund", **REFUND),
            step("s3", "refund", **twin), step("s4", "answer", depends_on=["s2", "s3"])]})
        _unchanged(plan, registry, MIXED)


def test_a_repeat_ordered_after_its_twin_stays(registry):
    """Refund, look again, refund again: the plan orders them, so it may mean both."""
    plan = Plan.model_validate({"goal": "Refund order 88231", "steps": [
        step("s1", "look up", **LOOKUP), step("s2", "refund", **REFUND),
        step("s3", "look again", tool="query_order", args={"order_id": "88231"},
             depends_on=["s2"]),
        step("s4", "refund", **{**REFUND, "depends_on": ["s1", "s3"]}),
        step("s5", "answer", depends_on=["s4"])]})
    _unchanged(plan, registry, "Refund order 88231")


def test_refunds_whose_arguments_are_still_to_infer_stay(registry):
    plan = Plan.model_validate({"goal": "Refund the two broken orders", "steps": [
        step("s1", "Refund the first broken order", tool="apply_refund"),
        step("s2", "Refund the second broken order", tool="apply_refund"),
        step("s3", "answer", depends_on=["s1", "s2"])]})
    _unchanged(plan, registry, "Refund the two broken orders")


def test_a_fold_that_would_break_the_phases_is_not_made(registry):
    """p3 does not come after p2: its own step cannot read p2's refund instead of s3."""
    plan = phased_twins()
    plan.steps.insert(3, plan.steps[0].model_copy(update={
        "id": "s5", "description": "look again", "phase": "p3", "depends_on": ["s3"]}))
    plan.step("s4").depends_on.append("s5")
    assert plan.validate(registry) == []
    _unchanged(plan, registry, MIXED)


@pytest.mark.parametrize(("text", "repeat"), [
    ("refund it twice", True), ("and again", True), ("3 times", True), ("两次", True),
    ("再帮我退一次", True), ("重复", True), (MIXED, False), ("refund order 88231", False),
    ("第一次", False), ("1 次", False), ("within 3 business days", False), ("这次退款", False),
])
def test_a_request_asks_again_only_in_so_many_words(text, repeat):
    assert asks_repeat(text) is repeat
