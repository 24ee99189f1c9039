"""The router: decide whether a request gets a knowledge answer, a direct answer, or a plan.

Seed 000's AgentRouter and seed 004's route_mode: knowledge questions take a fixed
retrieve-then-answer workflow (no plan), simple lookups take a short ReAct loop of one to
three read-only tool calls, long tasks in announced stages are planned in phases
("hierarchical"), and everything else is planned. This module only decides
(core.runs.answers answers). ``route_with_llm`` asks the model in one plain call;
``route_offline`` decides with rules: a pack's route for a request of its domain first,
else the generic rules over clauses, conditions, questions and how plainly the request asks
for a tool; ``route`` picks by engine. The knowledge route's tool is the one that says it
answers questions (``ToolHints.answers_questions``).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from core.base.language import Language
from core.base.usage import Usage
from core.errors import PlanParseError, ToolError
from core.llm.engine import Engine
from core.planning.choices import ROUTE_MODES
from core.planning.clauses import clean_query, split_clauses
from core.planning.packs import packs, reading
from core.planning.routes import ROUTE_ALIASES, Route, reason_text, ruled
from core.planning.stages import read_stages
from core.planning.tool_match import PLAIN_MATCH, score_tool
from core.prompts.adaptive import ROUTER_SYSTEM, language_name, parse_reply
from core.tools.registry import Tool, ToolRegistry

__all__ = [
    "Route",
    "ask_knowledge",
    "decide_route",
    "has_condition",
    "is_question",
    "knowledge_tool",
    "person_route",
    "reason_text",
    "route",
    "route_offline",
    "route_with_llm",
]

logger = logging.getLogger(__name__)

_CONDITIONAL = re.compile(
    r"如果|假如|要是|若是|的话|否则|不然|就(?:退|帮|给|申请)|\bif\b|\bunless\b|\botherwise\b"
    r"|\bin case\b|\bwhen it\b(?!\s+(?:arrives|will arrive|gets here|is delivered))",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"[?？]|什么|怎么|如何|多久|几天|哪些|哪款|哪个|是否|能不能|可以.*吗|吗$|\bwhat\b|\bhow\b"
    r"|\bwhich\b|\bwhy\b|\bcan i\b|\bis it\b|\bdoes\b", re.IGNORECASE,
)


# ---- deciding ------------------------------------------------------------------------------


def has_condition(text: str) -> bool:
    """True when ``text`` makes something depend on something else ("if", "如果", "的话")."""
    return bool(_CONDITIONAL.search(text))


def is_question(text: str) -> bool:
    """True when ``text`` reads as a question ("what", "how", "吗", a question mark)."""
    return bool(_QUESTION.search(text))


def knowledge_tool(registry: ToolRegistry) -> Tool | None:
    """The tool that answers questions from documents (the first that says it does)."""
    return next((tool for tool in registry if tool.hints.answers_questions), None)


def ask_knowledge(tool: Tool, question: str) -> dict[str, Any]:
    """The arguments that ask ``tool`` (one that answers questions) ``question``: the
    question goes to its first required parameter, the rest keep their defaults."""
    parameter = next(iter(tool.required), None) or next(
        iter(tool.parameters.get("properties") or {}), "query")
    return {parameter: question}


def route_offline(request: str, registry: ToolRegistry) -> Route:
    """Decide the mode with rules: a long request in announced stages is hierarchical
    (core.planning.stages), else the first pack's route for a request it reads, else the
    generic rules (:func:`generic_route`)."""
    found = read_stages(request)
    if found.multi_stage:
        return ruled("hierarchical", "stages", count=str(len(found.parts)))
    for pack in packs(registry):
        decided = pack.route(request, registry) if pack.route is not None else None
        if decided is not None:
            return decided
    return generic_route(request, registry)


def generic_route(request: str, registry: ToolRegistry) -> Route:
    """Rules that know no toolset: an empty request, a condition, several clauses or a side
    effect the request plainly asks for are planned; a question the knowledge tool may
    answer goes there; a lookup a read-only tool plainly does is answered directly."""
    text = (request or "").strip()
    clauses = split_clauses(text)
    if not clauses:
        return ruled("plan", "empty")
    if has_condition(text):
        return ruled("plan", "condition")
    if len(clauses) >= 2:
        return ruled("plan", "several")
    asked = _plainly_asked(text, registry)
    if any(tool.side_effect for tool in asked):
        return ruled("plan", "side_effect")
    answering = knowledge_tool(registry)
    lookups = [tool for tool in asked if tool is not answering]
    if is_question(text) and answering is not None and not lookups:
        return ruled("knowledge", "knowledge")
    if lookups:
        return ruled("direct", "lookup", names=", ".join(tool.name for tool in lookups))
    return ruled("direct", "simple")


def _plainly_asked(text: str, registry: ToolRegistry) -> list[Tool]:
    """The tools ``text`` plainly asks for (two keyword hits, or as much)."""
    return [tool for tool in registry if score_tool(tool, text) >= PLAIN_MATCH]


def route_with_llm(request: str, model: Any, registry: ToolRegistry | None = None, *,
                   language: Language) -> tuple[Route, Usage]:
    """One plain chat call (role planner, no tools, JSON) answering {"mode", "reason"}.

    Raises PlanParseError (keeping the raw reply) when the answer is not a mode.
    """
    tools = ", ".join(registry.names()) if registry is not None else "(not listed)"
    messages = [
        {"role": "system", "content": ROUTER_SYSTEM.substitute(
            tools=tools, language=language_name(language))},
        {"role": "user", "content": request},
    ]
    reply = model.chat(messages, role="planner", tools=None, json_mode=True)
    text = reply.content or ""
    bare = text.strip().strip("\"'.` \n").lower()
    if bare in ROUTE_MODES or bare in ROUTE_ALIASES:  # the seed's one-word answer
        return Route(mode=bare, reason="", source="llm"), reply.usage
    decided = parse_reply(text, Route, what="router")
    return decided.model_copy(update={"source": "llm"}), reply.usage


def decide_route(request: str, engine: Engine, *, language: Language
                 ) -> tuple[Route, Usage]:
    """Route with the model when there is one (rules if its reply is unusable), else rules.

    A knowledge route needs a tool that answers questions, and a relevant document: when
    none covers the request but tools can answer it (what the packs read it asking of
    their tools, else the tools it plainly asks for), it is planned instead; otherwise the
    knowledge answer says that no source covers it.
    """
    usage = Usage()
    registry = engine.registry
    if engine.model is None:
        decided = route_offline(request, registry)
    else:
        try:
            decided, usage = route_with_llm(request, engine.model, registry,
                                            language=language)
        except PlanParseError as exc:
            logger.warning("router reply unusable, using the rules: %s", exc)
            decided = route_offline(request, registry)
    answering = knowledge_tool(registry)
    if decided.mode == "knowledge" and answering is None:
        decided = ruled("plan", "no_knowledge_tool", decided.source)
    elif decided.mode == "knowledge" and not _has_source(request, answering, registry):
        actions = list(reading(request, registry).asks) or [
            tool.name for tool in _plainly_asked(request, registry) if tool is not answering]
        if actions:  # the tools can answer what the documents do not
            decided = ruled("plan", "no_source", decided.source,
                            names=", ".join(sorted(actions)))
    return decided, usage


def _has_source(request: str, answering: Tool | None, registry: ToolRegistry) -> bool:
    """True when the knowledge tool finds a document relevant to ``request``."""
    if answering is None:
        return False
    query = clean_query(request) or request.strip()
    try:
        return bool((registry.call(answering.name, ask_knowledge(answering, query)) or {})
                    .get("hits"))
    except ToolError as exc:  # the answer will say so; routing goes on
        logger.warning("knowledge search while routing failed: %s", exc)
        return True


def person_route(mode: str, request: str = "") -> Route:
    """The route a person chose (``--mode`` or the UI control); "auto" is not a mode here."""
    return ruled(mode, "person", "person", mode=mode)


def route(request: str, engine: Engine, *, language: Language) -> Route:
    """The route of ``request`` (see :func:`decide_route`; this drops the usage)."""
    return decide_route(request, engine, language=language)[0]
