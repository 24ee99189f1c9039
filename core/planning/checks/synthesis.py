"""Repair: a plan ends with a synthesis step, one that writes the answer from the results.

A reply whose last step calls a tool gets a synthesis step after it, depending on every
step, described in the request's language. It completes the plan's shape rather than
changing what it does, so it leaves no note.
"""

from __future__ import annotations

from core.plan.model import Plan, Step
from core.planning.checks.shape import Check, CheckContext, Problem
from core.prompts.planning import synthesis_description

__all__ = ["CHECK", "ensure_synthesis"]


def ensure_synthesis(plan: Plan, context: CheckContext) -> list[Problem]:
    """Append a synthesis step when the plan does not end with one."""
    if plan.steps and plan.synthesis_step() is None:
        plan.steps.append(Step(
            id=plan.next_step_id(),
            description=synthesis_description(context.language),
            depends_on=plan.ids()))
    return []


CHECK = Check(name="synthesis", kind="repair", stages=frozenset({"draft", "replan"}),
              run=ensure_synthesis)
