"""Problem: a reasoning step that plainly needs a tool names what a read-only tool looks up.

A small model often plans "find the degraded services" as a step with ``"tool": null`` and
then answers from memory. A step still to run is sent back when its description names what
a registered read-only tool looks up, while no step it depends on already uses that tool:
what the packs read it naming (core.planning.packs.Reading.needs: an order number, a
product), SQL or tables (a tool keyed "sql" or "tables"), or the current time (a tool keyed
"time"). The synthesis step is exempt: it only writes the answer.
"""

from __future__ import annotations

import re

from core.base.messages import Both
from core.plan.dag import ancestors
from core.plan.model import Plan, Step
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "needed_tools", "reasoning_needs_tool"]

_TABLES = re.compile(r"\bsql\b|\btables?\b|\bselect\b.+\bfrom\b|数据表|表结构", re.IGNORECASE)
_CLOCK = re.compile(r"\b(?:current|today'?s?)\s+(?:date|time)\b|\bwhat time\b|当前(?:时间|日期)|"
                    r"现在几点|今天几号", re.IGNORECASE)
# what the text names, in both languages, and the keywords of the tools that look it up
_GENERIC: tuple[tuple[re.Pattern[str], Both, frozenset[str]], ...] = (
    (_TABLES, Both(en="tables or SQL", zh="数据表或 SQL"), frozenset({"sql", "tables"})),
    (_CLOCK, Both(en="the current time", zh="当前时间"), frozenset({"time"})),
)


def needed_tools(text: str, context: CheckContext) -> list[tuple[Both, list[str]]]:
    """What ``text`` names that a read-only tool looks up, and the names of those tools:
    the packs' readings first, then the generic ones."""
    wanted = [(need.what, set(need.tools), frozenset[str]())
              for need in context.reading(text).needs]
    wanted += [(what, set(), keys) for pattern, what, keys in _GENERIC if pattern.search(text)]
    found = []
    for what, names, keys in wanted:
        tools = [tool.name for tool in context.registry if not tool.side_effect
                 and (tool.name in names or keys & set(tool.keywords))]
        if tools:
            found.append((what, tools))
    return found


def reasoning_needs_tool(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per reasoning step whose description plainly needs a registered tool."""
    synthesis = plan.synthesis_step()
    by_id = {step.id: step for step in plan.steps}
    problems = []
    for step in plan.steps:
        if step.tool is not None or step is synthesis or step.status != "pending":
            continue  # a replan cannot change the steps it keeps
        used = _tools_upstream(step, by_id)
        for what, tools in needed_tools(step.description, context):
            if not used.intersection(tools):
                problems.append(Problem("check.reasoning_needs_tool", {
                    "step": step.id, "what": what, "tools": ", ".join(tools)}, step.id))
                break
    return problems


def _tools_upstream(step: Step, by_id: dict[str, Step]) -> set[str]:
    """The tools of every step ``step`` depends on, directly or not."""
    graph = {sid: other.depends_on for sid, other in by_id.items()}
    return {tool for sid in ancestors(graph, step.depends_on)
            if (tool := by_id[sid].tool)}


CHECK = Check(name="tool_hints", kind="problem", stages=frozenset({"draft", "replan"}),
              run=reasoning_needs_tool, weak_models_only=True)
