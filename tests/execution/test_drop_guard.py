"""What a checkpoint may not drop: steps still due, parts of the request, the tool asked for.

Each case is a decision a 1.5B model's checkpoint made ("the goal is already met"), refused
by core.planning.checks.drop_guard; the checkpoint then keeps the plan as it was.
"""

from __future__ import annotations

import pytest

from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.planning.checkpoint import run_checkpoint
from core.tools.registry import ToolRegistry
from tests.support.checkpoints import FINISH_EARLY, run_step, three_steps
from tests.support.fakes import ScriptedChatModel


def test_a_step_whose_condition_holds_cannot_be_dropped(registry: ToolRegistry) -> None:
    # the local model saw "delivered" and dropped the refund the request made conditional
    # on exactly that ("no refund is needed")
    plan = three_steps()
    model = ScriptedChatModel(['{"needs_replan": false, "can_finish_early": true, '
                               '"reason": "delivered, so no refund is needed", '
                               '"updated_pending_steps": null}'])
    result = run_checkpoint("adaptive", plan, [plan.step("s1")], Engine(registry, model))
    assert result.plan is None
    [warning] = result.warnings
    assert "s2 cannot be dropped: its condition s1.status == 'delivered' holds" in warning


def test_an_approved_side_effect_without_a_condition_cannot_be_dropped(
        registry: ToolRegistry) -> None:
    plan = three_steps()
    plan.step("s2").condition = None  # "refund it if delivered" written in words only
    model = ScriptedChatModel(['{"needs_replan": false, "can_finish_early": true, '
                               '"reason": "delivered, so no refund is needed", '
                               '"updated_pending_steps": null}'])
    result = run_checkpoint("adaptive", plan, [plan.step("s1")], Engine(registry, model))
    assert result.plan is None
    assert "s2 cannot be dropped: it is an approved action" in result.warnings[0]


def test_the_only_step_calling_the_tool_the_request_asks_for_cannot_be_dropped(
        registry: ToolRegistry) -> None:
    # the local model dropped suggest_scale as "the goal is already met" and answered with
    # the current replica count instead of the suggested one
    plan = Plan(goal="How many replicas should order-service run, according to the scaling "
                     "suggestion?", steps=[
        Step(id="s1", description="Check order-service", tool="check_health",
             args={"service": "order-service"}),
        Step(id="s2", description="Ask for a scaling suggestion", tool="suggest_scale",
             args={"service": "order-service"}, depends_on=["s1"]),
        Step(id="s3", description="Answer", depends_on=["s1", "s2"]),
    ])
    run_step(plan, plan.step("s1"), Engine(registry, None))
    result = run_checkpoint("adaptive", plan, [plan.step("s1")],
                            Engine(registry, ScriptedChatModel([FINISH_EARLY])))
    assert result.plan is None
    assert ("s2 cannot be dropped: the request asks for what suggest_scale gives, and no "
            "other step calls it") in result.warnings[0]
    # a question that matches two tools equally names neither
    plan.goal = "Check order 70412 and tell me when it will arrive."
    result = run_checkpoint("adaptive", plan, [plan.step("s1")],
                            Engine(registry, ScriptedChatModel([FINISH_EARLY])))
    assert result.plan is not None and result.plan.ids() == ["s1", "s3"]


def _vacuum_then_order(request: str, *, refund: bool) -> Plan:
    steps = [
        Step(id="s1", description="搜索适合老人的扫地机", tool="search_knowledge",
             args={"query": "扫地机 老人"}, status="completed",
             result={"hits": [{"title": "扫地机选购指南", "content": "S10 Lite"}]}),
        Step(id="s2", description="检查订单 88231 的状态", tool="query_order",
             args={"order_id": "88231"}),
    ]
    if refund:
        steps.append(Step(id="s3", description="如果已到货，退掉坏的扫地机", tool="apply_refund",
                          args={"order_id": "88231"}, depends_on=["s2"],
                          condition="s2.status == 'delivered'"))
    steps.append(Step(id="s9", description="回复用户", depends_on=[s.id for s in steps]))
    return Plan(goal=request, steps=steps)


@pytest.mark.parametrize(("request_text", "refund", "refusals"), [
    # a 1.5B model found the vacuum and dropped the order lookup and the refund reading it
    ("我家老人想要一台扫地机，预算 2000 以内。另外帮我看看订单 88231 到了没，"
     "到了的话帮我把那台坏的退掉。", True,
     ["不能去掉 s3：它的条件 s2.status == 'delivered' 要读的结果还没有出来",
      "不能去掉“帮我看看订单 88231 到了没"]),
    ("Recommend a robot vacuum for my parents. Also tell me whether order 88231 has arrived.",
     False, ['the steps for "tell me whether order 88231 has arrived"',
             "cannot all be dropped: that part of the request is not done yet"]),
])
def test_a_checkpoint_cannot_drop_what_a_part_of_the_request_still_needs(
        registry, request_text, refund, refusals):
    plan = _vacuum_then_order(request_text, refund=refund)
    model = ScriptedChatModel([FINISH_EARLY])
    result = run_checkpoint("adaptive", plan, [plan.step("s1")], Engine(registry, model))
    assert result.plan is None
    [warning] = result.warnings
    assert all(refusal in warning for refusal in refusals), warning


def test_a_side_effect_whose_condition_reads_a_field_of_text_cannot_be_dropped(
        registry: ToolRegistry) -> None:
    # the 1.5B model's code step became reasoning and answered in a sentence; the refund's
    # condition s2.value == 1 read None from it, and the checkpoint dropped the refund
    plan = three_steps()
    plan.steps.insert(1, Step(id="s4", description="Is the left earbud silent?",
                              depends_on=["s1"], status="completed",
                              result="The order does not have a silent left earbud"))
    plan.step("s2").condition = "s4.value == 1"
    result = run_checkpoint("adaptive", plan, [plan.step("s4")],
                            Engine(registry, ScriptedChatModel([FINISH_EARLY])))
    assert result.plan is None
    assert ("s2 cannot be dropped: its condition s4.value == 1 cannot be checked over the "
            "results so far") in result.warnings[0]
