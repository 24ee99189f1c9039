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
)

CORPUS: tuple[Entry, ...] = (*_BUILTIN, *_SHOP)
