"""Tests of the router: rule and LLM routing, the knowledge workflow and direct answers."""

from __future__ import annotations

import json
import re

import pytest

from core.errors import PlanParseError
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.planning.router import (
    Route,
    decide_route,
    person_route,
    route,
    route_offline,
    route_with_llm,
)
from core.runs.answers import answer_direct, answer_knowledge
from core.runs.session import request_language
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry
from core.tools.toolsets import default_registry
from demo.offline import offline_plan
from tests.support.fake_openai import text
from tests.support.fakes import ScriptedChatModel
from tests.support.waiting import DEFAULT_TIMEOUT_S

REGISTRY = default_registry({})
SEED_REQUEST = (
    "我家老人想要一台扫地机，预算 2000 以内，要好操作的。另外帮我看看订单 88231 到了没，"
    "到了的话帮我把那台坏的退掉。"
)
REQUIRED = [
    ("退货政策是什么？", "knowledge"),
    ("查一下订单 88231", "direct"),
    (SEED_REQUEST, "plan"),
]


@pytest.mark.parametrize(("request_text", "mode"), [
    *REQUIRED,
    ("What is the return policy?", "knowledge"),
    ("check order 88231", "direct"),
    ("比特 S10 Lite 适合老人用吗", "knowledge"),
    ("Is order 70412 delivered yet?", "direct"),
    ("帮我查一下物流 SF1234567890", "direct"),
    ("order 66001 arrived broken, refund it", "plan"),
    ("检查所有服务的健康状态并给出扩容建议", "plan"),
    ("Check order 88231, and if it was delivered refund it", "plan"),
    ("", "plan"),
])
def test_route_offline(request_text: str, mode: str) -> None:
    decided = route_offline(request_text, REGISTRY)
    assert decided.mode == mode
    assert decided.reason
    assert decided.source == "rules"


def test_offline_reasons_are_codes_worded_in_the_ui_language() -> None:
    policy = route_offline("退货政策是什么？", REGISTRY)
    assert policy.code == "knowledge" and "knowledge question" in policy.reason  # CLI JSON
    assert "知识" in policy.reason_in("zh") and policy.reason_in("en") == policy.reason
    conditional = route_offline("Check order 88231 and if delivered refund it", REGISTRY)
    assert "condition" in conditional.reason
    parts = route_offline("查一下订单 88231。另外查一下订单 70412", REGISTRY)
    assert "子任务" in parts.reason_in("zh") and "2 separate parts" in parts.reason_in("en")
    assert not re.search(r"[\u4e00-\u9fff]", parts.reason_in("en"))
    model_said = Route(mode="plan", reason="因为如此", source="llm")
    assert model_said.reason_in("en") == "因为如此"  # a model's reason is shown as written


@pytest.mark.parametrize("request_text", [
    "Check order 70412 and tell me when it arrives", "When will order 88231 arrive?",
    "订单 88231 什么时候到"])
def test_when_will_an_order_arrive_is_an_order_then_its_tracking(request_text: str) -> None:
    decided = route_offline(request_text, REGISTRY)
    assert decided.mode == "plan" and decided.code == "chained"
    assert "condition" not in decided.reason
    plan = offline_plan(request_text, default_registry({}))
    order, tracking = plan.steps[0], plan.steps[1]
    assert (order.tool, tracking.tool) == ("query_order", "query_logistics")
    assert tracking.args == {"tracking_no": f"{{{{{order.id}.tracking_no}}}}"}
    assert tracking.depends_on == [order.id]


@pytest.mark.parametrize(("request_text", "mode"), REQUIRED)
def test_route_with_scripted_llm(registry: ToolRegistry, request_text: str, mode: str) -> None:
    model = ScriptedChatModel([json.dumps({"mode": mode, "reason": "因为如此"})])
    decided = route(request_text, Engine(registry, model), language=request_language(request_text))
    assert decided == Route(mode=mode, reason="因为如此", source="llm")
    sent = model.requests[0]
    assert sent["role"] == "planner"
    assert sent["tools"] is None
    assert sent["json_mode"] is True
    assert sent["messages"][-1]["content"] == request_text
    assert "knowledge" in sent["messages"][0]["content"]
    assert "Chinese" in sent["messages"][0]["content"]


def test_route_reply_wrapped_in_think_fences_and_prose() -> None:
    reply = (
        "<think>two sub-tasks and a condition</think>Sure, here it is:\n```json\n"
        '{"mode": "plan", "reason": "two parts",}\n```\nHope this helps.'
    )
    decided, usage = route_with_llm(SEED_REQUEST, ScriptedChatModel([reply]),
                                    language=request_language(SEED_REQUEST))
    assert (decided.mode, decided.reason) == ("plan", "two parts")
    assert usage.llm_calls == 1


