"""Every clause covered, and reasoning steps that plainly need a tool (against the fake server)."""

from __future__ import annotations

import json

from core.plan.model import Plan, Step
from core.planning.checks.coverage import uncovered_clauses
from core.planning.checks.tool_hints import reasoning_needs_tool
from core.planning.checks.tool_misfit import tool_misfit
from demo.scenarios import get_scenario
from tests.support.checks import context, found
from tests.support.planning import planning

SEED = get_scenario("shop-refund")
LOOKUP = {"id": "s1", "description": "Look up order 88231 and whether it has arrived",
          "tool": "query_order", "args": {"order_id": "88231"}, "depends_on": []}
REFUND = {"id": "s2", "description": "If the order was delivered, refund the broken one",
          "tool": "apply_refund", "args": {"order_id": "88231", "reason": "broken"},
          "depends_on": ["s1"], "condition": "s1.status == 'delivered'"}


def answer(step_id: str, *deps: str) -> dict:
    return {"id": step_id, "description": "Summarise the results for the user", "tool": None,
            "depends_on": list(deps)}


DROPPED = json.dumps({"goal": SEED.request_en, "steps": [LOOKUP, REFUND, answer("s3", "s1", "s2")]})
COVERED = json.dumps({"goal": SEED.request_en, "steps": [
    {"id": "s1", "description": "Search the guides for an easy robot vacuum under 2000",
     "tool": "search_knowledge", "args": {"query": "robot vacuum elderly"}, "depends_on": []},
    {**LOOKUP, "id": "s2"},
    {**REFUND, "id": "s3", "depends_on": ["s2"], "condition": "s2.status == 'delivered'"},
    answer("s4", "s1", "s2", "s3"),
]})


def steps(data: str) -> Plan:
    return Plan.model_validate({"goal": "x", "steps": json.loads(data)["steps"]})


def test_a_dropped_clause_is_sent_back_and_the_retry_covers_it(fake_openai, registry):
    result = planning(fake_openai, registry, SEED.request_en, DROPPED, COVERED)
    assert result.attempts == 2 and not result.plan.warnings
    assert [s.tool for s in result.plan.steps] == [
        "search_knowledge", "query_order", "apply_refund", None]
    corrective = fake_openai.chat_bodies[1]["messages"][-1]["content"]
    assert "My elderly parents want a robot vacuum under 2000" in corrective


def test_a_clause_still_uncovered_is_a_warning_naming_it(fake_openai, registry):
    result = planning(fake_openai, registry, SEED.request_en, DROPPED, DROPPED)
    assert result.attempts == 2 and not result.fallback
    [warning] = result.plan.warnings
    assert "robot vacuum under 2000" in warning and "order 88231" not in warning


def test_an_unusable_retry_keeps_the_first_plan_with_its_warning(fake_openai, registry):
    result = planning(fake_openai, registry, SEED.request_en, DROPPED, "not a plan at all")
    assert not result.fallback and result.plan.steps[0].tool == "query_order"
    assert any("robot vacuum" in warning for warning in result.plan.warnings)


def test_clauses_match_across_languages(registry):
    plan = steps(COVERED)
    assert uncovered_clauses(SEED.request_zh, plan, context(SEED.request_zh, registry)) == []
    assert uncovered_clauses(SEED.request_en, plan, context(SEED.request_en, registry)) == []
    zh = context(SEED.request_zh, registry)
    assert uncovered_clauses(SEED.request_zh, steps(DROPPED), zh) == [
        "我家老人想要一台扫地机，预算 2000 以内，要好操作的"]


def test_a_one_clause_request_is_not_checked(registry):
    one = "Check order 88231"
    assert uncovered_clauses(one, steps(DROPPED), context(one, registry)) == []


SERVICES = ("Which of our services are degraded or down right now, and what is the likely "
            "cause of each?")
REASONING_ONLY = json.dumps({"goal": SERVICES, "steps": [
    {"id": "s1", "description": "Identify which services are degraded or down", "tool": None,
     "depends_on": []},
    {"id": "s2", "description": "Explain the likely cause of each", "tool": None,
     "depends_on": ["s1"]},
]})
WITH_TOOLS = json.dumps({"goal": SERVICES, "steps": [
    {"id": "s1", "description": "Check the health of every service", "tool": "check_health",
     "args": {"service": "all"}, "depends_on": []},
    {"id": "s2", "description": "Diagnose the unhealthy services", "tool": "diagnose",
     "args": {"service": "all"}, "depends_on": ["s1"]},
    {"id": "s3", "description": "Explain the likely cause of each", "tool": None,
     "depends_on": ["s1", "s2"]},
]})


