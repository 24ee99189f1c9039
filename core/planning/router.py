"""The router: decide whether a request gets a knowledge answer, a direct answer, or a plan.

Seed 000's AgentRouter and seed 004's route_mode: knowledge questions take a fixed
retrieve-then-answer workflow (no plan), simple lookups take a short ReAct loop of one to
three read-only tool calls, and everything larger is planned. This module only decides
(core.runs.answers answers). ``route_with_llm`` asks the model in one plain call;
``route_offline`` decides with rules; ``route`` picks by engine.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from core.base.language import detect_language
from core.base.usage import Usage
from core.errors import PlanParseError, ToolError
from core.llm.engine import Engine
from core.planning.choices import ROUTE_MODES
from core.planning.offline.text import clean_query, cues, extract_entities, split_clauses
from core.planning.routes import ROUTE_ALIASES, ROUTE_REASONS, Route, reason_text, ruled
from core.prompts.adaptive import ROUTER_SYSTEM, language_name, parse_reply
from core.tools.registry import ToolRegistry

__all__ = [
    "KNOWLEDGE_TOOL",
    "ROUTE_REASONS",
    "Route",
    "decide_route",
    "person_route",
    "reason_text",
    "route",
    "route_offline",
    "route_with_llm",
]

logger = logging.getLogger(__name__)

KNOWLEDGE_TOOL = "search_knowledge"
_CONDITIONAL = re.compile(
    r"如果|假如|要是|若是|的话|否则|不然|就(?:退|帮|给|申请)|\bif\b|\bunless\b|\botherwise\b"
    r"|\bin case\b|\bwhen it\b(?!\s+(?:arrives|will arrive|gets here|is delivered))",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"[?？]|什么|怎么|如何|多久|几天|哪些|哪款|哪个|是否|能不能|可以.*吗|吗$|\bwhat\b|\bhow\b"
    r"|\bwhich\b|\bwhy\b|\bcan i\b|\bis it\b|\bdoes\b", re.IGNORECASE,
)
_ACTION_FAMILIES = ("health", "diagnose", "scale", "analytics", "research", "calc", "time")
_HEAVY = {"analytics", "research", "fleet"}


# ---- deciding ------------------------------------------------------------------------------


def route_offline(request: str) -> Route:
    """Decide the mode with rules: ids, actions, conditions and clauses of the request."""
    text = (request or "").strip()
    clauses = split_clauses(text)
    if not clauses:
        return ruled("plan", "empty")
    parts = [_profile(clause) for clause in clauses]
    actions = set().union(*(p[0] for p in parts))
    busy = [clause for clause, p in zip(clauses, parts, strict=True) if p[0] or p[1]]
    if _CONDITIONAL.search(text):
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
    if "refund" in flags and "policy" not in flags and not _QUESTION.search(clause):
        actions.add("refund")
    if found.services:
        actions.add("health")
        actions.update(flags & {"diagnose", "scale"})
    elif "ops" in flags:
        actions.add("fleet")  # every service: list, check, then act on the unhealthy ones
    if found.sql:
        actions.add("analytics")
    actions.update(flags & {"analytics", "research", "calc", "time"} & set(_ACTION_FAMILIES))
    knowledge = bool(flags & {"knowledge", "policy", "product"}) or bool(_QUESTION.search(clause))
    return actions, knowledge and not actions


def route_with_llm(request: str, model: Any, registry: ToolRegistry | None = None
                   ) -> tuple[Route, Usage]:
    """One plain chat call (role planner, no tools, JSON) answering {"mode", "reason"}.

    Raises PlanParseError (keeping the raw reply) when the answer is not a mode.
    """
    lang = detect_language(request)
    tools = ", ".join(registry.names()) if registry is not None else "(not listed)"
    messages = [
        {"role": "system", "content": ROUTER_SYSTEM.substitute(
            tools=tools, language=language_name(lang))},
        {"role": "user", "content": request},
    ]
    reply = model.chat(messages, role="planner", tools=None, json_mode=True)
    text = reply.content or ""
    bare = text.strip().strip("\"'.` \n").lower()
    if bare in ROUTE_MODES or bare in ROUTE_ALIASES:  # the seed's one-word answer
        return Route(mode=bare, reason="", source="llm"), reply.usage
    decided = parse_reply(text, Route, what="router")
    return decided.model_copy(update={"source": "llm"}), reply.usage


def decide_route(request: str, engine: Engine) -> tuple[Route, Usage]:
    """Route with the model when there is one (rules if its reply is unusable), else rules.

    A knowledge route needs the search_knowledge tool, and a relevant document: when none
    covers the request but tools can answer it (orders, services, analytics ...), it is
    planned instead; otherwise the knowledge answer says that no source covers it.
    """
    usage = Usage()
    if engine.model is None:
        decided = route_offline(request)
    else:
        try:
            decided, usage = route_with_llm(request, engine.model, engine.registry)
        except PlanParseError as exc:
            logger.warning("router reply unusable, using the rules: %s", exc)
            decided = route_offline(request)
    if decided.mode == "knowledge" and KNOWLEDGE_TOOL not in engine.registry:
        decided = ruled("plan", "no_knowledge_tool", decided.source)
    elif decided.mode == "knowledge" and not _has_source(request, engine.registry):
        actions = sorted(set().union(*(_profile(c)[0] for c in split_clauses(request))))
        if actions:  # the tools can answer what the documents do not
            decided = ruled("plan", "no_source", decided.source, names=", ".join(actions))
    return decided, usage


def _has_source(request: str, registry: ToolRegistry) -> bool:
    """True when the knowledge base holds a document relevant to ``request``."""
    query = clean_query(request) or request.strip()
    try:
        return bool((registry.call(KNOWLEDGE_TOOL, {"query": query, "top_k": 1}) or {})
                    .get("hits"))
    except ToolError as exc:  # the answer will say so; routing goes on
        logger.warning("knowledge search while routing failed: %s", exc)
        return True


def person_route(mode: str, request: str = "") -> Route:
    """The route a person chose (``--mode`` or the UI control); "auto" is not a mode here."""
    return ruled(mode, "person", "person", mode=mode)


def route(request: str, engine: Engine) -> Route:
    """The route of ``request`` (see :func:`decide_route`; this drops the usage)."""
    return decide_route(request, engine)[0]
