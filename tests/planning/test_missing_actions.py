"""A refund folded into a lookup's description, and a step repeated in a loop.

Both come from a 1.5B model's plan for the seed 000 request: query_order 88231 six times,
each "…and if it has, refund the broken one", and no apply_refund at all.
"""

from __future__ import annotations

import json

from core.plan.model import Plan, Step
from core.planning.checks.missing_actions import missing_actions
from core.planning.checks.repeated_calls import repeated_calls
from core.planning.checks.repeated_reads import fold_repeated_reads
from demo.scenarios import get_scenario
from tests.support.checks import found
from tests.support.planning import planning

SEED = get_scenario("shop-refund")
SEARCH = {"id": "s1", "description": "Search the guides for an easy robot vacuum under 2000",
          "tool": "search_knowledge", "args": {"query": "robot vacuum elderly"},
          "depends_on": []}


def lookup(step_id: str) -> dict:
    return {"id": step_id, "tool": "query_order", "args": {"order_id": "88231"},
            "description": "Check if order 88231 has arrived, and if it has, refund the broken one",
            "depends_on": ["s1"]}


LOOPED = json.dumps({"goal": SEED.request_en, "steps": [
    SEARCH, lookup("s2"), lookup("s3"), lookup("s4"),
    {"id": "s5", "description": "Combine the results", "tool": None,
     "depends_on": ["s1", "s2", "s3", "s4"]},
]})
FIXED = json.dumps({"goal": SEED.request_en, "steps": [
    SEARCH, lookup("s2"),
    {"id": "s3", "description": "If order 88231 was delivered, refund the broken one",
     "tool": "apply_refund", "args": {"order_id": "88231", "reason": "broken"},
     "depends_on": ["s2"], "condition": "s2.status == 'delivered'"},
    {"id": "s4", "description": "Combine the results", "tool": None,
     "depends_on": ["s1", "s2", "s3"]},
]})


def test_a_looped_plan_is_repaired_without_asking_again(fake_openai, registry):
    result = planning(fake_openai, registry, SEED.request_en, LOOPED)
    assert result.attempts == 1 and not result.errors
    assert [(s.id, s.tool) for s in result.plan.steps] == [
        ("s1", "search_knowledge"), ("s2", "query_order"), ("s6", "apply_refund"),
        ("s5", None)]
    refund = result.plan.step("s6")
    assert refund.condition == "s2.status == 'delivered'" and refund.depends_on == ["s2"]
    assert refund.args == {"order_id": "88231", "reason": "item is broken"}
    assert result.plan.step("s5").depends_on == ["s1", "s2", "s6"]
    assert result.plan.warnings == [
        "The reply repeated s2's call 2 more times; the repeats were removed.",
        "The plan lacked the apply_refund the request asks for; s6 (\"If order 88231 was "
        "delivered, request a refund (item is broken)\") was added from the request's "
        "wording: check it before approving."]


def test_a_refund_whose_lookup_is_missing_is_sent_back(fake_openai, registry):
    no_lookup = json.dumps({"goal": SEED.request_en, "steps": [
        SEARCH, {"id": "s2", "description": "Combine the results", "tool": None,
                 "depends_on": ["s1"]}]})
    result = planning(fake_openai, registry, SEED.request_en, no_lookup, FIXED)
    assert result.attempts == 2 and not result.plan.warnings
    assert [s.tool for s in result.plan.steps] == [
        "search_knowledge", "query_order", "apply_refund", None]
    corrective = fake_openai.chat_bodies[1]["messages"][-1]["content"]
    assert 'The request asks for apply_refund ("If order 88231 was delivered' in corrective
    assert '{"tool": "apply_refund", "args": {"order_id": "88231"' in corrective


def test_a_refund_asked_for_in_chinese_is_named_in_chinese(registry):
    plan = Plan(goal=SEED.request_zh, steps=[
        Step(id="s1", description="查询订单 88231，到了的话退掉", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="回复用户", depends_on=["s1"]),
    ])
    [problem] = found(missing_actions, plan, registry, SEED.request_zh)
    assert problem.startswith("请求要求执行 apply_refund（“如果订单 88231 已签收")


def test_a_question_about_the_refund_policy_asks_for_no_refund(registry):
    plan = Plan(goal="x", steps=[
        Step(id="s1", description="Search the refund policy", tool="search_knowledge",
             args={"query": "refund policy broken items"}),
        Step(id="s2", description="Answer", depends_on=["s1"]),
    ])
    request = "What is your refund policy for broken items?"
    assert found(missing_actions, plan, registry, request) == []
    assert found(missing_actions, Plan.model_validate_json(FIXED), registry,
                 SEED.request_en) == []


def test_only_the_same_call_is_a_repeated_read(registry):
    plan = Plan(goal="看看订单", steps=[
        Step(id="s1", description="查订单 88231", tool="query_order", args={"order_id": "88231"}),
        Step(id="s2", description="查订单 70412", tool="query_order", args={"order_id": "70412"}),
        Step(id="s3", description="再查一次 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s4", description="总结", depends_on=["s1"]),
        Step(id="s5", description="回复", depends_on=["s4"]),
    ])
    assert found(repeated_calls, plan, registry) == []  # a read is folded, not sent back
    assert found(fold_repeated_reads, plan, registry) == [
        "回复把 s1 的调用又重复了 1 次，重复的已去掉。"]
    assert plan.ids() == ["s1", "s2", "s4", "s5"]


def test_a_repeated_side_effect_is_named_not_folded(registry):
    lookup = {"tool": "query_order", "args": {"order_id": "88231"}}
    refund = {"tool": "apply_refund", "args": {"order_id": "88231", "reason": "broken"},
              "depends_on": ["s1"], "condition": "s1.status == 'delivered'"}
    plan = Plan.model_validate({"goal": "Refund order 88231", "steps": [
        {"id": "s1", "description": "Look up 88231", **lookup},
        {"id": "s2", "description": "Refund it", **refund},
        {"id": "s3", "description": "Refund it again", **refund},
        {"id": "s4", "description": "Look it up once more after the refund", **lookup,
         "depends_on": ["s2"]},
        {"id": "s5", "description": "Answer", "depends_on": ["s3", "s4"]},
    ]})
    assert found(fold_repeated_reads, plan, registry) == []
    assert found(repeated_calls, plan, registry) == [
        "s3 repeat s2 (the same tool and arguments): remove them, or make them do a part "
        "of the request no step does yet."]
