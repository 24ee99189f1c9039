"""Tests of success checks (structural, LLM, skipped) and of failure classification."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import PlanParseError
from core.execution.success_check import check_structurally, check_success, classify_failure
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.catalog import default_registry
from core.tools.registry import ToolRegistry
from tests.fakes import ScriptedChatModel

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
    ("拿到退款单号", {"refund_id": None}, False),
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


def test_check_success_structural_needs_no_model() -> None:
    verdict, usage = check_success(done("order status is known", {"status": "delivered"}),
                                   Engine(ToolRegistry(), ScriptedChatModel([])))
    assert verdict.met and verdict.how == "structural" and usage.llm_calls == 0


def test_check_success_without_criteria_or_unfinished() -> None:
    verdict, _ = check_success(done(None, {"status": "x"}), OFFLINE)
    assert verdict.met and verdict.how == "skipped"
    failed = Step(id="s1", description="x", success_criteria="status is known", status="failed")
    verdict, _ = check_success(failed, OFFLINE)
    assert not verdict.met


def test_check_success_by_llm() -> None:
    model = ScriptedChatModel(['<think>no price</think>{"met": false, "reason": "没有价格"}'])
    step = done("推荐里写明了价格", {"hits": [{"title": "guide"}]}, tool="search_knowledge")
    verdict, usage = check_success(step, Engine(ToolRegistry(), model))
    assert (verdict.met, verdict.reason, verdict.how) == (False, "没有价格", "llm")
    assert usage.llm_calls == 1
    sent = model.requests[0]
    assert sent["tools"] is None and sent["json_mode"]
    assert "推荐里写明了价格" in sent["messages"][0]["content"]
    assert "Chinese" in sent["messages"][0]["content"]


def test_check_success_by_llm_unusable_reply() -> None:
    model = ScriptedChatModel(["looks good to me"])
    with pytest.raises(PlanParseError) as caught:
        check_success(done("the user will be happy", {}), Engine(ToolRegistry(), model))
    assert caught.value.raw == "looks good to me"


def test_offline_non_structural_check_is_skipped() -> None:
    verdict, usage = check_success(done("the user will be happy", {"x": 1}), OFFLINE)
    assert verdict.met and verdict.how == "skipped"
    assert "not checked" in verdict.reason and usage.llm_calls == 0
    verdict, _ = check_success(done("用户会满意", {"x": 1}), OFFLINE)
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
    assert classify_failure(leaf, "search_knowledge timed out after 10 s", plan=plan,
                            registry=registry) == "ignorable"
    assert classify_failure(leaf, "the result holds 0 item(s)", plan=plan) == "ignorable"
    # a leaf whose failure says the plan itself is wrong
    assert classify_failure(leaf, "unknown tool 'search'", plan=plan) == "fatal"
    # a step others depend on, even for a timeout
    assert classify_failure(plan.step("s1"), "timed out", plan=plan,
                            registry=registry) == "fatal"
    # a failed side effect
    assert classify_failure(plan.step("s3"), "timed out", plan=plan,
                            registry=registry) == "fatal"
    assert classify_failure(plan.step("s3"), "timed out") == "fatal"
    # the synthesis
    assert classify_failure(plan.step("s4"), "timed out", plan=plan) == "fatal"
