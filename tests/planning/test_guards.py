"""A side effect whose condition is only in its description is sent back (fake server)."""

from __future__ import annotations

import json

from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.planning.checks.guards import condition_in_words
from core.planning.planner import plan_request
from core.runs.session import request_language
from demo.checks import adopt_arrival_conditions
from demo.scenarios import get_scenario
from tests.support.checks import found

SEED = get_scenario("shop-refund")
LOOKUP = {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
          "args": {"order_id": "88231"}, "depends_on": []}
WORDS_ONLY = {"id": "s2", "description": "If the order has arrived, refund the broken one",
              "tool": "apply_refund", "args": {"order_id": "88231", "reason": "broken"},
              "depends_on": ["s1"]}
GUARDED = {**WORDS_ONLY, "condition": "s1.status == 'delivered'"}
ANSWER = {"id": "s3", "description": "Tell the user what was done", "tool": None,
          "depends_on": ["s1", "s2"]}


def _reply(*steps: dict) -> str:
    return json.dumps({"goal": SEED.request_en, "steps": list(steps)})


def test_a_refund_with_if_in_words_only_is_a_problem_naming_its_source(registry):
    plan = Plan.model_validate({"goal": "Refund order 88231 if delivered",
                                "steps": [LOOKUP, WORDS_ONLY, ANSWER]})
    [problem] = found(condition_in_words, plan, registry)
    assert problem.startswith("s2 (apply_refund) states a condition")
    assert "e.g. s1.<field> == '<value>'" in problem  # names the source, no demo status


def test_a_written_condition_a_read_only_step_or_a_plain_refund_pass(registry):
    plain = {**WORDS_ONLY, "description": "Refund order 88231"}
    lookup_if = {**LOOKUP, "description": "If needed, look up order 88231"}
    for steps in ([LOOKUP, GUARDED, ANSWER], [LOOKUP, plain, ANSWER], [lookup_if, ANSWER]):
        plan = Plan.model_validate({"goal": "g", "steps": steps})
        assert found(condition_in_words, plan, registry) == []


def test_chinese_conditions_are_read_too(registry):
    plan = Plan(goal="订单 88231 到了的话就退款", steps=[
        Step(id="s1", description="查询订单 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="如果已签收，就申请退款", tool="apply_refund",
             args={"order_id": "88231"}, depends_on=["s1"]),
    ])
    [problem] = found(condition_in_words, plan, registry)
    assert "没有填写 condition" in problem
    plan.steps[1].description = "为若干订单申请退款"  # 若干: "several", not "if"
    assert found(condition_in_words, plan, registry) == []


# a condition the rules cannot read from words: the model is asked for it
LOST = {**WORDS_ONLY, "description": "If the courier lost the parcel, refund the order"}
LOST_GUARDED = {**LOST, "condition": "s1.status == 'lost'"}


def test_the_retry_writes_the_condition(fake_openai, registry):
    fake_openai.script(_reply(LOOKUP, LOST, ANSWER), _reply(LOOKUP, LOST_GUARDED, ANSWER))
    with OpenAIChatModel(fake_openai.settings(provider="llamacpp")) as model:
        result = plan_request("Check order 88231 and refund it if the courier lost it",
                              Engine(registry=registry, model=model), language="en")
    assert result.attempts == 2
    assert result.plan.step("s2").condition == "s1.status == 'lost'"
    assert not [w for w in result.plan.warnings if "condition" in w]
    assert "states a condition" in fake_openai.chat_bodies[1]["messages"][-1]["content"]


def test_a_condition_still_missing_is_a_warning_the_approver_sees(fake_openai, registry):
    fake_openai.script(_reply(LOOKUP, LOST, ANSWER), _reply(LOOKUP, LOST, ANSWER))
    with OpenAIChatModel(fake_openai.settings(provider="llamacpp")) as model:
        result = plan_request("Check order 88231 and refund it if the courier lost it",
                              Engine(registry=registry, model=model), language="en")
    assert result.plan.step("s2").condition is None  # nothing made up: delivery is not it
    assert any("s2 (apply_refund) states a condition" in w for w in result.plan.warnings)


def test_an_arrival_said_in_words_gets_the_rules_condition_without_a_retry(
        fake_openai, registry):
    recommend = {"id": "s1", "description": "Recommend a robot vacuum",
                 "tool": "search_knowledge", "args": {"query": "robot vacuum elderly"},
                 "depends_on": []}
    lookup = {**LOOKUP, "id": "s2"}
    refund = {**WORDS_ONLY, "id": "s3", "depends_on": []}  # not even wired to the lookup
    answer = {**ANSWER, "id": "s4", "depends_on": ["s1", "s2", "s3"]}
    fake_openai.script(_reply(recommend, lookup, refund, answer))
    with OpenAIChatModel(fake_openai.settings(provider="llamacpp")) as model:
        result = plan_request(SEED.request_en, Engine(registry=registry, model=model),
                              language=request_language(SEED.request_en))
    assert result.attempts == 1
    step = result.plan.step("s3")
    assert (step.condition, step.depends_on) == ("s2.status == 'delivered'", ["s2"])
    assert any("s3 (apply_refund) stated its condition only in words" in w
               for w in result.plan.warnings)
    assert not [w for w in result.plan.warnings if "states a condition" in w]


def test_the_rules_condition_is_adopted_only_for_the_same_call(registry):
    other_order = {**LOOKUP, "args": {"order_id": "70412"}}
    for steps in ([other_order, WORDS_ONLY, ANSWER], [WORDS_ONLY, LOOKUP, ANSWER]):
        plan = Plan.model_validate({"goal": SEED.request_en, "steps": steps})
        assert found(adopt_arrival_conditions, plan, registry, SEED.request_en) == []
        assert plan.step("s2").condition is None and not plan.warnings
    chinese = Plan(goal=SEED.request_zh, steps=[
        Step(id="s1", description="查询订单 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="如果已签收，就为坏掉的那台申请退款", tool="apply_refund",
             args={"order_id": "88231"}, depends_on=["s1"]),
    ])
    [note] = found(adopt_arrival_conditions, chinese, registry, SEED.request_zh)
    assert chinese.step("s2").condition == "s1.status == 'delivered'"
    assert note.startswith("s2（apply_refund）") and "请在批准前核对" in note


def test_the_hint_names_the_lookup_not_a_reasoning_step_between(registry):
    reasoning = {"id": "s2", "description": "Check if the order has been delivered",
                 "tool": None, "depends_on": ["s1"]}
    refund = {**WORDS_ONLY, "id": "s3", "depends_on": ["s2"]}
    plan = Plan.model_validate({"goal": "g", "steps": [LOOKUP, reasoning, refund]})
    [problem] = found(condition_in_words, plan, registry)
    assert "e.g. s1.<field> == '<value>'" in problem
