"""The demo's rule planner: a deterministic plan drafter for the demo's requests, no LLM.

The request is split into clauses, each clause is matched to tool families by cue words
and by scoring the registry's tools (names, descriptions, keywords), arguments are filled
from what the clause names (order ids, tracking numbers, services, budgets, queries),
dependencies and conditions are added (a refund runs only if the order is delivered), and a
synthesis step closes the plan. A part it cannot map becomes a reasoning step that says so;
when no part maps (``strict``), the request is refused with UnservableRequestError instead.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from core.base.language import Language, detect_language
from core.base.messages import render
from core.base.text import REQUEST_CHARS
from core.errors import UnservableRequestError
from core.plan.model import Plan, Step
from core.planning.clauses import asks_repeat, clean_query, split_clauses
from core.planning.packs import data_until
from core.planning.periods import Period, calendar_period, request_period, today
from core.planning.tool_match import score_tool
from core.tools.registry import ToolRegistry
from demo.messages import in_language
from demo.offline.match import fill_args
from demo.offline.text import (
    CHURN_QUERIES,
    PERIOD_PREFIX,
    Entities,
    cues,
    extract_entities,
    refund_reason,
    research_topic,
)

__all__ = ["SYNTHESIS_ONLY", "Parts", "draft_parts", "offline_plan"]

logger = logging.getLogger(__name__)
_MAX_CLAUSES = 12
_MAX_STEPS = 24
_GENERIC_THRESHOLD = 6



@dataclass
class _Draft:
    """The plan being built: steps plus indexes so a later clause can reuse earlier steps."""

    registry: ToolRegistry
    lang: Language
    request: str = ""
    period: Period | None = None  # the period an analysis covers, once one needs it
    steps: list[Step] = field(default_factory=list)
    orders: dict[str, str] = field(default_factory=dict)
    refunds: dict[str, str] = field(default_factory=dict)  # order id -> its refund step
    ops: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    unserved: list[str] = field(default_factory=list)  # why each unmapped part is not served
    last_order: str | None = None
    last_services: list[str] = field(default_factory=list)

    def has(self, name: str) -> bool:
        return name in self.registry

    def analysed_period(self) -> Period:
        """The period the request names, else last quarter: read against today and the data
        (a relative period the data does not reach moves to the latest one it holds)."""
        if self.period is None:
            self.period = request_period(self.request, self.registry) or calendar_period(
                "quarter", -1, today(), data_until(self.registry))
        return self.period

    def add(self, description: str, tool: str | None = None, args: dict | None = None,
            depends_on: list[str] | None = None, condition: str | None = None,
            success_criteria: str | None = None) -> str:
        step_id = f"s{len(self.steps) + 1}"
        self.steps.append(Step(
            id=step_id, description=description, tool=tool, args=args,
            depends_on=depends_on or [], condition=condition,
            success_criteria=success_criteria,
        ))
        return step_id

    def cannot(self, clause: str, why_zh: str = "", why_en: str = "") -> str:
        text = clause.strip()[:200]
        self.unserved.append(in_language(self.lang,
                                         f"\"{text}\"{why_en or ' (no built-in tool matches it)'}",
                                         f"“{text}”{why_zh or '（没有匹配的工具）'}"))
        return self.add(in_language(
            self.lang,
            f"Cannot be done offline: \"{text}\"{why_en or ' (no matching tool; needs an LLM)'}",
            f"无法离线完成：“{text}”{why_zh or '（没有匹配的工具，需要配置大模型）'}"))


# ---- families ---------------------------------------------------------------------------


def _shop(draft: _Draft, clause: str, found: Entities, flags: set[str]) -> bool:
    lang = draft.lang
    order_ids = list(found.orders)
    refund_of_last = bool(flags & {"refund", "refund_result"}) and "policy" not in flags
    # "Check order 70412 and tell me when it arrives": the second clause means the same order
    if not order_ids and (refund_of_last or "logistics" in flags) and draft.last_order:
        order_ids = [draft.last_order]
    did = False
    for order_id in order_ids:
        did = True
        check = _order_check(draft, order_id)
        if "logistics" in flags and draft.has("query_logistics"):
            draft.add(
                in_language(lang, f"Track the parcel of order {order_id}",
                            f"查询订单 {order_id} 的物流轨迹"),
                "query_logistics",
                {"tracking_no": f"{{{{{check}.tracking_no}}}}"} if check else None,
                [check] if check else [],
            )
        if "refund" in flags and draft.has("apply_refund"):
            _refund(draft, order_id, check, clause)
    for tracking_no in found.tracking:
        if draft.has("query_logistics"):
            did = True
            draft.add(in_language(lang, f"Track parcel {tracking_no}",
                                  f"查询运单 {tracking_no} 的物流轨迹"),
                      "query_logistics", {"tracking_no": tracking_no})
    if not did and "refund" in flags and "policy" not in flags:
        draft.cannot(clause, "（没有给出订单号，请补充订单号）",
                     " (no order number given; please add it)")
        did = True
    return did


def _order_check(draft: _Draft, order_id: str) -> str | None:
    draft.last_order = order_id
    if order_id in draft.orders:
        return draft.orders[order_id]
    if not draft.has("query_order"):
        return None
    step_id = draft.add(
        in_language(draft.lang, f"Look up order {order_id} and its status",
                    f"查询订单 {order_id} 的详情，确认商品和状态"),
        "query_order", {"order_id": order_id},
        success_criteria=in_language(draft.lang, "the order status is known", "订单状态已知"),
    )
    draft.orders[order_id] = step_id
    return step_id


def _refund(draft: _Draft, order_id: str, check: str | None, clause: str) -> None:
    """The refund of ``order_id``, once: a later part that names it again ("then tell me
    the refund number") reads the same step, unless the request asks for a repeat."""
    if order_id in draft.refunds and not asks_repeat(draft.request):
        return
    reason = refund_reason(draft.request, clause, draft.lang)
    draft.refunds[order_id] = draft.add(
        in_language(draft.lang, f"If order {order_id} was delivered, request a refund ({reason})",
                    f"如果订单 {order_id} 已签收，为其申请退款（原因：{reason}）"),
        "apply_refund", {"order_id": order_id, "reason": reason},
        [check] if check else [],
        f"{check}.status == 'delivered'" if check else None,
        in_language(draft.lang, "a refund id is returned", "拿到退款单号"),
    )


def _ops(draft: _Draft, clause: str, found: Entities, flags: set[str]) -> bool:
    lang = draft.lang
    wants_health = bool(flags & {"health", "diagnose", "scale"})
    if not found.services and draft.last_services and not _FLEET_WORDS.search(clause):
        found.services = draft.last_services
    if found.services:
        draft.last_services = found.services
        target: Any = found.services if len(found.services) > 1 else found.services[0]
        names = ", ".join(found.services)
        wanted = [("check_health", in_language(lang, f"Check the health of {names}",
                                               f"检查 {names} 的健康状态"))]
        wanted += [(tool, in_language(lang, f"{en} {names}", f"{zh} {names}"))
                   for kind, tool, zh, en in _OPS_FOLLOW_UPS if kind in flags]
        for tool, description in wanted:
            key = f"{tool}:{names}"
            if key not in draft.ops and draft.has(tool):
                draft.ops[key] = draft.add(description, tool, {"service": target})
        return True
    if "list_services" not in draft.ops and draft.has("list_services"):
        draft.ops["list_services"] = draft.add(
            in_language(lang, "List every micro-service", "列出所有微服务"), "list_services", {})
    listing = draft.ops.get("list_services")
    if wants_health and "check_health" not in draft.ops and draft.has("check_health"):
        draft.ops["check_health"] = draft.add(
            in_language(lang, "Check the health of every service", "检查所有服务的健康状态"),
            "check_health",
            {"service": f"{{{{{listing}.names}}}}" if listing else "all"},
            [listing] if listing else [],
            success_criteria=in_language(lang, "the unhealthy services are known",
                                         "得到异常服务列表"),
        )
    health = draft.ops.get("check_health")
    for kind, tool, zh, en in _OPS_FOLLOW_UPS:
        if kind in flags and tool not in draft.ops and draft.has(tool):
            draft.ops[tool] = draft.add(
                in_language(lang, f"{en} every unhealthy service", f"{zh}所有异常服务"), tool,
                {"service": f"{{{{{health}.unhealthy}}}}" if health else "all"},
                [health] if health else [],
            )
    return True


_FLEET_WORDS = re.compile(r"所有|全部|每个|微服务|集群|\ball\b|\bevery\b|fleet|\d+ ", re.I)
SYNTHESIS_ONLY = re.compile(
    r"建议|总结|汇总|报告|结论|summar|suggest|recommendation|advice|report|conclu", re.I
)
_OPS_FOLLOW_UPS = (
    ("diagnose", "diagnose", "诊断", "Diagnose"),
    ("scale", "suggest_scale", "给出扩容建议：", "Suggest scaling for"),
)


def _analytics(draft: _Draft, clause: str, found: Entities, flags: set[str]) -> bool:
    lang = draft.lang
    if found.sql and draft.has("run_sql"):
        draft.add(in_language(lang, "Run the SQL query",
                              "执行 SQL 查询"), "run_sql", {"query": found.sql})
        return True
    if draft.has("describe_tables") and "describe_tables" not in draft.ops:
        draft.ops["describe_tables"] = draft.add(
            in_language(lang, "Look at the analytics tables",
                        "查看数据表结构"), "describe_tables", {})
    if "churn" in flags and draft.has("run_sql") and "churn" not in draft.ops:
        fields = _period_fields(draft.analysed_period(), lang)
        for zh, en, sql in CHURN_QUERIES:
            draft.ops["churn"] = draft.add(in_language(lang, en, zh).format(**fields), "run_sql",
                                           {"query": sql.format(**fields)})
        return True
    if "churn" not in draft.ops and "schema" not in flags:
        draft.cannot(clause, "（为这个问题编写 SQL 需要大模型）",
                     " (writing SQL for this question needs an LLM)")
    return True


def _period_fields(period: Period, lang: Language) -> dict[str, str]:
    """The words and bounds CHURN_QUERIES take from ``period``."""
    months = period.start.year * 12 + period.start.month - 1 - 3
    return {"name": render(period.name, lang), "label": render(period.dated, lang),
            "since": date(months // 12, months % 12 + 1, 1).isoformat(),
            "start": period.start.isoformat(), "end": period.end.isoformat()}


def _research(draft: _Draft, clause: str, found: Entities, flags: set[str]) -> bool:
    lang = draft.lang
    topic = research_topic(clause) or clause.strip()[:80]
    if draft.has("web_search"):
        for zh, en in (("概况", "overview"), ("功能对比", "comparison"), ("趋势", "trends")):
            query = f"{topic} {zh if lang == 'zh' else en}"
            draft.add(in_language(lang, f"Search the web: {query}", f"网络搜索：{query}"),
                      "web_search", {"query": query})
        return True
    if draft.has("search_knowledge"):
        draft.warnings.append(in_language(
            lang,
            "PLANBOARD_SEARXNG_URL is not set: research uses the local knowledge base "
            "(local sources, not the live web)",
            "未配置 PLANBOARD_SEARXNG_URL：调研使用本地知识库（本地资料，非实时网络）"))
        draft.add(in_language(lang, f"Search the local knowledge base: {topic}",
                              f"在本地知识库中搜索：{topic}"),
                  "search_knowledge", {"query": topic, "top_k": 5})
        return True
    return False


def _knowledge(draft: _Draft, clause: str, found: Entities, flags: set[str]) -> bool:
    if not draft.has("search_knowledge"):
        return False
    query = clean_query(clause) or clause.strip()[:80]
    draft.add(in_language(draft.lang, f"Search the knowledge base: {query}",
                          f"搜索知识库：{query}"),
              "search_knowledge", {"query": query},
              success_criteria=in_language(draft.lang, "relevant documents are found",
                                           "找到相关文档"))
    return True


def _calculate(draft: _Draft, clause: str, found: Entities, flags: set[str]) -> bool:
    if not (found.expression and draft.has("calculate")):
        return False
    draft.add(in_language(draft.lang, f"Calculate {found.expression}", f"计算 {found.expression}"),
              "calculate", {"expression": found.expression})
    return True


def _time(draft: _Draft, clause: str, found: Entities, flags: set[str]) -> bool:
    if not draft.has("get_current_time"):
        return False
    draft.add(in_language(draft.lang, "Get the current time",
                          "获取当前时间"), "get_current_time", {})
    return True


_FAMILIES = (
    ("shop", _shop), ("ops", _ops), ("analytics", _analytics), ("research", _research),
    ("calc", _calculate), ("time", _time),
)


# ---- generic matching over the registry -------------------------------------------------


def _generic(draft: _Draft, clause: str, found: Entities) -> bool:
    known = {"query_order", "query_logistics", "apply_refund", "search_knowledge",
             "list_services", "check_health", "diagnose", "suggest_scale", "describe_tables",
             "run_sql", "web_search", "calculate", "get_current_time"}
    ranked = sorted(
        ((score_tool(t, clause), t.name) for t in draft.registry if t.name not in known),
        reverse=True,
    )
    if not ranked or ranked[0][0] < _GENERIC_THRESHOLD:
        return False
    chosen = draft.registry.get(ranked[0][1])
    args = fill_args(chosen, clause, found)
    if args is None:
        draft.cannot(clause, f"（{chosen.name} 需要的参数无法从请求中读出）",
                     f" ({chosen.name} needs arguments the request does not give)")
        return True
    draft.add(clause.strip()[:200], chosen.name, args)
    return True


# ---- entry point ------------------------------------------------------------------------


@dataclass
class Parts:
    """The rules' steps for a request read part by part: ``parts`` holds each part with
    the ids of the steps it added (in order), ``plan`` the whole plan, its answer step
    last (None when no part was served and ``strict`` asked for an error instead)."""

    plan: Plan
    parts: list[tuple[str, list[str]]]


def offline_plan(request: str, registry: ToolRegistry, *, strict: bool = False) -> Plan:
    """Draft a plan for ``request`` with rules only; the plan always passes validate().

    ``strict``: raise UnservableRequestError (naming each part and why) when no part of the
    request maps to a tool, instead of returning a plan whose steps only say so.
    """
    text = request if isinstance(request, str) else str(request or "")
    return draft_parts(text, split_clauses(text), registry, strict=strict).plan


def draft_parts(request: str, parts: list[str], registry: ToolRegistry, *,
                strict: bool = False) -> Parts:
    """The rules' plan for ``request`` read as ``parts`` (its clauses, or its stages), in
    one draft, so that a later part reuses and reads what an earlier part looked up; which
    steps each part added. See :func:`offline_plan` for ``strict``."""
    text = request
    lang = detect_language(text)
    draft = _Draft(registry=registry, lang=lang, request=text)
    constraints: list[str] = []
    served = 0
    added: list[tuple[str, list[str]]] = []
    for clause in parts[:_MAX_CLAUSES]:
        if len(draft.steps) >= _MAX_STEPS:
            draft.warnings.append(in_language(
                lang,
                "the request is long; only its first part was planned",
                "请求过长，只规划了前面的部分"))
            break
        found = extract_entities(clause)
        if found.budget is not None:
            constraints.append(f"budget <= {found.budget:g}")
        before = len(draft.steps)
        served += _plan_clause(draft, clause, found)
        added.append((clause, [s.id for s in draft.steps[before:]]))
    if not draft.steps:
        draft.cannot(text or in_language(lang, "(empty request)", "（空请求）"))
    if strict and not served:
        raise _unservable(text, draft)
    draft.add(
        in_language(lang, "Summarise the results for the user", "综合以上结果，给出最终回复"),
        depends_on=[s.id for s in draft.steps],
    )
    if draft.period is not None:
        prefix = PERIOD_PREFIX.word(lang)
        constraints.append(prefix + draft.period.describe(lang))
    plan = Plan(
        goal=text.strip()[:REQUEST_CHARS] or in_language(lang, "(empty request)", "（空请求）"),
        definition_of_done=in_language(lang,
                                       "every part of the request has a result or a stated reason",
                                       "请求中的每个子任务都有结果或说明了原因"),
        constraints=list(dict.fromkeys(constraints)),
        steps=draft.steps,
        warnings=list(dict.fromkeys(draft.warnings)),
    )
    problems = plan.validate(registry)
    if problems:  # a rule bug must never reach the user as an invalid plan
        logger.warning("offline plan had problems, falling back: %s", problems)
        return Parts(plan=_minimal_plan(plan.goal, lang, problems), parts=[])
    return Parts(plan=plan, parts=added)


def _unservable(text: str, draft: _Draft) -> UnservableRequestError:
    reasons = list(dict.fromkeys(draft.unserved))
    why = "；".join(reasons) if draft.lang == "zh" else "; ".join(reasons)
    return UnservableRequestError(in_language(
        draft.lang,
        f"This request cannot be served offline: {why}. No run was recorded. Configure an "
        "LLM (OPENAI_API_KEY), or ask about orders, parcels, services, analytics or the "
        "knowledge base.",
        f"离线无法处理这个请求：{why}。没有记录任何运行。请配置大模型（OPENAI_API_KEY），"
        "或围绕订单、物流、服务运维、数据分析或知识库重新描述。"), reasons)


def _plan_clause(draft: _Draft, clause: str, found: Entities) -> bool:
    """Plan one clause; True when it was served (a step of its own, and no "cannot")."""
    before, refused = len(draft.steps), len(draft.unserved)
    _map_clause(draft, clause, found)
    return len(draft.steps) > before and len(draft.unserved) == refused


def _map_clause(draft: _Draft, clause: str, found: Entities) -> None:
    flags = cues(clause)
    handled = False
    for family, builder in _FAMILIES:
        if family in flags and builder(draft, clause, found, flags):
            handled = True
    wants_knowledge = bool(flags & {"knowledge", "product"})
    if wants_knowledge and (not handled or {"recommend", "product"} <= flags):
        handled = _knowledge(draft, _without_actions(clause), found, flags) or handled
    if not handled:
        handled = _generic(draft, clause, found)
    if not handled and draft.steps and SYNTHESIS_ONLY.search(clause):
        handled = True  # "give suggestions", "write a summary": the synthesis step does it
    if not handled and re.search(r"[\w\u3400-\u9fff]", clause):
        draft.cannot(clause)


def _without_actions(clause: str) -> str:
    """The parts of a clause that do not name an order, a parcel or a refund."""
    parts = re.split(r"，|,|\band\b|以及|并且", clause)
    kept = [p for p in parts if not (cues(p) & {"shop", "refund"})]
    return " ".join(kept).strip() or clause


def _minimal_plan(goal: str, lang: Language, problems: list[str]) -> Plan:
    return Plan(
        goal=goal,
        steps=[
            Step(id="s1", description=in_language(lang, f"Cannot be done offline: {goal[:200]}",
                                                  f"无法离线完成：{goal[:200]}")),
            Step(id="s2", description=in_language(lang, "Summarise the results for the user",
                                                  "综合以上结果，给出最终回复"),
                 depends_on=["s1"]),
        ],
        warnings=[f"offline planner problem: {p}" for p in problems],
    )
