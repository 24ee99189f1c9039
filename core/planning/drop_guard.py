"""What a checkpoint may not drop from a plan: steps still due, and parts of the request.

A small model's checkpoint often says "the goal is already met" too early. These rules
refuse such a decision when the data says otherwise (see :func:`refused_drops`).
"""

from __future__ import annotations

from core.base.expressions import (
    ExpressionError,
    condition_step_refs,
    evaluate_condition,
    is_expression_condition,
)
from core.base.language import detect_language, pick
from core.plan.approval import has_side_effect
from core.plan.model import Plan
from core.planning.coverage import uncovered_clauses
from core.planning.tool_match import PLAIN_MATCH, score_tool
from core.tools.registry import ToolRegistry

__all__ = ["refused_drops"]



def refused_drops(plan: Plan, candidate: Plan, registry: ToolRegistry | None
                       ) -> list[str]:
    """One problem per pending step the decision may not drop: its own condition holds, or
    it is an approved side effect that no expression condition says is not needed (one
    that reads a result still to come, or cannot be checked over the results, says
    nothing); and one per clause of the goal that only dropped steps covered.

    Nor may it drop the only step calling the tool the request plainly asks for (its
    clear best match): asked how many replicas "according to the scaling suggestion", the
    model dropped suggest_scale and answered with the current replica count.

    The small local model, having seen "delivered", dropped the refund the request made
    conditional on exactly that ("no refund is needed"): the data said the step was due.
    Having found a vacuum, it dropped the order lookup and the refund that read it ("the
    goal is already met"), and the answer said the order was still to be checked.
    """
    kept, results = set(candidate.ids()), plan.results()
    lang = detect_language(plan.goal)
    problems = []
    if registry is not None:
        problems += _asked_for_tool(plan, candidate, registry, lang)
        covered_before = set(uncovered_clauses(plan.goal, plan, registry))
        problems += [pick(lang, f"不能去掉“{clause}”的所有步骤：请求的这一部分还没有完成",
                          f"the steps for \"{clause}\" cannot all be dropped: that part of "
                          "the request is not done yet")
                     for clause in uncovered_clauses(plan.goal, candidate, registry)
                     if clause not in covered_before]
    for step in plan.steps:
        if step.status != "pending" or step.id in kept:
            continue
        side_effect = registry is not None and has_side_effect(step, registry)
        if not step.condition or not is_expression_condition(step.condition):
            if side_effect:
                problems.append(pick(
                    lang, f"不能去掉 {step.id}：它是已批准的操作，没有条件表明它不再需要",
                    f"{step.id} cannot be dropped: it is an approved action and no "
                    "condition says it is not needed"))
            continue
        try:
            waiting = condition_step_refs(step.condition) - results.keys()
            due = not waiting and evaluate_condition(step.condition, results)
        except ExpressionError:
            if side_effect:
                problems.append(pick(
                    lang, f"不能去掉 {step.id}：它的条件 {step.condition} 无法用已有结果判断",
                    f"{step.id} cannot be dropped: its condition {step.condition} cannot be "
                    "checked over the results so far"))
            continue
        if waiting and side_effect:
            problems.append(pick(
                lang, f"不能去掉 {step.id}：它的条件 {step.condition} 要读的结果还没有出来",
                f"{step.id} cannot be dropped: its condition {step.condition} reads a result "
                "still to come"))
        elif due:
            problems.append(pick(
                lang, f"不能去掉 {step.id}：它的条件 {step.condition} 已经成立",
                f"{step.id} cannot be dropped: its condition {step.condition} holds"))
    return problems


def _asked_for_tool(plan: Plan, candidate: Plan, registry: ToolRegistry, lang: str
                    ) -> list[str]:
    """The dropped pending steps that alone called the request's clear best tool."""
    scores = sorted(((score_tool(tool, plan.goal), tool.name) for tool in registry),
                    reverse=True)
    if len(scores) < 2 or scores[0][0] < PLAIN_MATCH or scores[0][0] == scores[1][0]:
        return []
    wanted = scores[0][1]
    kept = set(candidate.ids())
    if any(step.tool == wanted and (step.id in kept or step.status == "completed")
           for step in plan.steps):
        return []
    return [pick(lang, f"不能去掉 {step.id}：请求要的正是 {wanted} 的结果，没有别的步骤调用它",
                 f"{step.id} cannot be dropped: the request asks for what {wanted} gives, "
                 "and no other step calls it")
            for step in plan.steps
            if step.tool == wanted and step.status == "pending" and step.id not in kept]