@pytest.mark.parametrize(("word", "mode"), [("react", "direct"), ("plan", "plan"),
                                            ("workflow", "knowledge")])
def test_route_accepts_a_one_word_answer_and_aliases(word: str, mode: str) -> None:
    decided, _ = route_with_llm("anything", ScriptedChatModel([word]), language="en")
    assert decided.mode == mode


def test_unusable_router_reply_raises_with_raw_text_and_route_falls_back() -> None:
    with pytest.raises(PlanParseError) as caught:
        route_with_llm("x", ScriptedChatModel(['{"mode": "sometimes"}']), language="en")
    assert caught.value.raw == '{"mode": "sometimes"}'
    registry = default_registry({})
    decided, usage = decide_route("退货政策是什么？", Engine(registry, ScriptedChatModel(["??"])),
                                  language="zh")
    assert decided.mode == "knowledge"
    assert decided.source == "rules"
    assert usage.llm_calls == 0


def test_knowledge_route_needs_a_tool_that_answers_questions() -> None:
    registry = ToolRegistry()
    register_builtin_tools(registry)
    model = ScriptedChatModel(['{"mode": "knowledge", "reason": "a policy question"}'])
    decided = route("退货政策是什么？", Engine(registry, model), language="zh")
    assert decided.mode == "plan" and decided.code == "no_knowledge_tool"
    # the generic rules never send a question to a knowledge tool that does not exist
    assert route("退货政策是什么？", Engine(registry), language="zh").mode != "knowledge"


def test_answer_knowledge_offline_answers_from_the_policy_document(
    registry: ToolRegistry,
) -> None:
    answer, usage, hits = answer_knowledge("退货政策是什么？", Engine(registry), language="zh")
    assert hits[0].source == "local:return-refund-policy.md"
    assert "7 天" in answer
    assert "return-refund-policy.md" in answer
    assert usage.llm_calls == 0
    english, _, _ = answer_knowledge("What is the return policy?", Engine(registry), language="en")
    assert "Within 7 days" in english
    assert "七天" not in english


def test_answer_knowledge_offline_answers_from_a_document_in_the_requests_language(
    registry: ToolRegistry,
) -> None:
    """The Chinese overview ranks first for this question; an English answer quotes the
    English comparison (issue 44: no other-language lines but as quotes)."""
    question = "AI 编程工具 Copilot 补全 对话助手"
    english, _, hits = answer_knowledge(question, Engine(registry), language="en")
    assert hits[0].source == "local:ai-coding-tools-overview-zh.md"
    assert english.startswith('From "AI coding tools comparison (local source)":')
    assert not re.search(r"[\u4e00-\u9fff]", english)
    chinese, _, _ = answer_knowledge(question, Engine(registry), language="zh")
    assert chinese.startswith("根据《AI 编程工具概览（本地资料）》：")


def test_answer_knowledge_with_llm_gets_the_documents_and_no_tools(
    registry: ToolRegistry,
) -> None:
    model = ScriptedChatModel(["签收后 7 天内可以无理由退货。"])
    answer, usage, hits = answer_knowledge("退货政策是什么？", Engine(registry, model),
                                           language="zh")
    assert answer == "签收后 7 天内可以无理由退货。"
    assert usage.llm_calls == 1
    assert hits
    sent = model.requests[0]
    assert sent["tools"] is None
    assert "七天无理由退货" in sent["messages"][0]["content"]
    assert sent["messages"][1]["content"] == "退货政策是什么？"


def test_answer_direct_offline_runs_the_lookup(registry: ToolRegistry) -> None:
    answer, usage, calls = answer_direct("查一下订单 88231", Engine(registry), language="zh")
    assert [c.name for c in calls] == ["query_order"]
    assert calls[0].args == {"order_id": "88231"}
    assert calls[0].result["status"] == "delivered"
    assert "88231" in answer and "已签收" in answer
    assert usage.llm_calls == 0


def test_answer_direct_offline_never_runs_a_side_effect(registry: ToolRegistry) -> None:
    _, _, calls = answer_direct("order 88231 arrived broken, refund it", Engine(registry),
                                language="en")
    assert "apply_refund" not in [c.name for c in calls]
    assert registry.call("query_order", {"order_id": "88231"})["refund"] is None


def test_answer_direct_with_llm_answers_from_the_lookup_the_rules_made(
        registry: ToolRegistry) -> None:
    model = ScriptedChatModel(["Order 88231 was delivered on 2026-06-22."])
    answer, usage, calls = answer_direct("check order 88231", Engine(registry, model),
                                         language="en")
    assert answer == "Order 88231 was delivered on 2026-06-22."
    assert usage.llm_calls == 1  # the order's lookup was the rules' own: no call for it
    assert [(c.name, c.args) for c in calls] == [("query_order", {"order_id": "88231"})]
    [request] = model.requests
    assert request["tools"] is None  # found: the one call answers from it
    observation = request["messages"][-1]
    assert observation["role"] == "tool" and "delivered" in observation["content"]