def test_a_reasoning_step_that_names_services_is_sent_back(fake_openai, registry):
    result = planning(fake_openai, registry, SERVICES, REASONING_ONLY, WITH_TOOLS)
    assert result.attempts == 2 and not result.plan.warnings
    assert [s.tool for s in result.plan.steps] == ["check_health", "diagnose", None]
    [problem] = [e for e in result.errors
                 if e.startswith("attempt 1") and "s1 is a reasoning step" in e]
    assert "list_services" in problem


def test_tool_hints_name_the_step_and_spare_the_ones_fed_by_the_tool(registry):
    plan = Plan(goal="订单 88231 怎么样了", steps=[
        Step(id="s1", description="看看订单 88231 的情况"),
        Step(id="s2", description="Query table churn_events with SQL"),
        Step(id="s3", description="查询订单 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s4", description="Explain order 88231's status", depends_on=["s3"]),
        Step(id="s5", description="回复用户订单 88231 的情况", depends_on=["s1", "s2", "s4"]),
    ])
    problems = found(reasoning_needs_tool, plan, registry)
    assert [p.split(" ")[0] for p in problems] == ["s1", "s2"]
    assert "query_order" in problems[0] and "订单号" in problems[0]
    assert "run_sql" in problems[1]


def test_a_reasoning_step_for_the_current_time_is_sent_to_the_clock(registry):
    plan = Plan(goal="Check order 70412 and tell me when it will arrive.", steps=[
        Step(id="s1", description="Retrieve the current time"),
        Step(id="s2", description="Estimate the arrival", depends_on=["s1"]),
    ])
    [problem] = found(reasoning_needs_tool, plan, registry)
    assert problem.startswith("s1 is a reasoning step") and "get_current_time" in problem


def test_a_replan_is_not_asked_to_change_the_steps_it_keeps(registry):
    plan = Plan(goal="订单 88231 怎么样了", steps=[
        Step(id="s1", description="看看订单 88231 的情况", status="completed", result="已签收"),
        Step(id="s2", description="回复用户", depends_on=["s1"]),
    ])
    assert found(reasoning_needs_tool, plan, registry) == []


def test_a_reasoning_step_that_picks_a_product_is_sent_to_the_knowledge_base(registry):
    # a 1.5B model planned "检查老人的扫地机需求" with no tool and answered from memory
    plan = Plan(goal="我家老人想要一台扫地机，预算 2000 以内", steps=[
        Step(id="s1", description="检查老人的扫地机需求"),
        Step(id="s2", description="Recommend a robot vacuum under 2000"),
        Step(id="s3", description="搜索扫地机选购指南", tool="search_knowledge",
             args={"query": "扫地机 老人"}),
        Step(id="s4", description="根据指南推荐一台扫地机", depends_on=["s3"]),
        Step(id="s5", description="Summarise what the user wants", depends_on=["s4"]),
        Step(id="s6", description="回复用户", depends_on=["s1", "s2", "s4", "s5"]),
    ])
    problems = found(reasoning_needs_tool, plan, registry)
    assert [p.split(" ")[0] for p in problems] == ["s1", "s2"]
    assert "search_knowledge" in problems[0] and "商品或政策" in problems[0]


def test_a_tool_step_described_as_another_tools_job_is_sent_back(registry):
    # a 1.5B model answered a churn question from a parcel's tracking data
    plan = Plan(goal="2026 年第一季度用户流失的最主要原因是什么？", steps=[
        Step(id="s1", description="查询2026年第一季度用户的流失原因", tool="query_logistics",
             args={"tracking_no": "SF1234567890"}),
        Step(id="s2", description="Estimate the arrival date", tool="query_logistics",
             args={"tracking_no": "SF1234567890"}),
        Step(id="s3", description="Track the parcel of order 70412", tool="query_logistics",
             args={"tracking_no": "SF1234567890"}),
        Step(id="s4", description="输出结果", depends_on=["s1", "s2", "s3"]),
    ])
    [problem] = found(tool_misfit, plan, registry)
    assert problem == ("s1 调用 query_logistics，但它的描述（“查询2026年第一季度用户的流失原因”）"
                       "是 run_sql 的用途：请改用 run_sql，或改写描述。")
    plan.steps[0].status = "completed"  # a replan does not reopen what already ran
    assert found(tool_misfit, plan, registry) == []


def test_a_second_question_joined_by_and_is_a_clause_to_cover(registry):
    from core.planning.checks import check_context
    from core.planning.checks.coverage import uncovered_clauses

    request = "What was the last commit's message in /srv/repo, and what time is it in Tokyo?"
    plan = Plan(goal=request, steps=[
        Step(id="s1", description="Get the current time in Tokyo", tool="get_current_time",
             args={"timezone": "Asia/Tokyo"}),
        Step(id="s2", description="Answer", depends_on=["s1"])])
    context = check_context(request, registry, "draft", language="en")
    assert uncovered_clauses(request, plan, context) == [
        "What was the last commit's message in /srv/repo"]
