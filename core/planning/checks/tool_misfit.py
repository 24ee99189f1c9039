"""Problem: a tool step whose description is another tool's job.

A small model sometimes picks a tool it has just seen in an example and describes the step
as the request needs, so the description and the call disagree, and the run answers one
question from another tool's data. A pending step whose description shares nothing with its
own tool (keywords, name, description: core.planning.tool_match) while another tool plainly
matches it is sent back naming that tool; what remains becomes a warning.
"""

from __future__ import annotations

from core.plan.model import Plan
from core.planning.checks.shape import Check, CheckContext, Problem
from core.planning.tool_match import PLAIN_MATCH, score_tool

__all__ = ["CHECK", "tool_misfit"]


def tool_misfit(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per pending tool step that plainly belongs to another tool."""
    registry = context.registry
    problems = []
    for step in plan.steps:
        if step.status != "pending" or step.tool not in registry:
            continue
        if score_tool(registry.get(step.tool or ""), step.description) > 0:
            continue
        score, better = max((score_tool(tool, step.description), tool.name)
                            for tool in registry)
        if score >= PLAIN_MATCH:
            problems.append(Problem("check.tool_misfit", {
                "step": step.id, "tool": step.tool, "description": step.description,
                "better": better}, step.id))
    return problems


CHECK = Check(name="tool_misfit", kind="problem", stages=frozenset({"draft"}),
              run=tool_misfit, weak_models_only=True)