def test_route_against_the_fake_endpoint(fake_openai, registry: ToolRegistry) -> None:
    fake_openai.script(text('{"mode": "direct", "reason": "one lookup"}'))
    with OpenAIChatModel(fake_openai.settings()) as model:
        decided, usage = decide_route("查一下订单 88231", Engine(registry, model), language="zh")
    assert decided == Route(mode="direct", reason="one lookup", source="llm")
    assert usage.llm_calls == 1
    body = fake_openai.chat_bodies[0]
    assert "tools" not in body
    assert body["messages"][-1]["content"] == "查一下订单 88231"


def test_person_route() -> None:
    chosen = person_route("direct", "退货政策是什么？")
    assert (chosen.mode, chosen.source) == ("direct", "person")
    assert "用户" in chosen.reason_in("zh") and chosen.reason == "chosen by a person: direct"
    with pytest.raises(ValueError):
        person_route("auto")


# ---- a knowledge answer needs a relevant source -----------------------------------------


def test_a_knowledge_route_with_no_source_goes_to_a_plan_when_tools_can_answer(
    registry: ToolRegistry,
) -> None:
    model = ScriptedChatModel(['{"mode": "knowledge", "reason": "a question"}'])
    decided, _ = decide_route("what's the revenue by month?", Engine(registry, model),
                              language="en")
    assert decided.mode == "plan" and "analytics" in decided.reason
    assert "no knowledge-base source" in decided.reason


def test_a_knowledge_route_with_no_source_and_no_tool_stays_knowledge(
    registry: ToolRegistry,
) -> None:
    model = ScriptedChatModel(['{"mode": "knowledge", "reason": "a question"}'])
    decided, _ = decide_route("weather in Beijing tomorrow", Engine(registry, model), language="en")
    assert decided.mode == "knowledge"
    model = ScriptedChatModel(['{"mode": "knowledge", "reason": "policy"}'])
    decided, _ = decide_route("What is the return policy?", Engine(registry, model), language="en")
    assert decided.mode == "knowledge"


@pytest.mark.parametrize("question", ["weather in Beijing tomorrow", "北京明天天气怎么样？",
                                      "what's the revenue by month?"])
def test_no_source_means_no_article_and_no_model_call(registry: ToolRegistry,
                                                      question: str) -> None:
    model = ScriptedChatModel([])
    answer, usage, hits = answer_knowledge(question, Engine(registry, model),
                                           language=request_language(question))
    assert hits == [] and usage.llm_calls == 0 and not model.requests
    assert "No source in the knowledge base" in answer or "知识库里没有资料" in answer
    offline, _, _ = answer_knowledge(question, Engine(registry),
                                     language=request_language(question))
    assert offline == answer


@pytest.mark.usefixtures("dbos_of_the_module")
def test_an_unanswered_knowledge_question_is_recorded_failed(registry: ToolRegistry,
                                                              runner) -> None:
    engine = Engine(registry)
    route_taken = person_route("knowledge", "weather in Beijing tomorrow")
    run_id = runner.answer("weather in Beijing tomorrow", route_taken, engine=engine,
                           settings_public={"offline": True})
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "failed"
    assert "No source in the knowledge base" in record.answer
    assert record.plan.steps[-1].status == "failed"
    answered = runner.answer("What is the return policy?", person_route("knowledge"),
                             engine=engine, settings_public={"offline": True})
    assert runner.wait(answered, timeout=DEFAULT_TIMEOUT_S).status == "completed"


@pytest.mark.usefixtures("dbos_of_the_module")
def test_a_direct_non_answer_is_recorded_failed(registry: ToolRegistry, runner) -> None:
    model = ScriptedChatModel(["I'm sorry, I cannot access real-time weather data."] * 4)
    run_id = runner.answer("weather in Beijing tomorrow", person_route("direct"),
                           engine=Engine(registry, model), settings_public={"offline": False})
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "failed" and "apologises" in record.plan.steps[-1].error


@pytest.mark.parametrize("question", [
    "Which of our services are degraded or down right now, and what is the likely cause of each?",
    "哪些服务降级了，原因是什么？",
])
def test_a_question_about_degraded_services_is_planned_with_the_ops_tools(question):
    assert route_offline(question, REGISTRY).mode == "plan"
    tools = {step.tool for step in offline_plan(question, default_registry({})).steps}
    assert {"check_health", "diagnose"} <= tools
