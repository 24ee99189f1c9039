"""How the demo reads a request for the engine: what it names, its route, what to ask first.

The engine asks the packs for domain readings where a rule needs them (core.planning.packs):
:func:`read` gives the things a text names (orders, tracking numbers, services), the topics
it is about (the cue families specific enough to tell two parts of a request apart), what
it asks the demo's tools to do, and what it names that a demo lookup finds. :func:`route`
is the demo's offline routing of a request, :func:`questions` the clarifying questions
the offline planner needs answered before it can draft.
"""

from __future__ import annotations

import re

from core.base.language import detect_language
from core.base.messages import Both
from core.planning.clauses import split_clauses
from core.planning.packs import Need, Reading
from core.planning.router import has_condition, is_question
from core.planning.routes import Route, ruled
from core.tools.registry import ToolRegistry
from demo.messages import in_language
from demo.offline.text import cues, extract_entities

__all__ = ["MAX_QUESTIONS", "questions", "read", "route"]

MAX_QUESTIONS = 3
# Families specific enough to say what a clause is about ("health" matches any "check").
_TOPICS = frozenset({
    "refund", "policy", "logistics", "ops", "diagnose", "scale", "analytics", "churn",
    "schema", "recommend", "research", "time", "calc_words", "product",
})
_ACTION_FAMILIES = frozenset({"analytics", "research", "calc", "time"})
_HEAVY = {"analytics", "research", "fleet"}
_SERVICES = re.compile(r"\bservices?\b|micro-?services?|服务", re.IGNORECASE)
# what the knowledge base answers: a product or a shop policy (the "product" cues), or a
# pick; not the "recommend" family, whose "want" fits "what the user wants"
_PICKS = re.compile(r"推荐|选购|选哪|\brecommend", re.IGNORECASE)
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


def read(text: str) -> Reading:
    """The demo's reading of ``text`` (see the module's docstring)."""
    found = extract_entities(text)
    flags = cues(text)
    needs = []
    if found.orders:
        needs.append(Need(Both(en="an order number", zh="订单号"), ("query_order",)))
    if found.tracking:
        needs.append(Need(Both(en="a tracking number", zh="运单号"), ("query_logistics",)))
    if _SERVICES.search(text):
        needs.append(Need(Both(en="services", zh="服务"),
                          ("list_services", "check_health", "diagnose", "suggest_scale")))
    if "product" in flags or _PICKS.search(text):
        needs.append(Need(Both(en="products or policies", zh="商品或政策"),
                          ("search_knowledge",)))
    asks: set[str] = set()
    for clause in split_clauses(text):
        asks |= _profile(clause)[0]
    return Reading(
        things={"order": tuple(found.orders), "tracking": tuple(found.tracking),
                "service": tuple(found.services)},
        topics=frozenset(flags & _TOPICS), asks=tuple(sorted(asks)), needs=tuple(needs))


def route(request: str, registry: ToolRegistry) -> Route | None:
    """Decide the mode with the demo's rules: ids, actions, conditions and clauses."""
    text = (request or "").strip()
    clauses = split_clauses(text)
    if not clauses:
        return ruled("plan", "empty")
    parts = [_profile(clause) for clause in clauses]
    actions = set().union(*(p[0] for p in parts))
    busy = [clause for clause, p in zip(clauses, parts, strict=True) if p[0] or p[1]]
    if has_condition(text):
        return ruled("plan", "condition")
    if "refund" in actions:
        return ruled("plan", "side_effect")
    if {"order", "logistics"} <= actions and not extract_entities(text).tracking:
        return ruled("plan", "chained")
    if len(busy) >= 2 and (actions or not all(p[1] for p in parts)):
        return ruled("plan", "parts", count=str(len(busy)))
    if actions & _HEAVY or len(actions) > 2:
        return ruled("plan", "analysis")
    if actions:
        return ruled("direct", "lookup", names=", ".join(sorted(actions)))
    if any(p[1] for p in parts):
        return ruled("knowledge", "knowledge")
    if len(clauses) >= 2:
        return ruled("plan", "several")
    return ruled("direct", "simple")


def _profile(clause: str) -> tuple[set[str], bool]:
    """(actions the clause asks for, whether it reads as a knowledge question)."""
    flags = cues(clause)
    found = extract_entities(clause)
    actions: set[str] = set()
    if found.orders:
        actions.add("order")
    if found.tracking or "logistics" in flags:  # "when it arrives" tracks the order named
        actions.add("logistics")
    if "refund" in flags and "policy" not in flags and not is_question(clause):
        actions.add("refund")
    if found.services:
        actions.add("health")
        actions.update(flags & {"diagnose", "scale"})
    elif "ops" in flags:
        actions.add("fleet")  # every service: list, check, then act on the unhealthy ones
    if found.sql:
        actions.add("analytics")
    actions.update(flags & _ACTION_FAMILIES)
    knowledge = bool(flags & {"knowledge", "policy", "product"}) or is_question(clause)
    return actions, knowledge and not actions


def questions(request: str, registry: ToolRegistry) -> list[str]:
    """What the request must answer before the rules can draft it (usually nothing): the
    order number when an order action names none, a budget when a recommendation says the
    price matters but gives no figure."""
    text = request or ""
    lang = detect_language(text)
    asked: list[str] = []
    everything = extract_entities(text)
    has_order_tools = "query_order" in registry or "apply_refund" in registry
    for clause in split_clauses(text):
        flags = cues(clause)
        refund_action = "refund" in flags and "policy" not in flags
        wants_order = refund_action or bool(_ORDER_ACTION.search(clause))
        if (has_order_tools and wants_order and not everything.orders
                and not everything.tracking):
            asked.append(in_language(lang, "Which order is it? Please give the order number (for "
                                     "example 88231).",
                                     "请提供订单号（例如 88231），这样才能查询或办理。"))
        if (_RECOMMEND.search(clause) and _PRICE_MATTERS.search(clause)
                and everything.budget is None and not everything.numbers):
            asked.append(in_language(lang, "What is your budget, roughly?", "您的预算大概是多少？"))
    return list(dict.fromkeys(asked))[:MAX_QUESTIONS]
