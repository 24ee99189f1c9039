"""Tests of success checks (structural, LLM, skipped) and of failure classification."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import LLM_FAILURE, PlanParseError
from core.execution.success_check import (
    check_structurally,
    check_success,
    classify_failure,
    non_answer,
)
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry, tool
from core.tools.toolsets import default_registry
from tests.support.fakes import ScriptedChatModel

OFFLINE = Engine(ToolRegistry())


def done(criteria: str | None, result: Any, tool: str | None = "query_order") -> Step:
    return Step(id="s1", description="Look up order 88231", tool=tool, success_criteria=criteria,
                status="completed", result=result)


@pytest.mark.parametrize(("criteria", "result", "met"), [
    ("the order status is known", {"status": "delivered"}, True),
    ("the order status is known", {"status": ""}, False),
    ("订单状态已知", {"status": "refunding"}, True),
    ("订单状态已知", {"order_id": "1"}, False),
    ("the order status is known", {"order_id": "1"}, False),
    ("returns at least one hit", {"hits": [{"title": "x"}]}, True),
    ("returns at least one hit", {"hits": []}, False),
    ("relevant documents are found", {"hits": []}, False),
    ("找到相关文档", {"hits": [{"title": "x"}]}, True),
    ("result.count > 2", {"count": 3}, True),
    ("result.status == 'delivered'", {"status": "in_transit"}, False),
    ("a refund id is returned", {"refund_id": "RF1", "created": True}, True),
    ("the unhealthy services are known", {"unhealthy": [], "checked": 3}, True),
    ("the user will be happy", {"status": "delivered"}, None),
])
def test_structural_checks(criteria: str, result: Any, met: bool | None) -> None:
    verdict = check_structurally(criteria, result)
    if met is None:
        assert verdict is None
    else:
        assert verdict is not None and verdict.met is met and verdict.how == "structural"
        assert verdict.reason


def test_a_field_named_in_chinese_is_read_through_the_tools_labels() -> None:
    labels = {"退款单号": "refund_id", "单号": "ticket_id"}
    verdict = check_structurally("拿到退款单号", {"refund_id": None}, "zh", labels=labels)
    assert verdict is not None and not verdict.met and "refund_id" in verdict.reason
    # no labels: the Chinese nouns of records read as the words of a field name
    assert check_structurally("拿到退款单号", {"refund_id": None}, "zh").reason == (
        "结果字段 refund_id 为空")
    assert check_structurally("拿到工单的处理人", {"assignee": None}, "zh") is None
    listed = check_structurally("服务列表已知", {"services": [{"name": "a"}], "count": 1}, "zh")
    assert listed is not None and listed.met and "services" in listed.reason
    # the engine learns a demo field's Chinese name from the demo tool that declares it
    step = done("拿到退款单号", {"refund_id": "RF1"}, tool="apply_refund")
    verdict, _ = check_success(step, Engine(default_registry({}), ScriptedChatModel([])),
                               language="zh")
    assert verdict.met and verdict.how == "structural"


def test_check_success_structural_needs_no_model() -> None:
    verdict, usage = check_success(done("order status is known", {"status": "delivered"}),
                                   Engine(ToolRegistry(), ScriptedChatModel([])), language="en")
    assert verdict.met and verdict.how == "structural" and usage.llm_calls == 0


def test_check_success_without_criteria_or_unfinished() -> None:
    verdict, _ = check_success(done(None, {"status": "x"}), OFFLINE, language="en")
    assert verdict.met and verdict.how == "skipped"
    failed = Step(id="s1", description="x", success_criteria="status is known", status="failed")
    verdict, _ = check_success(failed, OFFLINE, language="en")
    assert not verdict.met


def test_check_success_by_llm() -> None:
    model = ScriptedChatModel(['<think>no price</think>{"met": false, "reason": "没有价格"}'])
    step = done("推荐里写明了价格", {"hits": [{"title": "guide"}]}, tool="search_knowledge")
    verdict, usage = check_success(step, Engine(ToolRegistry(), model), language="zh")
    assert (verdict.met, verdict.reason, verdict.how) == (False, "没有价格", "llm")
    assert usage.llm_calls == 1
    sent = model.requests[0]
    assert sent["tools"] is None and sent["json_mode"]
    assert "推荐里写明了价格" in sent["messages"][0]["content"]
    assert "Chinese" in sent["messages"][0]["content"]


def test_check_success_by_llm_unusable_reply() -> None:
    model = ScriptedChatModel(["looks good to me"])
    with pytest.raises(PlanParseError) as caught:
        check_success(done("the user will be happy", {}), Engine(ToolRegistry(), model),
                      language="en")
    assert caught.value.raw == "looks good to me"


def test_offline_non_structural_check_is_skipped() -> None:
    verdict, usage = check_success(done("the user will be happy", {"x": 1}), OFFLINE,
                                   language="en")
    assert verdict.met and verdict.how == "skipped"
    assert "not checked" in verdict.reason and usage.llm_calls == 0
    verdict, _ = check_success(done("用户会满意", {"x": 1}), OFFLINE, language="zh")
    assert "未检查" in verdict.reason


def plan_with_leaf() -> Plan:
    return Plan(goal="g", steps=[
        Step(id="s1", description="Look up order", tool="query_order",
             args={"order_id": "1"}),
        Step(id="s2", description="Search the guide", tool="search_knowledge",
             args={"query": "x"}),
        Step(id="s3", description="Refund", tool="apply_refund", args={"order_id": "1"},
             depends_on=["s1"]),
        Step(id="s4", description="Summarise", depends_on=["s1", "s2", "s3"]),
    ])


def test_classify_failure() -> None:
    plan = plan_with_leaf()
    registry = default_registry({})
    leaf = plan.step("s2")
    assert classify_failure(leaf, "no results for 'x'", plan=plan, registry=registry) == (
        "ignorable")
    assert classify_failure(leaf, "the result holds 0 item(s)", plan=plan,
                            registry=registry) == "ignorable"
    # a leaf whose failure says the plan itself is wrong
    assert classify_failure(leaf, "unknown tool 'search'", plan=plan,
                            registry=registry) == "fatal"
    # a step others depend on, even for a timeout
    assert classify_failure(plan.step("s1"), "timed out", plan=plan,
                            registry=registry) == "fatal"
    # a failed side effect
    assert classify_failure(plan.step("s3"), "timed out", plan=plan,
                            registry=registry) == "fatal"
    # the synthesis
    assert classify_failure(plan.step("s4"), "timed out", plan=plan,
                            registry=registry) == "fatal"


def test_a_side_effect_is_known_from_the_tools_flag_never_from_its_name() -> None:
    """A read-only tool named like an action ("refund_status") that found nothing is
    ignorable; an unknown tool may have a side effect, so its failure is fatal."""
    registry = ToolRegistry()

    @tool(read_only=True)
    def refund_status(order_id: str) -> dict:
        """Read a refund's status.

        Args:
            order_id: the order.
        """
        return {}

    registry.add(refund_status)
    leaf = Step(id="s1", description="Read the refund status", tool="refund_status",
                args={"order_id": "1"})
    plan = Plan(goal="g", steps=[leaf, Step(id="s2", description="answer", depends_on=["s1"])])
    assert classify_failure(leaf, "no results found", plan=plan, registry=registry) == (
        "ignorable")
    unknown = leaf.model_copy(update={"tool": "lookup_elsewhere"})
    assert classify_failure(unknown, "no results found", plan=plan, registry=registry) == (
        "fatal")


@pytest.mark.parametrize("error", [
    "search_knowledge timed out after 10 s", "检索超时",
    f"{LLM_FAILURE}: The endpoint is rate limiting requests (429): slow down",
    "The endpoint answered 503: Service Unavailable. Try again later",
    "http://127.0.0.1:9/v1 did not answer within 1s. Check that the server is running",
    "Cannot reach http://127.0.0.1:9/v1.", "connection reset; no results for 'x'",
])
def test_a_transport_error_is_never_ignorable(error: str) -> None:
    plan = plan_with_leaf()
    assert classify_failure(plan.step("s2"), error, plan=plan,
                            registry=default_registry({})) == "fatal"


def test_a_failed_reasoning_step_is_fatal_even_when_nothing_depends_on_it() -> None:
    plan = Plan(goal="g", steps=[Step(id="s1", description="think"),
                                 Step(id="s2", description="answer", depends_on=["s1"])])
    assert classify_failure(plan.step("s1"), "no results found", plan=plan,
                            registry=ToolRegistry()) == "fatal"


QUESTION = "Which of our services are degraded or down right now, and what is the cause?"


@pytest.mark.parametrize("text", [
    "I need more information… can you provide the results from the previous steps?",
    "Could you please share the list of services?",
    "I'm sorry, I cannot access real-time service data.",
    "I’m sorry, but I can’t help with that.",
    "As an AI language model, I do not have access to your systems.",
    "I don't have the results of the earlier steps.",
    "抱歉，我无法查询服务的实时状态。",
    "请提供之前步骤的结果，我才能回答。",
    "我需要更多的信息才能判断。",
    "Which of our services are degraded or down right now?",
    QUESTION,
])
def test_non_answers_are_recognised(text: str) -> None:
    assert non_answer(text, question=QUESTION, language="en") is not None


@pytest.mark.parametrize("text", [
    "payment-service is down (OOM kills); search-service is degraded (slow index).",
    "Order 88231 was delivered on 2026-06-22.",
    "I'm sorry to report that order 99999 does not exist.",
    "Unfortunately we cannot refund order 88231: it has not been delivered yet.",
    "Please provide photos of the damage when you return the item.",
    "退货时需要提供订单号和商品照片。",
    "Is the order delivered? Yes: it was delivered on 2026-06-22.",
])
def test_answers_are_not_mistaken_for_non_answers(text: str) -> None:
    assert non_answer(text, question=QUESTION, language="en") is None


SEED = ("Recommend a robot vacuum under ¥2000 for my elderly parent, check order 88231 and "
        "refund it if it has been delivered.")


@pytest.mark.parametrize("text", [
    "To meet the goal of recommending a robot vacuum and handling order 88231, I will follow "
    "these steps:\n1. Search the buying guide.\n2. Check order 88231.\n3. Refund it.",
    "Here are the steps I would take:\n1. Check the order status\n2. Apply the refund",
    "First, I will check the status of order 88231 with query_order.",
    "Sure! First I'll look up the order.",
    "Let me check the order status first.",
    "Let's start by looking up order 88231.",
    "I will first query the order, then decide on the refund.",
    "Here's my plan: 1. look up the order 2. refund it",
    "我将按照以下步骤完成：1. 查询订单 2. 申请退款",
    "我会先查询订单 88231 的状态，然后再决定是否退款。",
    "接下来我将查询订单状态。",
    "好的，首先我会查询订单。",
    "以下是我将采取的步骤：1. 查询订单",
    "让我先查一下订单。",
    "好的，我会检查老人想要的扫地机是否在价格范围内，并查询订单 88231 是否已经到达。如果订单已经"
    "到达，我会帮助退掉那台坏的扫地机。",
    "我将帮您查询订单 88231 的状态。",
    "好的，我来帮助你检查老人的扫地机需求。",
    "好的，我明白了。首先，我会查询老人的扫地机需求，然后检查订单 88231 是否已经到达。",
    "好的，我明白了。订单 88231 已经到货。为了完成这个任务，我们需要按照以下步骤进行：1. 查询",
    "好的，我将根据 s2 的结果生成诊断报告并给出扩容建议。",
])
def test_a_plan_announced_instead_of_done_is_not_an_answer(text: str) -> None:
    why = non_answer(text, question=SEED, language="en")
    assert why is not None and "announces what it will do" in why
    assert "打算怎么做" in non_answer(text, question=SEED, language="zh")


@pytest.mark.parametrize("text", [
    "I checked order 88231: it was delivered, and I refunded it (refund RF123).",
    "1. Order 88231 was delivered on 2026-06-22.\n2. Refund RF123 was created.\n"
    "3. Recommended: S10 Lite (¥1,899).",
    "Order 88231 was delivered. I refunded it; I will send the refund id once the bank "
    "confirms.",
    "I would recommend the S10 Lite (¥1,899): it is light and quiet.",
    "To meet your budget, I'd suggest the S10 Lite at ¥1,899.",
    "Order 88231 was delivered on 2026-06-22. Let me know if you need anything else.",
    "Let me summarise: order 88231 was delivered and refunded.",
    "First, order 88231 was delivered on 2026-06-22; second, refund RF1 was created.",
    "Steps taken: 1. looked up order 88231 (delivered) 2. refunded it (RF1).",
    "订单 88231 已签收，我已为您申请退款（RF123）。推荐 S10 Lite，售价 1899 元。",
    "我会推荐 S10 Lite，售价 1899 元；订单 88231 已签收并已退款。",
    "订单已签收。退款完成后我会通知您。",
    "首先，订单 88231 已签收；其次，退款 RF1 已创建。",
    "我已检查订单 88231：已签收，退款 RF1 已创建。",
    "推荐 S10 Lite。订单 88231 已签收，退款 RF1 已创建，我会在到账后通知您。",
])
def test_reports_of_work_done_are_answers(text: str) -> None:
    assert non_answer(text, question=SEED, language="en") is None


def test_a_non_answer_fails_its_success_check_even_without_criteria() -> None:
    step = done(None, "I need more information. Can you provide the results?", tool=None)
    verdict, usage = check_success(step, Engine(ToolRegistry(), ScriptedChatModel([])),
                                   language="en")
    assert not verdict.met and "asks for information" in verdict.reason
    assert usage.llm_calls == 0
    zh = done("服务状态已知", "抱歉，我无法访问服务。", tool=None)
    verdict, _ = check_success(zh, OFFLINE, language="zh")
    assert not verdict.met and "不是答案" in verdict.reason
    plan_like = done("订单状态已知", "我会先查询订单 88231，然后再申请退款。", tool=None)
    verdict, _ = check_success(plan_like, OFFLINE, language="zh")
    assert not verdict.met and "打算怎么做" in verdict.reason
