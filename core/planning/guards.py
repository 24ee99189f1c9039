"""Side effects whose condition is only words: "If the order has arrived, refund it".

A small model writes the condition into the description and leaves ``condition`` empty, so
the refund would run whatever the lookup finds. :func:`guard_problems` finds a
side-effecting step whose description says "if" (如果, 若 ...) but that has no condition,
and the planner's corrective retry asks for the condition as an expression over earlier
results. What remains becomes a warning on the plan, which the person approving sees.
"""

from __future__ import annotations

import re

from core.base.language import detect_language, pick
from core.plan.dag import ancestors
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry

__all__ = ["guard_problems", "states_a_condition"]

# 若 alone means "if", but 若干 means "several" ("为若干订单退款" states no condition)
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|in case|provided that|as long as)\b|如果|若(?!干)|假如|要是|的话|一旦|倘若",
    re.IGNORECASE)


def states_a_condition(step: Step) -> bool:
    """True when the step's description says "if" (如果, 若 ...)."""
    return bool(_CONDITIONAL.search(step.description))


def guard_problems(plan: Plan, registry: ToolRegistry) -> list[str]:
    """One problem per pending side-effecting step that states a condition it lacks."""
    lang = detect_language(plan.goal)
    problems = []
    for step in plan.steps:
        if (step.status != "pending" or step.condition or step.tool not in registry
                or not registry.get(step.tool or "").side_effect
                or not states_a_condition(step)):
            continue
        source = _looked_up_by(plan, step) or "sN"
        problems.append(pick(
            lang,
            f"{step.id}（{step.tool}）的描述带条件，但没有填写 condition，它会无条件执行："
            f"请把条件写进 condition，用前面步骤的结果表达，例如 {source}.status == 'delivered'。",
            f"{step.id} ({step.tool}) states a condition in its description but has no "
            f"\"condition\", so it would run regardless: write the condition over earlier "
            f"results, e.g. {source}.status == 'delivered'."))
    return problems


def _looked_up_by(plan: Plan, step: Step) -> str | None:
    """The nearest step ``step`` depends on that calls a tool (its result has fields to
    test, where a reasoning step's text has none)."""
    graph = {other.id: other.depends_on for other in plan.steps}
    return next((sid for sid in ancestors(graph, step.depends_on) if plan.step(sid).tool),
                None)
