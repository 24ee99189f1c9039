"""Repair: a plan ends with a synthesis step, one that writes the answer from the results.

A reply whose last step calls a tool gets a synthesis step after it, depending on every
step, described in the request's language. A synthesis step also depends on every step
whose result no other step reads: the answer is what such a result is for, and the answer
step sees only what it depends on (a small model's answer step, depending on the time
lookup alone, wrote a commit message the git lookup beside it never returned). Both
complete the plan's shape rather than change what it does, so they leave no note.
"""

from __future__ import annotations

from core.plan.model import Plan, Step
from core.planning.checks.shape import Check, CheckContext, Problem
from core.prompts.planning import synthesis_description

__all__ = ["CHECK", "ensure_synthesis"]


def ensure_synthesis(plan: Plan, context: CheckContext) -> list[Problem]:
    """Append a synthesis step when the plan does not end with one; make it depend on
    every step no other step depends on."""
    if plan.steps and plan.synthesis_step() is None:
        plan.steps.append(Step(
            id=plan.next_step_id(),
            description=synthesis_description(context.language),
            depends_on=plan.ids()))
    synthesis = plan.synthesis_step()
    if synthesis is not None and synthesis.status == "pending":
        read = plan.depended_on()
        synthesis.depends_on += [step.id for step in plan.steps
                                 if step is not synthesis and step.id not in read]
    return []


CHECK = Check(name="synthesis", kind="repair", stages=frozenset({"draft", "replan"}),
              run=ensure_synthesis, weak_models_only=False)
