"""The demo's scenario gallery: the four seed scenarios, and a long request in stages that is
planned in phases, as ready-made requests in both languages."""

from __future__ import annotations

from core.planning.packs import Scenario

__all__ = ["SCENARIOS", "get_scenario"]


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        id="shop-refund",
        title_en="Customer service: a robot vacuum for elderly parents + refund order 88231",
        title_zh="电商客服：给老人选扫地机 + 订单 88231 退款",
        request_en=(
            "My elderly parents want a robot vacuum under 2000 that is easy to use. Also check "
            "whether order 88231 has arrived, and if it has, refund the broken one."
        ),
        request_zh=(
            "我家老人想要一台扫地机，预算 2000 以内，要好操作的。"
            "另外帮我看看订单 88231 到了没，到了的话帮我把那台坏的退掉。"
        ),
    ),
    Scenario(
        id="research-ai-coding",
        title_en="Research report: the state of AI coding tools",
        title_zh="调研报告：AI 编程工具现状",
        request_en="Research the current state of AI coding tools and write a short report.",
        request_zh="调研 AI 编程工具现状，写一份简要报告。",
    ),
    Scenario(
        id="churn-analysis",
        title_en="Data analysis: why users churned last quarter",
        title_zh="数据分析：上季度用户流失原因",
        request_en=(
            "Analyse our user churn over the last quarter, find the main reasons and suggest "
            "improvements."
        ),
        request_zh="分析我们产品过去一个季度的用户流失情况，找出主要原因，并给出改进建议。",
    ),
    Scenario(
        id="ops-health",
        title_en="Operations: health check of all 15 micro-services",
        title_zh="运维巡检：15 个微服务健康检查",
        request_en=(
            "Check the health of all 15 micro-services, diagnose the unhealthy ones and "
            "suggest how to scale them."
        ),
        request_zh="检查 15 个微服务的健康状态，对异常服务生成诊断报告，并给出扩容建议。",
    ),
    Scenario(
        id="ops-quarterly-review",
        title_en="Phases: a quarterly operations review in four stages",
        title_zh="分阶段：四个阶段的季度运维复盘",
        request_en=(
            "Quarterly operations review: check the fleet's health, diagnose every unhealthy "
            "service, count the churned users of Q1 and their top reasons, then write a report "
            "with recommendations"
        ),
        request_zh=(
            "季度运维复盘：先检查整个集群的健康状态，诊断每个异常服务，再统计第一季度流失用户数量"
            "及主要原因，最后写一份带建议的报告"
        ),
    ),
)


def get_scenario(scenario_id: str) -> Scenario:
    """The scenario with ``scenario_id``; KeyError names the ids that exist."""
    for scenario in SCENARIOS:
        if scenario.id == scenario_id:
            return scenario
    known = ", ".join(s.id for s in SCENARIOS)
    raise KeyError(f"no scenario {scenario_id!r}; scenarios are: {known}")
