"""Reasoning steps that plainly need a tool: they name what a registered tool looks up.

A small model often plans "find the degraded services" as a step with ``"tool": null``
and then answers from memory. :func:`tool_hint_problems` finds such steps so that the
planner's corrective retry can send them back: a step that names an order number, a
tracking number, services, SQL / tables, the current time, or a product or shop policy
(what the knowledge base answers), while a read-only tool takes exactly that (by its
parameter names or keywords) and no step it depends on already uses that tool.
The synthesis step is exempt: it only writes the answer.

:func:`tool_chain` is the same idea for the direct answer: the read-only tool calls the
rule planner would start with (an order, then its parcel), which the short loop forces as
its first rounds.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from core.base.language import Language, detect_language, pick
from core.plan.dag import ancestors
from core.plan.model import Plan, Step
from core.planning.offline import offline_plan
from core.planning.offline.text import cues, extract_entities
from core.tools.registry import Tool, ToolRegistry

__all__ = ["needed_tools", "tool_chain", "tool_hint_problems"]

_SERVICES = re.compile(r"\bservices?\b|micro-?services?|服务", re.IGNORECASE)
_TABLES = re.compile(r"\bsql\b|\btables?\b|\bselect\b.+\bfrom\b|数据表|表结构", re.IGNORECASE)
# what the knowledge base answers: a product or a shop policy (the rule planner's "product"
# cues), or a pick; not the "recommend" cue family, whose "want" fits "what the user wants"
_PICKS = re.compile(r"推荐|选购|选哪|\brecommend", re.IGNORECASE)
_CLOCK = re.compile(r"\b(?:current|today'?s?)\s+(?:date|time)\b|\bwhat time\b|当前(?:时间|日期)|"
                    r"现在几点|今天几号", re.IGNORECASE)


def _takes(part: str) -> Callable[[Tool], bool]:
    return lambda tool: any(part in name for name in tool.parameters.get("properties", {}))


def _knows(*words: str) -> Callable[[Tool], bool]:
    return lambda tool: any(word in tool.keywords for word in words)


# (what the text names, in English and Chinese; which tools look that up)
_NEEDS: tuple[tuple[Callable[[str], bool], tuple[str, str], Callable[[Tool], bool]], ...] = (
    (lambda text: bool(extract_entities(text).orders), ("订单号", "an order number"),
     _takes("order")),
    (lambda text: bool(extract_entities(text).tracking), ("运单号", "a tracking number"),
     _takes("tracking")),
    (lambda text: bool(_SERVICES.search(text)), ("服务", "services"),
     lambda tool: _takes("service")(tool) or _knows("services")(tool)),
    (lambda text: bool(_TABLES.search(text)), ("数据表或 SQL", "tables or SQL"),
     _knows("sql", "tables")),
    (lambda text: bool(_CLOCK.search(text)), ("当前时间", "the current time"), _knows("time")),
    (lambda text: "product" in cues(text) or bool(_PICKS.search(text)),
     ("商品或政策", "products or policies"),
     _knows("recommend", "policy")),
)


def needed_tools(text: str, registry: ToolRegistry) -> list[tuple[str, list[str]]]:
    """What ``text`` names that a read-only tool looks up: (what, in the text's language;
    the names of those tools), in a fixed order."""
    lang: Language = detect_language(text)
    found = []
    for names_it, what, fits in _NEEDS:
        if not names_it(text):
            continue
        tools = [tool.name for tool in registry if not tool.side_effect and fits(tool)]
        if tools:
            found.append((pick(lang, *what), tools))
    return found


def tool_hint_problems(plan: Plan, registry: ToolRegistry) -> list[str]:
    """One problem per reasoning step whose description plainly needs a registered tool."""
    synthesis = plan.synthesis_step()
    by_id = {step.id: step for step in plan.steps}
    lang = detect_language(plan.goal)
    problems = []
    for step in plan.steps:
        if step.tool is not None or step is synthesis or step.status != "pending":
            continue  # a replan cannot change the steps it keeps
        used = _tools_upstream(step, by_id)
        for what, tools in needed_tools(step.description, registry):
            if used.intersection(tools):
                continue
            names = ", ".join(tools)
            problems.append(pick(
                lang,
                f"{step.id} 是没有工具的推理步骤，但它提到了{what}：请改用工具（{names}）来查。",
                f"{step.id} is a reasoning step but names {what}: look it up with a tool "
                f"({names}) instead of \"tool\": null.",
            ))
            break
    return problems


def _tools_upstream(step: Step, by_id: dict[str, Step]) -> set[str]:
    """The tools of every step ``step`` depends on, directly or not."""
    graph = {sid: other.depends_on for sid, other in by_id.items()}
    return {tool for sid in ancestors(graph, step.depends_on)
            if (tool := by_id[sid].tool)}


def tool_chain(request: str, registry: ToolRegistry, *, limit: int = 2) -> list[Step]:
    """The read-only tool steps the rule planner drafts for ``request``, in plan order, each
    needing only the ones before it (query_order, then query_logistics on its tracking
    number), at most ``limit``; empty when no tool fits the request."""
    chain: list[Step] = []
    for step in offline_plan(request, registry).steps:
        if step.tool is None or step.tool not in registry or registry.get(step.tool).side_effect:
            continue
        if set(step.depends_on) <= {earlier.id for earlier in chain}:
            chain.append(step)
        if len(chain) == limit:
            break
    return chain
