"""The plan-quality suite: requests over the demo tools, each with a scorer that checks facts.

A scorer reads the run's outcome (final status and answer) and the demo databases under
the current PLANBOARD_HOME after the run, and returns the problems it found (none: the task
passed). The expected facts are read from the databases at scoring time (a refund's id, the
unhealthy services, a churn count), never from the wording of the answer.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from core.tools.toolsets import default_registry
from demo.analytics import ensure_analytics_db
from demo.ops import check_health, suggest_scale
from demo.scenarios import get_scenario
from demo.shop import ACTIVE_REFUND, RETURN_WINDOW_DAYS, ensure_shop_db

__all__ = [
    "MULTI_STAGE",
    "TASKS",
    "Outcome",
    "Task",
    "active_refunds",
    "get_tasks",
    "mentions_number",
]

_TRACKING = re.compile(r"\b[A-Z]{2}\d{8,}\b")  # a carrier's tracking number ("YT9876543210")
# how an order status may be written in an answer (both languages)
_STATUS_WORDS = {
    "delivered": ("delivered", "已签收", "签收", "signed for", "已送达", "已到达", "已经到达",
                  "has arrived"),
    "in_transit": ("in transit", "in_transit", "运输中", "在途", "on its way", "on the way"),
    "refunding": ("refunding", "退款中"),
}
_Q1 = ("2026-01-01", "2026-04-01")


@dataclass(frozen=True)
class Outcome:
    """How a run ended: its final status and its answer."""

    status: str
    answer: str = ""


Scorer = Callable[[Outcome], list[str]]


@dataclass(frozen=True)
class Task:
    """One benchmark request and the scorer of its outcome."""

    id: str
    lang: str
    kind: str
    request: str
    score: Scorer


# ---- reading the demo databases ---------------------------------------------------------


def _shop_rows(sql: str, *params: Any) -> list[sqlite3.Row]:
    conn = sqlite3.connect(ensure_shop_db())
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def active_refunds(order_id: str) -> list[str]:
    """The ids of the order's refunds that are processing or completed."""
    rows = _shop_rows("SELECT refund_id FROM refunds WHERE order_id = ? AND status IN (?, ?)",
                      order_id, *ACTIVE_REFUND)
    return [row["refund_id"] for row in rows]


def _order(order_id: str) -> sqlite3.Row:
    return _shop_rows("SELECT * FROM orders WHERE order_id = ?", order_id)[0]


def _expected_delivery_words(order_id: str) -> tuple[str, ...]:
    """The carrier's expected delivery date as answers write it (none once delivered)."""
    expected = default_registry({}).call("query_order", {"order_id": order_id})
    if not expected["expected_delivery"]:
        return ()
    day = date.fromisoformat(expected["expected_delivery"])
    return (day.isoformat(), f"{day:%B} {day.day}", f"{day:%b} {day.day}",
            f"{day.month}月{day.day}日", f"{day.month}月{day.day}号")


def _latest_location(order_id: str) -> tuple[str, ...]:
    """The parcel's last location as answers write it: the place's own name, and the one
    its English description gives ("arrived at Zhengzhou hub")."""
    rows = _shop_rows("SELECT e.location, e.description FROM logistics_events e JOIN orders o "
                      "ON o.tracking_no = e.tracking_no WHERE o.order_id = ? ORDER BY e.seq "
                      "DESC LIMIT 1", order_id)
    english = re.findall(r"\b(?:at|in) ([A-Z][a-z]+)", rows[0]["description"])
    return (rows[0]["location"], *english)


def _tracking_no(order_id: str) -> str:
    return _order(order_id)["tracking_no"]


def _analytics_value(sql: str) -> Any:
    conn = sqlite3.connect(ensure_analytics_db())
    try:
        return conn.execute(sql).fetchone()
    finally:
        conn.close()


# ---- facts in an answer -----------------------------------------------------------------


def _plain(text: str) -> str:
    """Lower case, thousands separators dropped ("1,234" reads as 1234)."""
    return re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", (text or "").lower())


def mentions_number(answer: str, value: float) -> bool:
    """Whether ``value`` appears in ``answer`` as a whole number (not inside another one)."""
    number = f"{value:g}"
    pattern = rf"(?<![\d.]){re.escape(number)}(?:\.0+)?(?!\.?\d)"
    return re.search(pattern, _plain(answer)) is not None


def _any(answer: str, words: tuple[str, ...] | list[str]) -> bool:
    text = _plain(answer)
    return any(word.lower() in text for word in words)


def _completed(outcome: Outcome) -> list[str]:
    return [] if outcome.status == "completed" else [f"run ended {outcome.status}"]


