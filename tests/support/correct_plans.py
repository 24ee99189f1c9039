"""The corpus of correct plans: requests, the plans a good planner writes for them (in every
format the seeds use, in English, Chinese and both), and what each run needs and ends with.

Every check and repair must leave these plans alone, with the checks for weak models on and
off (tests/planning/test_correct_plans.py): the same plan, no warning, no note under the
answer, and exactly ``calls`` model calls. Each entry is a whole exchange with the scripted
endpoint: the planner's reply, then every other reply the run asks for, in order. A reply
given as ``(marker, reply)`` answers the first request whose messages hold ``marker``
(``"Current step s2:"``), for calls that steps running side by side make in either order.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any

from tests.support.fake_openai import FakeReply, text, tool_call

__all__ = ["CORPUS", "FROZEN_NOW", "Entry", "FrozenClock", "Script"]

Reply = FakeReply | str
Scripted = Reply | tuple[str, Reply]
FROZEN_NOW = datetime(2026, 12, 7, 0, 15, tzinfo=UTC)  # 09:15 in Tokyo, 08:15 in Shanghai


class FrozenClock(datetime):
    """The built-in clock's ``datetime``, stopped at :data:`FROZEN_NOW`."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> datetime:  # type: ignore[override]
        return FROZEN_NOW.astimezone(tz)


