"""A step's arguments as its tool will get them (core.execution.context.arguments_sent): what
a person confirms, on the dashboard's card and at the command line's prompt."""

from __future__ import annotations

from core.base.messages import render
from core.execution.context import arguments_sent, resolve_args
from core.plan.model import Plan, Step


def _refund_plan(args: dict, *, looked_up: bool = True) -> Plan:
    plan = Plan(goal="refund order 88231 if it arrived", steps=[
        Step(id="s1", description="look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="refund it", tool="apply_refund", args=args,
             depends_on=["s1"]),
    ])
    if looked_up:
        plan.steps[0].advance("running")
        plan.steps[0].advance("completed")
        plan.steps[0].result = {"order_id": "88231", "status": "delivered",
                                "items": [{"sku": "V-2", "qty": 1}]}
    return plan


def test_a_reference_is_sent_as_its_value_and_marked_with_the_result_it_reads(registry):
    plan = _refund_plan({"order_id": "{{s1.order_id}}", "reason": "broken"})
    sent = arguments_sent(plan, plan.step("s2"), registry)
    assert [(a.name, a.value, a.sources, a.problem, a.by_model) for a in sent] == [
        ("order_id", "88231", ["s1.order_id"], None, False),
        ("reason", "broken", [], None, False),
    ]
    # exactly what the executor will pass to the tool
    assert {a.name: a.value for a in sent} == resolve_args(plan.step("s2").args, plan.results())


def test_references_inside_text_and_structures_keep_the_types_the_tool_gets(registry):
    plan = _refund_plan({"order_id": "{{s1.order_id}}",
                         "reason": "order {{s1.order_id}} is {{s1.status}}",
                         "items": ["{{s1.items[0]}}"]})
    sent = {a.name: a for a in arguments_sent(plan, plan.step("s2"))}
    assert sent["reason"].value == "order 88231 is delivered"
    assert sent["reason"].sources == ["s1.order_id", "s1.status"]
    assert sent["items"].value == [{"sku": "V-2", "qty": 1}]  # a whole reference keeps its type
    assert sent["items"].sources == ["s1.items[0]"]


def test_a_value_that_cannot_be_resolved_yet_says_why(registry):
    waiting = _refund_plan({"order_id": "{{s1.order_id}}", "reason": "broken"},
                           looked_up=False)
    [order, reason] = arguments_sent(waiting, waiting.step("s2"), registry)
    assert order.value == "{{s1.order_id}}" and order.sources == ["s1.order_id"]
    assert order.problem is not None and "s1 has no result" in render(order.problem, "en")
    assert reason.problem is None

    wrong = _refund_plan({"order_id": "{{s1.order_number}}", "reason": "broken"})
    [order, _reason] = arguments_sent(wrong, wrong.step("s2"), registry)
    assert "has no field 'order_number'" in render(order.problem, "en")


def test_a_required_argument_the_plan_leaves_out_is_the_models_to_write(registry):
    plan = _refund_plan({"reason": "broken"})
    sent = arguments_sent(plan, plan.step("s2"), registry)
    assert [(a.name, a.by_model) for a in sent] == [("reason", False), ("order_id", True)]
    assert [a.name for a in arguments_sent(plan, plan.step("s2"))] == ["reason"]  # no registry