def _needs(outcome: Outcome, fact: str, words: tuple[str, ...] | list[str]) -> list[str]:
    return [] if _any(outcome.answer, words) else [f"answer lacks {fact} ({' / '.join(words)})"]


def _refunds_exactly(order_id: str, count: int) -> list[str]:
    found = active_refunds(order_id)
    return [] if len(found) == count else [
        f"order {order_id} has {len(found)} active refunds, expected {count}"]


# ---- scorers ----------------------------------------------------------------------------


def _order_lookup(order_id: str) -> Scorer:
    """A status question: the order's status from the database, and no refund created."""

    def score(outcome: Outcome) -> list[str]:
        order = _order(order_id)
        words = _STATUS_WORDS.get(order["status"], (order["status"],))
        if order["signed_at"]:
            words = (*words, order["signed_at"][:10])
        words = (*words, *_expected_delivery_words(order_id))  # "when will it arrive"
        before = 1 if order_id == "66001" else 0  # the seeded refund of 66001
        return [*_completed(outcome), *_needs(outcome, "the order's status", words),
                *_refunds_exactly(order_id, before)]

    return score


def _order_location(order_id: str) -> Scorer:
    """The parcel's last location, and no other tracking number than the order's: an answer
    from an invented id would name a place the order's parcel never passed."""

    def score(outcome: Outcome) -> list[str]:
        places = _latest_location(order_id)
        real = _tracking_no(order_id)
        invented = sorted({found for found in _TRACKING.findall(outcome.answer or "")
                           if found != real})
        return [*_completed(outcome), *_needs(outcome, "the parcel's last location", places),
                *([f"answer names tracking numbers the order does not have: "
                   f"{', '.join(invented)}"] if invented else [])]

    return score


def _sum_and_time(expression_value: float, zone: str) -> Scorer:
    """A computed number and the current time in ``zone`` (its hour, or the hour before when
    the run crossed into this one)."""

    def score(outcome: Outcome) -> list[str]:
        now = datetime.now(ZoneInfo(zone))
        hours = {now.hour, (now.hour - 1) % 24}
        shown = any(re.search(rf"(?<!\d){hour}:\d\d|(?<!\d){hour:02d}:\d\d", outcome.answer or "")
                    for hour in hours)
        return [*_completed(outcome),
                *([] if mentions_number(outcome.answer, expression_value)
                  else [f"answer lacks {expression_value:g}"]),
                *([] if shown else [f"answer lacks the time in {zone} (hour {now.hour})"])]

    return score


def _refund_made(order_id: str, *extra: str) -> Scorer:
    """Exactly one active refund for the order, its id in the answer (and ``extra`` facts)."""

    def score(outcome: Outcome) -> list[str]:
        problems = [*_completed(outcome), *_refunds_exactly(order_id, 1)]
        refunds = active_refunds(order_id)
        if refunds:
            problems += _needs(outcome, "the refund id", refunds)
        for fact in extra:
            problems += _needs(outcome, fact, (fact,))
        return problems

    return score


def _no_refund(order_id: str) -> Scorer:
    """The condition is false: no refund, the order's status unchanged by the run."""

    def score(outcome: Outcome) -> list[str]:
        status = _order(order_id)["status"]
        changed = [] if status == "in_transit" else [f"order {order_id} is now {status}"]
        return [*_completed(outcome), *_refunds_exactly(order_id, 0), *changed]

    return score


def _policy_days(outcome: Outcome) -> list[str]:
    found = mentions_number(outcome.answer, RETURN_WINDOW_DAYS)
    return [*_completed(outcome),
            *([] if found else [f"answer lacks the {RETURN_WINDOW_DAYS}-day window"])]


def _unhealthy_named(outcome: Outcome) -> list[str]:
    unhealthy = check_health.function("all")["unhealthy"]
    text = _plain(outcome.answer)  # "search service" names search-service too
    missing = [name for name in unhealthy
               if name not in text and name.replace("-", " ") not in text]
    return [*_completed(outcome),
            *([f"answer misses unhealthy services: {', '.join(missing)}"] if missing else [])]


def _replicas(service: str) -> Scorer:
    def score(outcome: Outcome) -> list[str]:
        target = suggest_scale.function(service)["suggested_replicas"]
        found = mentions_number(outcome.answer, target)
        return [*_completed(outcome), *([] if found else [f"answer lacks {target} replicas"])]

    return score


def _q1_churn_total(outcome: Outcome) -> list[str]:
    (count,) = _analytics_value("SELECT COUNT(*) FROM churn_events WHERE churned_at >= "
                                f"'{_Q1[0]}' AND churned_at < '{_Q1[1]}'")
    found = mentions_number(outcome.answer, count)
    return [*_completed(outcome), *([] if found else [f"answer lacks the count {count}"])]