@dataclass(frozen=True)
class Entry:
    """A request, its correct plan (the planner's reply) and the run it makes.

    ``then`` holds what a person does next, in order: ``("refine", sentence)`` before the run,
    ``("follow_up", text)`` after it (a new version, run in turn). ``answers`` are the
    answers of the runs, word for word; ``calls`` every model call, planning included.
    """

    name: str
    request: str
    plan: str
    calls: int
    answers: tuple[str, ...]
    replies: tuple[Scripted, ...] = ()
    then: tuple[tuple[str, str], ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    hierarchical: bool = False


class Script:
    """The endpoint's responder for one run of an entry: each request gets the first reply
    left whose marker its messages hold (a reply without one: the next request)."""

    def __init__(self, replies: tuple[Scripted, ...]) -> None:
        self._left = list(replies)
        self._lock = threading.Lock()

    @property
    def left(self) -> int:
        """Replies no request has taken."""
        return len(self._left)

    def __call__(self, body: dict[str, Any]) -> Reply | None:
        said = json.dumps(body.get("messages"), ensure_ascii=False)
        with self._lock:
            for index, item in enumerate(self._left):
                marker, reply = item if isinstance(item, tuple) else (None, item)
                if marker is None or marker in said:
                    del self._left[index]
                    return reply
        return None


def _plan(steps: list[dict[str, Any]] | dict[str, Any], **extra: Any) -> str:
    data = steps if isinstance(steps, dict) else {**extra, "steps": steps}
    return json.dumps(data, ensure_ascii=False)


def _step(sid: str, description: str, tool: str | None = None, args: dict | None = None,
          depends_on: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"id": sid, "description": description, "tool": tool}
    if args is not None:
        step["args"] = args
    return {**step, "depends_on": list(depends_on), **extra}


def _seed000(*steps: tuple[str, str | None]) -> str:
    """Seed 000's reply: a bare array of ``{stepId, description, toolHint}``."""
    return json.dumps([{"stepId": n, "description": description, "toolHint": tool}
                       for n, (description, tool) in enumerate(steps, 1)], ensure_ascii=False)


def _seed002(goal: str, *steps: tuple[str, str | None]) -> str:
    """Seed 002's reply: ``{goal, steps: [{step, description, tool}]}``."""
    return json.dumps({"goal": goal, "steps": [
        {"step": n, "description": description, "tool": tool}
        for n, (description, tool) in enumerate(steps, 1)]}, ensure_ascii=False)


def _forced(step: str, tool: str, args: dict[str, Any]) -> tuple[str, Reply]:
    """The forced call that fills step ``step``'s arguments when it runs."""
    return (f"Current step {step}:", tool_call(tool, args))


def _said(step: str, reply: str) -> tuple[str, Reply]:
    """What the model says when step ``step`` asks it (a reasoning step, a condition)."""
    return (f"Current step {step}:", text(reply))


SUMMARY_EN = "Summarise the results for the user"
SUMMARY_ZH = "综合以上结果，给出最终回复"
CALC_TIME_EN = "What is 17*23 plus 5, and what time is it in Tokyo?"
CALC_TIME_ANSWER = "17*23 plus 5 is 396. In Tokyo it is now 09:15."
CALC_TIME_ZH = "17 乘以 23 再加 5 等于多少？东京现在几点？"
CALC_TIME_ANSWER_ZH = "17 乘以 23 再加 5 等于 396。东京现在是 09:15。"
DOUBLING_EN = "Start from 3 and double it eleven times: what number do you get?"
TWO_CLOCKS_EN = "What time is it in London and in New York right now?"

_BUILTIN: tuple[Entry, ...] = (
    Entry(
        name="en-calculation-inferred-and-clock",
        request=CALC_TIME_EN,
        plan=_plan([
            _step("s1", "Calculate 17*23", "calculate", {"expression": "17*23"}),
            _step("s2", "Add 5 to the product", "calculate", None, ("s1",)),
            _step("s3", "Get the current time in Tokyo", "get_current_time",
                  {"timezone": "Asia/Tokyo"}),
            _step("s4", SUMMARY_EN, None, None, ("s1", "s2", "s3"))]),
        replies=(_forced("s2", "calculate", {"expression": "391 + 5"}), text(CALC_TIME_ANSWER)),
        calls=3, answers=(CALC_TIME_ANSWER,)),
    Entry(
        name="en-request-zh-steps-seed000",
        request=CALC_TIME_EN,
        plan=_seed000(("计算 17*23 再加 5", "calculate"), ("查东京时间", "get_current_time"),
                      (SUMMARY_ZH, None)),
        replies=(_forced("s1", "calculate", {"expression": "17*23 + 5"}),
                 _forced("s2", "get_current_time", {"timezone": "Asia/Tokyo"}),
                 text(CALC_TIME_ANSWER)),
        calls=4, answers=(CALC_TIME_ANSWER,)),
    Entry(
        name="en-request-zh-steps-seed002",
        request=CALC_TIME_EN,
        plan=_seed002("计算 17*23 加 5 并查询东京时间", ("计算 17*23 再加 5", "calculate"),
                      ("查东京时间", "get_current_time"), (SUMMARY_ZH, None)),
        replies=(_forced("s1", "calculate", {"expression": "17*23 + 5"}),
                 _forced("s2", "get_current_time", {"timezone": "Asia/Tokyo"}),
                 text(CALC_TIME_ANSWER)),
        calls=4, answers=(CALC_TIME_ANSWER,)),
    Entry(
        name="zh-calculation-and-clock",
        request=CALC_TIME_ZH,
        plan=_plan([
            _step("s1", "计算 17*23+5", "calculate", {"expression": "17*23+5"}),
            _step("s2", "查询东京现在的时间", "get_current_time", {"timezone": "Asia/Tokyo"}),
            _step("s3", SUMMARY_ZH, None, None, ("s1", "s2"))]),
        replies=(text(CALC_TIME_ANSWER_ZH),), calls=2, answers=(CALC_TIME_ANSWER_ZH,)),
    Entry(
        name="zh-request-en-steps",
        request=CALC_TIME_ZH,
        plan=_plan([
            _step("s1", "Calculate 17*23+5", "calculate", {"expression": "17*23+5"}),
            _step("s2", "Get the current time in Tokyo", "get_current_time",
                  {"timezone": "Asia/Tokyo"}),
            _step("s3", SUMMARY_EN, None, None, ("s1", "s2"))]),
        replies=(text(CALC_TIME_ANSWER_ZH),), calls=2, answers=(CALC_TIME_ANSWER_ZH,)),
    Entry(
        name="en-two-clocks-side-by-side",
        request=TWO_CLOCKS_EN,
        plan=_plan([
            _step("s1", "Get the current time in London", "get_current_time",
                  {"timezone": "Europe/London"}),
            _step("s2", "Get the current time in New York", "get_current_time",
                  {"timezone": "America/New_York"}),
            _step("s3", SUMMARY_EN, None, None, ("s1", "s2"))],
            goal=TWO_CLOCKS_EN, definition_of_done="both local times are given"),
        replies=(text("In London it is 00:15 on 7 December; in New York it is 19:15 on "
                      "6 December."),),
        calls=2, answers=("In London it is 00:15 on 7 December; in New York it is 19:15 on "
                          "6 December.",)),
    Entry(
        name="en-chain-of-12",
        request=DOUBLING_EN,
        plan=_plan([
            _step("s1", "Double 3", "calculate", {"expression": "3 * 2"}),
            *(_step(f"s{n}", f"Double the result of s{n - 1}", "calculate",
                    {"expression": f"{{{{s{n - 1}.value}}}} * 2"}, (f"s{n - 1}",))
              for n in range(2, 12)),
            _step("s12", SUMMARY_EN, None, None, ("s11",))]),
        replies=(text("Doubling 3 eleven times gives 6144."),),
        calls=2, answers=("Doubling 3 eleven times gives 6144.",)),
)

REFUND_EN = "Check order 88231 and refund it if it was delivered; the item is broken."
REFUND_ANSWER_EN = ("Order 88231 (Bit S10 Pro robot vacuum) was delivered, so I requested a "
                    "refund: RF20260624001, ¥1999 back to your original payment in 1-3 "
                    "business days.")
REFUND_ZH = "帮我查一下订单 88231，如果已经签收就申请退款，屏幕碎了。"
REFUND_ANSWER_ZH = ("订单 88231（比特 S10 Pro 扫地机）已签收，已为您申请退款，退款单号 "
                    "RF20260624001，¥1999 预计 1-3 个工作日原路退回。")
PARCEL_ZH = "帮我查一下订单 88231 的快递到哪了"
PARCEL_ANSWER_ZH = "订单 88231 的快递（顺丰 SF1234567890）已于 2026-06-22 15:30 在北京签收。"
PARCEL_EN = "Where is the parcel of order 70412?"
PARCEL_ANSWER_EN = ("Order 70412 (Bit AirPure air purifier) is in transit with 圆通速递, "
                    "tracking number YT9876543210; it is expected on 2026-06-25.")
SKIPPED_EN = "Refund order 70412 if it has been delivered."
SKIPPED_ANSWER_EN = ("Order 70412 has not been delivered yet (it is in transit, expected on "
                     "2026-06-25), so no refund was requested.")

TRACKING_EN = "What is the tracking number of order 70412?"
TRACKING_ANSWER_EN = "Order 70412 ships with 圆通速递 under tracking number YT-9876543210."
PRICE_TRACKING_ZH = "订单 70412 的运单号和价格是多少？"
PRICE_TRACKING_ANSWER_ZH = "订单 70412 的运单号是 YT 9876543210（圆通速递），价格 ¥1,299.00。"

SPELLED_EN = "Where is my parcel? Its tracking number is SF followed by 1234567890."
SPELLED_ANSWER_EN = ("Parcel SF1234567890 (顺丰速运) was signed for in Beijing on 2026-06-22 "
                     "at 15:30.")

_SHOP: tuple[Entry, ...] = (
    Entry(
        name="en-conditional-refund-canonical",
        request=REFUND_EN,
        plan=_plan({
            "goal": REFUND_EN,
            "definition_of_done": "the order's status is known and, if it was delivered, a "
                                  "refund id is returned",
            "constraints": ["refund only a delivered order"],
            "steps": [
                _step("s1", "Look up order 88231 and its status", "query_order",
                      {"order_id": "88231"}, success_criteria="order status is known"),
                _step("s2", "If the order was delivered, request a refund", "apply_refund",
                      {"order_id": "88231", "reason": "item is broken"}, ("s1",),
                      condition="s1.status == 'delivered'"),
                _step("s3", SUMMARY_EN, None, None, ("s1", "s2"))]}),
        replies=(text(REFUND_ANSWER_EN),), calls=2, answers=(REFUND_ANSWER_EN,)),
    Entry(
        name="zh-conditional-refund",
        request=REFUND_ZH,
        plan=_plan([
            _step("s1", "查询订单 88231 的详情，确认订单状态", "query_order",
                  {"order_id": "88231"}),
            _step("s2", "如果订单已签收，为订单 88231 申请退款，原因是屏幕碎了", "apply_refund",
                  {"order_id": "88231", "reason": "屏幕碎了"}, ("s1",),
                  condition="s1.status == 'delivered'"),
            _step("s3", SUMMARY_ZH, None, None, ("s1", "s2"))]),
        replies=(text(REFUND_ANSWER_ZH),), calls=2, answers=(REFUND_ANSWER_ZH,)),
    Entry(
        name="zh-parcel-seed000-inferred",
        request=PARCEL_ZH,
        plan=_seed000(("查询订单 88231 的详情，拿到运单号", "query_order"),
                      ("根据运单号查询物流轨迹", "query_logistics"), (SUMMARY_ZH, None)),
        replies=(_forced("s1", "query_order", {"order_id": "88231"}),
                 _forced("s2", "query_logistics", {"tracking_no": "SF1234567890"}),
                 text(PARCEL_ANSWER_ZH)),
        calls=4, answers=(PARCEL_ANSWER_ZH,)),
    Entry(
        name="en-parcel-reference",
        request=PARCEL_EN,
        plan=_plan([
            _step("s1", "Look up order 70412", "query_order", {"order_id": "70412"}),
            _step("s2", "Track its parcel", "query_logistics",
                  {"tracking_no": "{{s1.tracking_no}}"}, ("s1",)),
            _step("s3", SUMMARY_EN, None, None, ("s2",))]),
        replies=(text(PARCEL_ANSWER_EN),), calls=2, answers=(PARCEL_ANSWER_EN,)),
    Entry(
        name="en-parcel-inferred-at-run-time",
        request=PARCEL_EN,
        plan=_plan([
            _step("s1", "Look up order 70412", "query_order", {"order_id": "70412"}),
            _step("s2", "Track its parcel with the tracking number s1 found",
                  "query_logistics", None, ("s1",)),
            _step("s3", SUMMARY_EN, None, None, ("s2",))]),
        replies=(_forced("s2", "query_logistics", {"tracking_no": "YT9876543210"}),
                 text(PARCEL_ANSWER_EN)),
        calls=3, answers=(PARCEL_ANSWER_EN,)),
    Entry(
        name="en-condition-false-skips-the-refund",
        request=SKIPPED_EN,
        plan=_plan([
            _step("s1", "Look up order 70412 and its status", "query_order",
                  {"order_id": "70412"}),
            _step("s2", "Refund order 70412 if it was delivered", "apply_refund",
                  {"order_id": "70412"}, ("s1",), condition="s1.status == 'delivered'"),
            _step("s3", SUMMARY_EN, None, None, ("s1", "s2"))]),
        replies=(text(SKIPPED_ANSWER_EN),), calls=2, answers=(SKIPPED_ANSWER_EN,)),
    Entry(  # an identifier the request spells as its prefix, then its number
        name="en-spelled-tracking-number",
        request=SPELLED_EN,
        plan=_plan([
            _step("s1", "Track parcel SF1234567890", "query_logistics",
                  {"tracking_no": "SF1234567890"}),
            _step("s2", SUMMARY_EN, None, None, ("s1",))]),
        replies=(text(SPELLED_ANSWER_EN),), calls=2, answers=(SPELLED_ANSWER_EN,)),
    Entry(  # the field asked for by name, stated in another format
        name="en-asks-for-one-field",
        request=TRACKING_EN,
        plan=_plan([
            _step("s1", "Look up order 70412", "query_order", {"order_id": "70412"}),
            _step("s2", SUMMARY_EN, None, None, ("s1",))]),
        replies=(text(TRACKING_ANSWER_EN),), calls=2, answers=(TRACKING_ANSWER_EN,)),
    Entry(
        name="zh-asks-for-two-fields",
        request=PRICE_TRACKING_ZH,
        plan=_plan([
            _step("s1", "查询订单 70412", "query_order", {"order_id": "70412"}),
            _step("s2", SUMMARY_ZH, None, None, ("s1",))]),
        replies=(text(PRICE_TRACKING_ANSWER_ZH),), calls=2,
        answers=(PRICE_TRACKING_ANSWER_ZH,)),
)

def _seed003(goal: str, done: str, constraints: list[str],
             *steps: tuple[str, str, tuple[str, ...], str, list[str]]) -> str:
    """Seed 003's reply: ``{goal, definition_of_done, constraints, steps: [{id, description,
    depends_on, success_criteria, tools_needed}]}`` with ids ``step_N``."""
    return json.dumps({"goal": goal, "definition_of_done": done, "constraints": constraints,
                       "steps": [{"id": sid, "description": description,
                                  "depends_on": list(depends_on), "success_criteria": criteria,
                                  "tools_needed": tools}
                                 for sid, description, depends_on, criteria, tools in steps]},
                      ensure_ascii=False)


def _seed004(*steps: tuple[int, str, str | None, dict[str, Any], list[int]]) -> str:
    """Seed 004's reply: ``{steps: [{step_id, description, tool, args, depends_on}]}`` with
    numbers for ids."""
    return json.dumps({"steps": [
        {"step_id": n, "description": description, "tool": tool, "args": args,
         "depends_on": depends_on} for n, description, tool, args, depends_on in steps]},
        ensure_ascii=False)


SCALE_EN = "Check the order service and suggest how to scale it."
SCALE_ANSWER_EN = ("order-service is degraded: CPU at 93% and p99 latency 1450 ms, most likely "
                   "GC pauses with a saturated thread pool on POST /orders. Scale it out from 4 "
                   "to 6 replicas and profile the hottest endpoint.")
SCALE_ZH = "检查 order 服务并给出扩容建议"
SCALE_ANSWER_ZH = ("order-service 状态为 degraded：CPU 93%，p99 延迟 1450 ms，"
                   "原因可能是 GC 停顿导致 POST /orders 线程池饱和。"
                   "建议从 4 个副本扩到 6 个，并分析最热的接口。")
UNHEALTHY_EN = "Which micro-services are unhealthy right now?"
UNHEALTHY_ANSWER_EN = ("Five of the 15 services are unhealthy: search-service is down, and "
                       "order-service, payment-service, recommendation-service and "
                       "report-service are degraded.")
UNHEALTHY_ZH = "现在哪些微服务不健康？"
UNHEALTHY_ANSWER_ZH = ("15 个服务中有 5 个不健康：search-service 宕机，order-service、"
                       "payment-service、recommendation-service 和 report-service 降级。")
DIAGNOSE_EN = "Check order-service and payment-service, and diagnose any that is unhealthy."
DIAGNOSE_ANSWER_EN = (
    "Both are degraded. order-service: CPU at 93% and p99 1450 ms from GC pauses up to 900 ms "
    "(thread pool saturated on POST /orders). payment-service: error rate 7.8%, with findings "
    "as the diagnosis lists them.")
PROSE_CONDITION_ZH = "检查 order-service 的健康状况，如果不健康就诊断原因"
PROSE_CONDITION_ANSWER_ZH = ("order-service 状态为 degraded（CPU 93%，p99 延迟 1450 ms）。"
                             "诊断：GC 停顿最长 900 ms，POST /orders 的线程池已饱和，"
                             "建议扩容并分析最热的接口。")

_OPS: tuple[Entry, ...] = (
    Entry(
        name="en-ops-seed004",
        request=SCALE_EN,
        plan=_seed004(
            (1, "Check the health of order-service", "check_health",
             {"service": "order-service"}, []),
            (2, "Diagnose what is wrong with order-service", "diagnose",
             {"service": "order-service"}, [1]),
            (3, "Suggest how to scale order-service", "suggest_scale",
             {"service": "order-service"}, [2]),
            (4, SUMMARY_EN, None, {}, [1, 2, 3])),
        replies=(text(SCALE_ANSWER_EN),), calls=2, answers=(SCALE_ANSWER_EN,)),
    Entry(
        name="zh-ops-seed004",
        request=SCALE_ZH,
        plan=_seed004(
            (1, "检查服务健康", "check_health", {"service": "order-service"}, []),
            (2, "诊断异常", "diagnose", {"service": "order-service"}, [1]),
            (3, "给出扩容建议", "suggest_scale", {"service": "order-service"}, [2]),
            (4, SUMMARY_ZH, None, {}, [1, 2, 3])),
        replies=(text(SCALE_ANSWER_ZH),), calls=2, answers=(SCALE_ANSWER_ZH,)),
    Entry(
        name="en-ops-seed003-inferred",
        request=UNHEALTHY_EN,
        plan=_seed003(
            UNHEALTHY_EN, "the unhealthy services are named", ["read-only: change nothing"],
            ("step_1", "List every micro-service", (), "the services are known",
             ["list_services"]),
            ("step_2", "Check the health of every service", ("step_1",),
             "the unhealthy services are known", ["check_health"]),
            ("step_3", SUMMARY_EN, ("step_1", "step_2"), "", [])),
        replies=(_forced("s1", "list_services", {}),
                 _forced("s2", "check_health", {"service": "all"}),
                 text(UNHEALTHY_ANSWER_EN)),
        calls=4, answers=(UNHEALTHY_ANSWER_EN,)),
    Entry(
        name="zh-ops-seed003-inferred",
        request=UNHEALTHY_ZH,
        plan=_seed003(
            UNHEALTHY_ZH, "列出不健康的服务", ["只读：不做任何修改"],
            ("step_1", "列出所有微服务", (), "服务列表已知", ["list_services"]),
            ("step_2", "检查每个服务的健康状况", ("step_1",), "已知哪些服务不健康",
             ["check_health"]),
            ("step_3", SUMMARY_ZH, ("step_1", "step_2"), "", [])),
        replies=(_forced("s1", "list_services", {}),
                 _forced("s2", "check_health", {"service": "all"}),
                 text(UNHEALTHY_ANSWER_ZH)),
        calls=4, answers=(UNHEALTHY_ANSWER_ZH,)),
    Entry(
        name="en-ops-list-condition",
        request=DIAGNOSE_EN,
        plan=_plan([
            _step("s1", "Check the health of order-service and payment-service",
                  "check_health", {"service": ["order-service", "payment-service"]}),
            _step("s2", "Diagnose the unhealthy ones", "diagnose",
                  {"service": "{{s1.unhealthy}}"}, ("s1",), condition="s1.unhealthy != []"),
            _step("s3", SUMMARY_EN, None, None, ("s1", "s2"))]),
        replies=(text(DIAGNOSE_ANSWER_EN),), calls=2, answers=(DIAGNOSE_ANSWER_EN,)),
    Entry(
        name="zh-ops-prose-condition",
        request=PROSE_CONDITION_ZH,
        plan=_plan([
            _step("s1", "检查 order-service 的健康状况", "check_health",
                  {"service": "order-service"}),
            _step("s2", "诊断 order-service 异常的原因", "diagnose", {"service": "order-service"},
                  ("s1",), condition="order-service 的状态不是 healthy"),
            _step("s3", SUMMARY_ZH, None, None, ("s1", "s2"))]),
        replies=(_said("s2", "是"), text(PROSE_CONDITION_ANSWER_ZH)),
        calls=3, answers=(PROSE_CONDITION_ANSWER_ZH,)),
)

SIGNUPS_EN = "How many users signed up in Q1 2026?"
SIGNUPS_ANSWER_EN = "509 users signed up in Q1 2026 (January to March)."
CHURN_ZH = "2026 年第一季度用户流失的主要原因是什么？"
CHURN_ANSWER_ZH = ("2026 年第一季度流失的主要原因是价格（price，94 人），"
                   "其次是缺少功能（missing_feature）和 bugs（各 53 人）。")
POLICY_EN = "What is the return policy for a delivered order, and how long does a refund take?"
POLICY_ANSWER_EN = ("An undamaged item with all its accessories can be returned within 7 days "
                    "after it is signed for. Approved refunds go back to the original payment "
                    "within 1-3 business days (credit cards 3-7).")
VACUUM_ZH = "给家里老人买扫地机器人，有什么推荐？"
VACUUM_ANSWER_ZH = ("推荐比特 S10 Lite（¥1599）：一键启停、语音提示、自动回充，不需要 App，按键大，"
                    "最适合老人使用。")

_DATA: tuple[Entry, ...] = (
    Entry(
        name="en-sql-period",
        request=SIGNUPS_EN,
        plan=_plan([
            _step("s1", "Count the users who signed up in Q1 2026", "run_sql",
                  {"query": "SELECT COUNT(*) AS signups FROM users WHERE signup_date >= "
                            "'2026-01-01' AND signup_date < '2026-04-01'"}),
            _step("s2", SUMMARY_EN, None, None, ("s1",))]),
        replies=(text(SIGNUPS_ANSWER_EN),), calls=2, answers=(SIGNUPS_ANSWER_EN,)),
    Entry(
        name="zh-sql-churn-reasons",
        request=CHURN_ZH,
        plan=_plan([
            _step("s1", "统计 2026 年第一季度各流失原因的人数", "run_sql",
                  {"query": "SELECT reason, COUNT(*) AS n FROM churn_events WHERE churned_at >= "
                            "'2026-01-01' AND churned_at < '2026-04-01' GROUP BY reason "
                            "ORDER BY n DESC LIMIT 3"}),
            _step("s2", SUMMARY_ZH, None, None, ("s1",))]),
        replies=(text(CHURN_ANSWER_ZH),), calls=2, answers=(CHURN_ANSWER_ZH,)),
    Entry(
        name="en-knowledge-policy",
        request=POLICY_EN,
        plan=_plan([
            _step("s1", "Search the knowledge base for the return and refund policy",
                  "search_knowledge", {"query": "return and refund policy"}),
            _step("s2", SUMMARY_EN, None, None, ("s1",))]),
        replies=(text(POLICY_ANSWER_EN),), calls=2, answers=(POLICY_ANSWER_EN,)),
    Entry(
        name="zh-knowledge-vacuum",
        request=VACUUM_ZH,
        plan=_plan([
            _step("s1", "在知识库中搜索适合老人的扫地机器人", "search_knowledge",
                  {"query": "扫地机器人 老人 推荐"}),
            _step("s2", SUMMARY_ZH, None, None, ("s1",))]),
        replies=(text(VACUUM_ANSWER_ZH),), calls=2, answers=(VACUUM_ANSWER_ZH,)),
)

CHEAPER_EN = "Which is cheaper, order 88231 or order 70412, and by how much?"
CHEAPER_ANSWER_EN = ("Order 70412 (Bit AirPure air purifier, ¥1299) is cheaper than order "
                     "88231 (Bit S10 Pro robot vacuum, ¥1999), by ¥700.")
THREE_ORDERS_ZH = "帮我同时查一下订单 88231、70412 和 66001 的状态"
THREE_ORDERS_ANSWER_ZH = ("订单 88231（比特 S10 Pro 扫地机）已签收；"
                          "订单 70412（比特 AirPure 空气净化器）运输中，预计 2026-06-25 送达；"
                          "订单 66001（比特 Buds 2 蓝牙耳机）退款中，退款单号 RF20260620001。")
WEATHER_EN = "What's the weather like in Paris and in Beijing today?"
WEATHER_ANSWER_EN = "Paris has light rain at 9 °C; Beijing is sunny at 2 °C."
FAHRENHEIT_ZH = "北京今天多少度？换算成华氏度是多少？"
FAHRENHEIT_ANSWER_ZH = "北京今天晴，气温 2 °C，换算成华氏度约为 35.6 °F。"

_STEPS: tuple[Entry, ...] = (
    Entry(
        name="en-parallel-lookups-and-reasoning",
        request=CHEAPER_EN,
        plan=_plan([
            _step("s1", "Look up order 88231", "query_order", {"order_id": "88231"}),
            _step("s2", "Look up order 70412", "query_order", {"order_id": "70412"}),
            _step("s3", "Compare the two prices and say which order is cheaper, and by how "
                  "much", None, None, ("s1", "s2")),
            _step("s4", SUMMARY_EN, None, None, ("s3",))]),
        replies=(_said("s3", "Order 70412 costs ¥1299 and order 88231 costs ¥1999: 70412 is "
                       "cheaper by ¥700."),
                 text(CHEAPER_ANSWER_EN)),
        calls=3, answers=(CHEAPER_ANSWER_EN,)),
    Entry(
        name="zh-three-parallel-lookups",
        request=THREE_ORDERS_ZH,
        plan=_plan([
            _step("s1", "查询订单 88231 的状态", "query_order", {"order_id": "88231"}),
            _step("s2", "查询订单 70412 的状态", "query_order", {"order_id": "70412"}),
            _step("s3", "查询订单 66001 的状态", "query_order", {"order_id": "66001"}),
            _step("s4", SUMMARY_ZH, None, None, ("s1", "s2", "s3"))]),
        replies=(text(THREE_ORDERS_ANSWER_ZH),), calls=2, answers=(THREE_ORDERS_ANSWER_ZH,)),
    Entry(
        name="en-weather-own-tools",
        request=WEATHER_EN,
        plan=_plan([
            _step("s1", "Get today's weather in Paris", "get_weather", {"city": "Paris"}),
            _step("s2", "Get today's weather in Beijing", "get_weather", {"city": "Beijing"}),
            _step("s3", SUMMARY_EN, None, None, ("s1", "s2"))]),
        replies=(text(WEATHER_ANSWER_EN),), calls=2, answers=(WEATHER_ANSWER_EN,)),
    Entry(
        name="zh-weather-then-calculation",
        request=FAHRENHEIT_ZH,
        plan=_plan([
            _step("s1", "查询北京今天的天气", "get_weather", {"city": "Beijing"}),
            _step("s2", "把摄氏度换算成华氏度", "calculate",
                  {"expression": "{{s1.celsius}} * 9 / 5 + 32"}, ("s1",)),
            _step("s3", SUMMARY_ZH, None, None, ("s1", "s2"))]),
        replies=(text(FAHRENHEIT_ANSWER_ZH),), calls=2, answers=(FAHRENHEIT_ANSWER_ZH,)),
)

EUROS_EN = "How many US dollars is 100 euros today?"
EUROS_ANSWER_EN = ("100 euros is 108.5 US dollars today (EUR/USD 1.085, from the Fed feed; "
                   "the ECB feed is down for maintenance).")
DOLLARS_ZH = "今天 100 美元能换多少人民币？"
DOLLARS_ANSWER_ZH = ("按今天的汇率 7.12（来自 fed 数据源，ECB 数据源正在维护），"
                     "100 美元可以换 712 元人民币。")


def _rate_plan(pair: str, amount: str, descriptions: tuple[str, str, str]) -> str:
    fetch, convert, summary = descriptions
    return _plan([
        _step("s1", fetch, "fetch_rate", {"pair": pair, "source": "ecb"}),
        _step("s2", convert, "calculate", {"expression": f"{amount} * {{{{s1.rate}}}}"},
              ("s1",)),
        _step("s3", summary, None, None, ("s2",))])


def _rate_replan(pair: str, amount: str, descriptions: tuple[str, str, str]) -> str:
    fetch, convert, summary = descriptions
    return _plan([
        _step("s4", fetch, "fetch_rate", {"pair": pair, "source": "fed"}),
        _step("s5", convert, "calculate", {"expression": f"{amount} * {{{{s4.rate}}}}"},
              ("s4",)),
        _step("s6", summary, None, None, ("s5",))])


_REPLANS: tuple[Entry, ...] = (
    Entry(
        name="en-replan-after-a-feed-fails",
        request=EUROS_EN,
        plan=_rate_plan("EUR/USD", "100", ("Fetch the EUR/USD rate from the ECB feed",
                                           "Convert 100 euros to dollars", SUMMARY_EN)),
        replies=(_rate_replan("EUR/USD", "100", ("Fetch the EUR/USD rate from the Fed feed",
                                                 "Convert 100 euros to dollars", SUMMARY_EN)),
                 text(EUROS_ANSWER_EN)),
        calls=3, answers=(EUROS_ANSWER_EN,)),
    Entry(
        name="zh-replan-after-a-feed-fails",
        request=DOLLARS_ZH,
        plan=_rate_plan("USD/CNY", "100", ("从 ECB 数据源获取美元兑人民币汇率",
                                           "把 100 美元换算成人民币", SUMMARY_ZH)),
        replies=(_rate_replan("USD/CNY", "100", ("改从 fed 数据源获取美元兑人民币汇率",
                                                 "把 100 美元换算成人民币", SUMMARY_ZH)),
                 text(DOLLARS_ANSWER_ZH)),
        calls=3, answers=(DOLLARS_ANSWER_ZH,)),
)

SHANGHAI_EN = "What time is it in Shanghai?"
SHANGHAI_ZH = "上海现在几点？"
ORDER_STATUS_MIXED = "帮我 check 一下 order 88231 的 status"
ORDER_STATUS_ANSWER_MIXED = ("订单 88231（Bit S10 Pro robot vacuum）的 status 是 "
                             "delivered（已签收），签收时间 2026-06-22 15:30。")
GIT_EN = "What was the last commit's message in /srv/repo, and what time is it in Tokyo?"
GIT_ANSWER_EN = ("The last commit's message in /srv/repo is \"Teach the parcel tracker to read "
                 "the carrier's Tokyo timestamps\"; in Tokyo it is now 09:15.")
GIT_ZH = "/srv/repo 仓库最近一次提交的说明是什么？"
GIT_ANSWER_ZH = ("最近一次提交（3e2c02e0749e，2026-12-03）的说明是 \"Teach the parcel tracker to "
                 "read the carrier's Tokyo timestamps\"，即让包裹追踪读懂承运商的东京时间戳。")


def _clock(goal: str, zone: str, description: str, summary: str) -> dict[str, Any]:
    return {"goal": goal, "steps": [
        _step("s1", description, "get_current_time", {"timezone": zone}),
        _step("s2", summary, None, None, ("s1",))]}


_REPLIES: tuple[Entry, ...] = (
    Entry(
        name="en-think-block-and-fence",
        request=SHANGHAI_EN,
        plan="<think>\nOne clock call for Shanghai, then the answer.\n</think>\n```json\n"
             + json.dumps(_clock(SHANGHAI_EN, "Asia/Shanghai", "Get the current time in "
                                 "Shanghai", SUMMARY_EN), indent=2)
             + "\n```\nThis plan reads the clock once.",
        replies=(text("It is 08:15 in Shanghai."),),
        calls=2, answers=("It is 08:15 in Shanghai.",)),
    Entry(
        name="zh-prose-around-the-json",
        request=SHANGHAI_ZH,
        plan="好的，计划如下：\n" + json.dumps(_clock(SHANGHAI_ZH, "Asia/Shanghai",
                                                "查询上海现在的时间", SUMMARY_ZH),
                                         ensure_ascii=False) + "\n以上是完整的计划。",
        replies=(text("上海现在是 08:15。"),), calls=2, answers=("上海现在是 08:15。",)),
    Entry(
        name="mixed-request-mixed-steps",
        request=ORDER_STATUS_MIXED,
        plan=_plan([
            _step("s1", "Look up order 88231 的状态", "query_order", {"order_id": "88231"}),
            _step("s2", "综合结果 and answer the user", None, None, ("s1",))]),
        replies=(text(ORDER_STATUS_ANSWER_MIXED),), calls=2,
        answers=(ORDER_STATUS_ANSWER_MIXED,)),
    Entry(
        name="en-text-result-and-clock",
        request=GIT_EN,
        plan=_plan([
            _step("s1", "Read the last commit of /srv/repo", "git__git_log",
                  {"repo_path": "/srv/repo", "max_count": 1}),
            _step("s2", "Get the current time in Tokyo", "get_current_time",
                  {"timezone": "Asia/Tokyo"}),
            _step("s3", SUMMARY_EN, None, None, ("s1", "s2"))]),
        replies=(text(GIT_ANSWER_EN),), calls=2, answers=(GIT_ANSWER_EN,)),
    Entry(
        name="zh-text-result",
        request=GIT_ZH,
        plan=_plan([
            _step("s1", "读取 /srv/repo 最近一次提交", "git__git_log",
                  {"repo_path": "/srv/repo", "max_count": 1}),
            _step("s2", SUMMARY_ZH, None, None, ("s1",))]),
        replies=(text(GIT_ANSWER_ZH),), calls=2, answers=(GIT_ANSWER_ZH,)),
)

TOKYO_EN = "What time is it in Tokyo?"
ORDER_ZH = "订单 88231 现在是什么状态？"
ORDER_ANSWER_ZH = "订单 88231（比特 S10 Pro 扫地机）已于 2026-06-22 15:30 签收。"
LOGISTICS_ANSWER_ZH = ("顺丰运单 SF1234567890 的最新状态：2026-06-22 15:30 在北京已签收，"
                       "签收人是本人。")
LOOKUP_EN = "Look up order 88231 for me."
LOOKUP_ANSWER_EN = ("Order 88231 (Bit S10 Pro robot vacuum, ¥1999) was delivered on "
                    "2026-06-22; in Shanghai it is now 08:15.")
TRACK_ZH = "查一下订单 70412"
TRACK_ANSWER_ZH = ("订单 70412（比特 AirPure 空气净化器）运输中，圆通运单 YT9876543210：2026-06-23 "
                   "06:45 到达郑州转运中心，预计 2026-06-25 送达。")
PARCEL_CHECKPOINT_ANSWER_EN = PARCEL_ANSWER_EN
PHASED_EN = "First check the health of order-service, then suggest how to scale it."
PHASED_ANSWER_EN = ("order-service is degraded (CPU 93%, p99 1450 ms); scale it out from 4 to 6 "
                    "replicas.")
PHASED_ZH = "先检查 payment-service 的健康状况，再给出扩容建议"
PHASED_ANSWER_ZH = ("payment-service 状态为 degraded（错误率 7.8%），但错误来自依赖而不是负载，"
                    "建议保持 3 个副本不变。")


def _phases(goal: str, *phases: tuple[str, str, str, list[str], str | None]) -> str:
    return json.dumps({"goal": goal, "phases": [
        {"id": pid, "title": title, "goal": phase_goal, "depends_on": after,
         **({"done_when": done} if done else {})}
        for pid, title, phase_goal, after, done in phases]}, ensure_ascii=False)


_LATER: tuple[Entry, ...] = (
    Entry(
        name="en-follow-up",
        request=TOKYO_EN,
        plan=_plan(_clock(TOKYO_EN, "Asia/Tokyo", "Get the current time in Tokyo",
                          SUMMARY_EN)),
        then=(("follow_up", "And what time is it in London?"),),
        replies=(text("It is 09:15 in Tokyo."),
                 _plan([_step("s3", "Get the current time in London", "get_current_time",
                              {"timezone": "Europe/London"}),
                        _step("s4", "Answer the follow-up", None, None, ("s3",))]),
                 text("In London it is 00:15 on 7 December.")),
        calls=4, answers=("It is 09:15 in Tokyo.", "In London it is 00:15 on 7 December.")),
    Entry(
        name="zh-follow-up",
        request=ORDER_ZH,
        plan=_plan([_step("s1", "查询订单 88231 的状态", "query_order", {"order_id": "88231"}),
                    _step("s2", SUMMARY_ZH, None, None, ("s1",))]),
        then=(("follow_up", "再帮我查一下它的物流到哪了"),),
        replies=(text(ORDER_ANSWER_ZH),
                 _plan([_step("s3", "根据 s1 的运单号查询物流", "query_logistics",
                              {"tracking_no": "{{s1.tracking_no}}"}, ("s1",)),
                        _step("s4", "回答追加的问题", None, None, ("s3",))]),
                 text(LOGISTICS_ANSWER_ZH)),
        calls=4, answers=(ORDER_ANSWER_ZH, LOGISTICS_ANSWER_ZH)),
    Entry(
        name="en-refine-adds-a-step",
        request=LOOKUP_EN,
        plan=_plan([_step("s1", "Look up order 88231", "query_order", {"order_id": "88231"}),
                    _step("s2", SUMMARY_EN, None, None, ("s1",))]),
        then=(("refine", "Also tell me the current time in Shanghai"),),
        replies=(_plan([_step("s1", "Look up order 88231", "query_order",
                              {"order_id": "88231"}),
                        _step("s3", "Get the current time in Shanghai", "get_current_time",
                              {"timezone": "Asia/Shanghai"}),
                        _step("s2", SUMMARY_EN, None, None, ("s1", "s3"))]),
                 text(LOOKUP_ANSWER_EN)),
        calls=3, answers=(LOOKUP_ANSWER_EN,)),
    Entry(
        name="zh-refine-adds-a-step",
        request=TRACK_ZH,
        plan=_plan([_step("s1", "查询订单 70412", "query_order", {"order_id": "70412"}),
                    _step("s2", SUMMARY_ZH, None, None, ("s1",))]),
        then=(("refine", "再查一下它的物流"),),
        replies=(_plan([_step("s1", "查询订单 70412", "query_order", {"order_id": "70412"}),
                        _step("s3", "根据 s1 的运单号查询物流", "query_logistics",
                              {"tracking_no": "{{s1.tracking_no}}"}, ("s1",)),
                        _step("s2", SUMMARY_ZH, None, None, ("s1", "s3"))]),
                 text(TRACK_ANSWER_ZH)),
        calls=3, answers=(TRACK_ANSWER_ZH,)),
    Entry(
        name="en-adaptive-checkpoint-keeps-the-plan",
        request=PARCEL_EN,
        plan=_plan([
            _step("s1", "Look up order 70412", "query_order", {"order_id": "70412"}),
            _step("s2", "Track its parcel", "query_logistics",
                  {"tracking_no": "{{s1.tracking_no}}"}, ("s1",)),
            _step("s3", SUMMARY_EN, None, None, ("s2",))]),
        options={"checkpoint": "adaptive"},
        replies=(json.dumps({"needs_replan": False, "can_finish_early": False,
                             "reason": "The tracking number is known: track the parcel."}),
                 text(PARCEL_CHECKPOINT_ANSWER_EN)),
        calls=3, answers=(PARCEL_CHECKPOINT_ANSWER_EN,)),
    Entry(
        name="en-phases",
        request=PHASED_EN,
        hierarchical=True,
        plan=_phases(PHASED_EN,
                     ("p1", "Check", "Check the health of order-service", [],
                      "the health of order-service has been checked"),
                     ("p2", "Scale", "Suggest how to scale order-service and answer",
                      ["p1"], None)),
        replies=(_plan([_step("s1", "Check the health of order-service", "check_health",
                              {"service": "order-service"}, phase="p1")]),
                 json.dumps({"met": True, "reason": "s1 returned the health of order-service"}),
                 _plan([_step("s2", "Suggest how to scale order-service", "suggest_scale",
                              {"service": "order-service"}, ("s1",), phase="p2"),
                        _step("s3", SUMMARY_EN, None, None, ("s1", "s2"), phase="p2")]),
                 text(PHASED_ANSWER_EN)),
        calls=5, answers=(PHASED_ANSWER_EN,)),
    Entry(
        name="zh-phases",
        request=PHASED_ZH,
        hierarchical=True,
        plan=_phases(PHASED_ZH,
                     ("p1", "检查", "检查 payment-service 的健康状况", [], None),
                     ("p2", "建议", "给出 payment-service 的扩容建议并回答", ["p1"], None)),
        replies=(_plan([_step("s1", "检查 payment-service 的健康状况", "check_health",
                              {"service": "payment-service"}, phase="p1")]),
                 _plan([_step("s2", "给出 payment-service 的扩容建议", "suggest_scale",
                              {"service": "payment-service"}, ("s1",), phase="p2"),
                        _step("s3", SUMMARY_ZH, None, None, ("s1", "s2"), phase="p2")]),
                 text(PHASED_ANSWER_ZH)),
        calls=4, answers=(PHASED_ANSWER_ZH,)),
)

CORPUS: tuple[Entry, ...] = (*_BUILTIN, *_SHOP, *_OPS, *_DATA, *_STEPS, *_REPLANS, *_REPLIES,
                             *_LATER)
