"""Clarifying questions: ask for what a plan cannot do without, instead of guessing.

Offline, conservative rules ask for an order number when an order action names none, and
for a budget when a recommendation says the price matters but gives no figure. With an
LLM, the planner may answer ``{"questions": [...]}`` instead of a plan
(:data:`core.prompts.adaptive.CLARIFY_INSTRUCTION`), read by :func:`parse_questions`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from core.base.language import detect_language, pick
from core.errors import PlanParseError
from core.planning.offline.text import cues, extract_entities, split_clauses
from core.prompts.adaptive import decision_json
from core.tools.registry import ToolRegistry

__all__ = [
    "MAX_QUESTIONS",
    "merge_answers",
    "needs_clarification_offline",
    "parse_questions",
]

logger = logging.getLogger(__name__)

MAX_QUESTIONS = 3
_ORDER_ACTION = re.compile(
    r"我的订单|这个订单|那个订单|订单.{0,8}(?:到了|状态|物流|到哪|签收)|(?:查|看).{0,4}订单"
    r"|\bmy order\b|\bthe order\b|\border status\b|\bwhere is my\b", re.IGNORECASE,
)
_PRICE_MATTERS = re.compile(
    r"预算|价位|便宜|性价比|实惠|不要太贵|别太贵|budget|cheap|affordable|price range|not too "
    r"expensive|value for money", re.IGNORECASE,
)
_RECOMMEND = re.compile(r"推荐|想买|想要|要买|选购|买一?[台个款]|recommend|suggest|buy|looking for",
                        re.IGNORECASE)


def needs_clarification_offline(request: str, registry: ToolRegistry) -> list[str]:
    """Questions the request must answer before it can be planned (usually none)."""
    text = request or ""
    lang = detect_language(text)
    questions: list[str] = []
    everything = extract_entities(text)
    has_order_tools = "query_order" in registry or "apply_refund" in registry
    for clause in split_clauses(text):
        flags = cues(clause)
        refund_action = "refund" in flags and "policy" not in flags
        wants_order = refund_action or bool(_ORDER_ACTION.search(clause))
        if (has_order_tools and wants_order and not everything.orders
                and not everything.tracking):
            questions.append(pick(lang, "请提供订单号（例如 88231），这样才能查询或办理。",
                                "Which order is it? Please give the order number (for "
                                "example 88231)."))
        if (_RECOMMEND.search(clause) and _PRICE_MATTERS.search(clause)
                and everything.budget is None and not everything.numbers):
            questions.append(pick(lang, "您的预算大概是多少？", "What is your budget, roughly?"))
    return list(dict.fromkeys(questions))[:MAX_QUESTIONS]


def parse_questions(text: str) -> list[str] | None:
    """The questions of a ``{"questions": [...]}`` reply, or None when it is not one.

    A reply that holds a plan (``"steps"``) is never read as questions.
    """
    try:
        data = decision_json(text or "", ["questions", "steps"], what="planner")
    except PlanParseError:
        return None
    if "steps" in data:
        return None
    raw = data.get("questions")
    if not isinstance(raw, list):
        return None
    questions = [str(q).strip() for q in raw if isinstance(q, (str, int, float)) and str(q).strip()]
    return questions[:MAX_QUESTIONS] or None


def merge_answers(request: str, questions: Sequence[str], answers: Sequence[str]) -> str:
    """The request with the person's answers added inline (unanswered questions left out).

    Inline and without the questions' own wording (which may hold examples such as an
    order number), so that the offline planner reads the answers as part of the request.
    """
    lang = detect_language(request)
    given = [a.strip() for _, a in zip(questions, answers, strict=False) if a and a.strip()]
    if not given:
        return request
    base = request.rstrip().rstrip("。.")
    return pick(lang, f"{base}（{'，'.join(given)}）", f"{base} ({', '.join(given)})")