def _q1_top_reason(outcome: Outcome) -> list[str]:
    reason, count = _analytics_value(
        "SELECT reason, COUNT(*) AS n FROM churn_events WHERE churned_at >= "
        f"'{_Q1[0]}' AND churned_at < '{_Q1[1]}' GROUP BY reason ORDER BY n DESC LIMIT 1")
    found = mentions_number(outcome.answer, count)
    return [*_completed(outcome),
            *([] if found else [f"answer lacks the count {count} of the top reason {reason}"])]


def _review_facts(outcome: Outcome) -> list[str]:
    """A review in stages: every unhealthy service named, and the top churn reason's count."""
    return list(dict.fromkeys([*_unhealthy_named(outcome), *_q1_top_reason(outcome)]))


def _stages_scaled(outcome: Outcome) -> list[str]:
    """Health, diagnosis and scaling in stages: the unhealthy services and the replicas."""
    return list(dict.fromkeys([*_unhealthy_named(outcome),
                               *_replicas("order-service")(outcome)]))


# ---- the suite --------------------------------------------------------------------------

_SHOP, _VACUUM = get_scenario("shop-refund"), "S10 Lite"
_OPS = get_scenario("ops-health")
_REVIEW = get_scenario("ops-quarterly-review")

TASKS: list[Task] = [
    Task("order-eta-en", "en", "lookup",
         "Check order 70412 and tell me when it will arrive.", _order_lookup("70412")),
    Task("order-status-zh", "zh", "lookup",
         "帮我查一下订单 88231 到了没有？", _order_lookup("88231")),
    Task("logistics-zh", "zh", "lookup",
         "订单 70412 的快递现在到哪里了？", _order_location("70412")),
    Task("parcel-en", "en", "lookup",
         "Where is the parcel for order 70412 right now?", _order_location("70412")),
    Task("calc-time-en", "en", "multi-clause",
         "What is 1999 * 0.9 + 15, and what time is it in Tokyo right now?",
         _sum_and_time(1814.1, "Asia/Tokyo")),
    Task("policy-en", "en", "knowledge",
         "How many days do I have to return an item after it is delivered?", _policy_days),
    Task("refund-delivered-en", "en", "conditional",
         "Check whether order 88231 has been delivered, and if it has, refund it because it "
         "arrived broken.", _refund_made("88231")),
    Task("refund-in-transit-zh", "zh", "conditional",
         "看看订单 70412 签收了没有，如果已经签收就帮我申请退款。", _no_refund("70412")),
    Task("refund-existing-en", "en", "side effect",
         "Please refund order 66001, the left earbud is silent.", _refund_made("66001")),
    Task("seed-000-en", "en", "multi-clause", _SHOP.request_en, _refund_made("88231", _VACUUM)),
    Task("seed-000-zh", "zh", "multi-clause", _SHOP.request_zh, _refund_made("88231", _VACUUM)),
    Task("ops-unhealthy-en", "en", "ops",
         "Which of our services are degraded or down right now, and what is the likely cause "
         "of each?", _unhealthy_named),
    Task("ops-report-zh", "zh", "ops", _OPS.request_zh, _unhealthy_named),
    Task("ops-scale-en", "en", "ops",
         "How many replicas should order-service run, according to the scaling suggestion?",
         _replicas("order-service")),
    Task("churn-count-en", "en", "analytics",
         "How many subscriptions were cancelled in the first quarter of 2026 (January to "
         "March)? Count the churn events.", _q1_churn_total),
    Task("churn-reason-zh", "zh", "analytics",
         "2026 年第一季度用户流失的最主要原因是什么？因为这个原因流失的有多少人？", _q1_top_reason),
    Task("review-stages-en", "en", "multi-stage", _REVIEW.request_en, _review_facts),
    Task("review-stages-zh", "zh", "multi-stage", _REVIEW.request_zh, _review_facts),
    Task("ops-stages-en", "en", "multi-stage",
         "First check the health of every service, then diagnose the unhealthy ones, then "
         "suggest how many replicas order-service needs, and finally write a short summary.",
         _stages_scaled),
]
MULTI_STAGE = [task.id for task in TASKS if task.kind == "multi-stage"]
"""The tasks in stages: ``python -m bench.quality --compare-modes`` runs them flat and in
phases."""


def get_tasks(ids: list[str] | None = None) -> list[Task]:
    """The tasks named in ``ids`` (all of them for None); KeyError names the known ids."""
    if not ids:
        return list(TASKS)
    by_id = {task.id: task for task in TASKS}
    unknown = [task_id for task_id in ids if task_id not in by_id]
    if unknown:
        raise KeyError(f"unknown task {', '.join(unknown)}; tasks are: {', '.join(by_id)}")
    return [by_id[task_id] for task_id in ids]
