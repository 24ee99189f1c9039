"""Problem: a side effect whose condition is only words ("if it has arrived, act on it").

A small model writes the condition into the description and leaves ``condition`` empty, so
the action would run whatever the lookup finds. A pending side-effecting step whose
description says "if" (如果, 若 ...) but that has no condition is sent back, asking for the
condition as an expression over earlier results; what remains becomes a warning the person
approving sees. It protects the approval boundary, so it runs for every model.
"""

from __future__ import annotations

import re

from core.plan.approval import has_side_effect
from core.plan.dag import ancestors
from core.plan.model import Plan, Step
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "condition_in_words", "states_a_condition"]

# 若 alone means "if", but 若干 means "several" ("为若干订单退款" states no condition)
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|in case|provided that|as long as)\b|如果|若(?!干)|假如|要是|的话|一旦|倘若",
    re.IGNORECASE)


def states_a_condition(step: Step) -> bool:
    """True when the step's description says "if" (如果, 若 ...)."""
    return bool(_CONDITIONAL.search(step.description))


def condition_in_words(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per pending side-effecting step that states a condition it lacks."""
    registry = context.registry
    return [Problem("check.condition_in_words", {
        "step": step.id, "tool": step.tool, "source": _looked_up_by(plan, step) or "sN"},
        step.id)
        for step in plan.steps
        if step.status == "pending" and not step.condition
        and has_side_effect(step, registry) and states_a_condition(step)]


def _looked_up_by(plan: Plan, step: Step) -> str | None:
    """The nearest step ``step`` depends on that calls a tool (its result has fields to
    test, where a reasoning step's text has none)."""
    graph = {other.id: other.depends_on for other in plan.steps}
    return next((sid for sid in ancestors(graph, step.depends_on) if plan.step(sid).tool),
                None)


CHECK = Check(name="guards", kind="problem",
              stages=frozenset({"draft", "replan", "follow_up"}), run=condition_in_words,
              weak_models_only=False)
