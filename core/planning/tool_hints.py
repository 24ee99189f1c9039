"""Reasoning steps that plainly need a tool: they name what a registered tool looks up.

A small model often plans "find the degraded services" as a step with ``"tool": null``
and then answers from memory. :func:`tool_hint_problems` finds such steps so that the
planner's corrective retry can send them back: a step that names what a read-only tool
looks up (the packs read that: an order number, services, a product), SQL or tables (a
tool keyed "sql" or "tables"), or the current time (a tool keyed "time"), while no step it
depends on already uses that tool. The synthesis step is exempt: it only writes the answer.
"""

from __future__ import annotations

import re

from core.base.language import Language, detect_language, pick
from core.base.messages import Both
from core.plan.dag import ancestors
from core.plan.model import Plan, Step
from core.planning.packs import reading
from core.tools.registry import ToolRegistry

__all__ = ["needed_tools", "tool_hint_problems"]

_TABLES = re.compile(r"\bsql\b|\btables?\b|\bselect\b.+\bfrom\b|数据表|表结构", re.IGNORECASE)
_CLOCK = re.compile(r"\b(?:current|today'?s?)\s+(?:date|time)\b|\bwhat time\b|当前(?:时间|日期)|"
                    r"现在几点|今天几号", re.IGNORECASE)
# (what the text names, in both languages; the keywords of the tools that look it up)
_GENERIC: tuple[tuple[re.Pattern[str], Both, frozenset[str]], ...] = (
    (_TABLES, Both(en="tables or SQL", zh="数据表或 SQL"), frozenset({"sql", "tables"})),
    (_CLOCK, Both(en="the current time", zh="当前时间"), frozenset({"time"})),
)


def needed_tools(text: str, registry: ToolRegistry) -> list[tuple[str, list[str]]]:
    """What ``text`` names that a read-only tool looks up: (what, in the text's language;
    the names of those tools), the packs' readings first."""
    lang: Language = detect_language(text)
    wanted = [(need.what, set(need.tools), frozenset[str]())
              for need in reading(text, registry).needs]
    wanted += [(what, set(), keys) for pattern, what, keys in _GENERIC if pattern.search(text)]
    found = []
    for what, names, keys in wanted:
        tools = [tool.name for tool in registry if not tool.side_effect
                 and (tool.name in names or keys & set(tool.keywords))]
        if tools:
            found.append((pick(lang, what.zh, what.en), tools))
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
