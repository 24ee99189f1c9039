"""Problem: what a checkpoint's decision may not drop: steps still due, parts of the request.

A small model's checkpoint often says "the goal is already met" too early: having seen the
status a conditional action waits for, it drops the action ("no action is needed"); having
found one part, it drops the lookup and the action another part needs. The plan before the
decision (the context's ``before``) is compared with the decision's plan, and the decision
is refused when the data says otherwise:

- a pending step whose own expression condition holds over the results so far;
- an approved side effect that no expression condition says is not needed (a condition
  that reads a result still to come, or cannot be checked over the results, says nothing);
- every step of a clause of the request that no kept step covers any more;
- the only step calling the tool the request plainly asks for (its clear best match).

It protects the approval boundary and honest answers, so it runs for every model.
"""

from __future__ import annotations

from core.base.expressions import (
    ExpressionError,
    condition_step_refs,
    evaluate_condition,
    is_expression_condition,
)
from core.plan.approval import has_side_effect
from core.plan.model import Plan, Step
from core.planning.checks.coverage import uncovered_clauses
from core.planning.checks.shape import Check, CheckContext, Problem
from core.planning.tool_match import PLAIN_MATCH, score_tool

__all__ = ["CHECK", "refused_drops"]


def refused_drops(candidate: Plan, context: CheckContext) -> list[Problem]:
    """One problem per step or clause the decision that made ``candidate`` may not drop
    from ``context.before`` (see the module's docstring)."""
    plan = context.before
    if plan is None:
        return []
    kept = set(candidate.ids())
    covered_before = set(uncovered_clauses(plan.goal, plan, context))
    problems = _asked_for_tool(plan, candidate, context)
    problems += [Problem("check.drop_clause", {"clause": clause})
                 for clause in uncovered_clauses(plan.goal, candidate, context)
                 if clause not in covered_before]
    for step in plan.steps:
        if step.status == "pending" and step.id not in kept:
            problems += _still_due(plan, step, has_side_effect(step, context.registry))
    return problems


def _still_due(plan: Plan, step: Step, side_effect: bool) -> list[Problem]:
    """Why ``step`` may not be dropped (nothing when it may)."""
    about = {"step": step.id, "condition": step.condition}
    if not step.condition or not is_expression_condition(step.condition):
        return [Problem("check.drop_approved", about, step.id)] if side_effect else []
    results = plan.results()
    try:
        waiting = condition_step_refs(step.condition) - results.keys()
        due = not waiting and evaluate_condition(step.condition, results)
    except ExpressionError:
        return [Problem("check.drop_unchecked", about, step.id)] if side_effect else []
    if waiting and side_effect:
        return [Problem("check.drop_waiting", about, step.id)]
    return [Problem("check.drop_due", about, step.id)] if due else []


def _asked_for_tool(plan: Plan, candidate: Plan, context: CheckContext) -> list[Problem]:
    """The dropped pending steps that alone called the request's clear best tool."""
    scores = sorted(((score_tool(tool, plan.goal), tool.name) for tool in context.registry),
                    reverse=True)
    if len(scores) < 2 or scores[0][0] < PLAIN_MATCH or scores[0][0] == scores[1][0]:
        return []
    wanted = scores[0][1]
    kept = set(candidate.ids())
    if any(step.tool == wanted and (step.id in kept or step.status == "completed")
           for step in plan.steps):
        return []
    return [Problem("check.drop_asked_tool", {"step": step.id, "tool": wanted}, step.id)
            for step in plan.steps
            if step.tool == wanted and step.status == "pending" and step.id not in kept]


CHECK = Check(name="drop_guard", kind="problem", stages=frozenset({"checkpoint"}),
              run=refused_drops, weak_models_only=False)
