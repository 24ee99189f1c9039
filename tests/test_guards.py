"""A side effect whose condition is only in its description is sent back (fake server)."""

from __future__ import annotations

import json

import pytest

from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.planning.guards import guard_problems
from core.planning.planner import plan_request
from core.tools.catalog import default_registry
from core.tools.scenarios import get_scenario

SEED = get_scenario("shop-refund")
LOOKUP = {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
          "args": {"order_id": "88231"}, "depends_on": []}
WORDS_ONLY = {"id": "s2", "description": "If the order has arrived, refund the broken one",
              "tool": "apply_refund", "args": {"order_id": "88231", "reason": "broken"},
              "depends_on": ["s1"]}
GUARDED = {**WORDS_ONLY, "condition": "s1.status == 'delivered'"}
ANSWER = {"id": "s3", "description": "Tell the user what was done", "tool": None,
          "depends_on": ["s1", "s2"]}


@pytest.fixture
def registry():
    return default_registry({})


def _reply(*steps: dict) -> str:
    return json.dumps({"goal": SEED.request_en, "steps": list(steps)})


def test_a_refund_with_if_in_words_only_is_a_problem_naming_its_source(registry):
    plan = Plan.model_validate({"goal": "Refund order 88231 if delivered",
                                "steps": [LOOKUP, WORDS_ONLY, ANSWER]})
    [problem] = guard_problems(plan, registry)
    assert problem.startswith("s2 (apply_refund) states a condition")
    assert "s1.status == 'delivered'" in problem


def test_a_written_condition_a_read_only_step_or_a_plain_refund_pass(registry):
    plain = {**WORDS_ONLY, "description": "Refund order 88231"}
    lookup_if = {**LOOKUP, "description": "If needed, look up order 88231"}
    for steps in ([LOOKUP, GUARDED, ANSWER], [LOOKUP, plain, ANSWER], [lookup_if, ANSWER]):
        plan = Plan.model_validate({"goal": "g", "steps": steps})
        assert guard_problems(plan, registry) == []


def test_chinese_conditions_are_read_too(registry):
    plan = Plan(goal="订单 88231 到了的话就退款", steps=[
        Step(id="s1", description="查询订单 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="如果已签收，就申请退款", tool="apply_refund",
             args={"order_id": "88231"}, depends_on=["s1"]),
    ])
    [problem] = guard_problems(plan, registry)
    assert "没有填写 condition" in problem
    plan.steps[1].description = "为若干订单申请退款"  # 若干: "several", not "if"
    assert guard_problems(plan, registry) == []


def test_the_retry_writes_the_condition(fake_openai, registry):
    fake_openai.script(_reply(LOOKUP, WORDS_ONLY, ANSWER), _reply(LOOKUP, GUARDED, ANSWER))
    with OpenAIChatModel(fake_openai.settings(provider="llamacpp")) as model:
        result = plan_request("Check order 88231 and refund it if it was delivered",
                              Engine(registry=registry, model=model))
    assert result.attempts == 2
    assert result.plan.step("s2").condition == "s1.status == 'delivered'"
    assert not [w for w in result.plan.warnings if "condition" in w]
    assert "states a condition" in fake_openai.chat_bodies[1]["messages"][-1]["content"]


def test_a_condition_still_missing_is_a_warning_the_approver_sees(fake_openai, registry):
    fake_openai.script(_reply(LOOKUP, WORDS_ONLY, ANSWER), _reply(LOOKUP, WORDS_ONLY, ANSWER))
    with OpenAIChatModel(fake_openai.settings(provider="llamacpp")) as model:
        result = plan_request("Check order 88231 and refund it if it was delivered",
                              Engine(registry=registry, model=model))
    assert any("s2 (apply_refund) states a condition" in w for w in result.plan.warnings)


def test_the_hint_names_the_lookup_not_a_reasoning_step_between(registry):
    reasoning = {"id": "s2", "description": "Check if the order has been delivered",
                 "tool": None, "depends_on": ["s1"]}
    refund = {**WORDS_ONLY, "id": "s3", "depends_on": ["s2"]}
    plan = Plan.model_validate({"goal": "g", "steps": [LOOKUP, reasoning, refund]})
    [problem] = guard_problems(plan, registry)
    assert "e.g. s1.status == 'delivered'" in problem
