"""Tool steps whose description is another tool's job: "查询用户的流失原因" with query_logistics.

A small model sometimes picks a tool it has just used in its example and describes the
step as the request needs, so the description and the call disagree. The run then answers
a churn question from a parcel's tracking data. :func:`tool_misfit_problems` finds a step
whose description shares nothing with its own tool (name, keywords, description) while
another tool matches it plainly, and names that tool, so that the corrective retry can
change the call; what remains becomes a warning the person approving sees.
"""

from __future__ import annotations

from core.base.language import detect_language, pick
from core.plan.model import Plan
from core.planning.tool_match import PLAIN_MATCH, score_tool
from core.tools.registry import ToolRegistry

__all__ = ["tool_misfit_problems"]



def tool_misfit_problems(plan: Plan, registry: ToolRegistry) -> list[str]:
    """One problem per pending tool step that plainly belongs to another tool."""
    lang = detect_language(plan.goal)
    problems = []
    for step in plan.steps:
        if step.status != "pending" or step.tool not in registry:
            continue
        if score_tool(registry.get(step.tool or ""), step.description) > 0:
            continue
        score, better = max((score_tool(tool, step.description), tool.name)
                            for tool in registry)
        if score < PLAIN_MATCH:
            continue
        problems.append(pick(
            lang,
            f"{step.id} 调用 {step.tool}，但它的描述（“{step.description}”）是 {better} 的用途："
            f"请改用 {better}，或改写描述。",
            f'{step.id} calls {step.tool}, but its description ("{step.description}") is what '
            f"{better} is for: call {better}, or reword the step."))
    return problems
