"""Problem: a side effect the request asks for (as a pack's rule draft reads it) that no
step takes.

The rule draft knows which clauses ask for an action, not merely about it (a refund, not
the refund policy); each such tool the model's plan never calls is named, with the draft's
call as the example, for the corrective retry and then as a warning.
"""

from __future__ import annotations

import json

from core.plan.model import Plan
from core.planning.checks.rule_actions import missing_effects
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "missing_actions"]


def missing_actions(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per side-effecting tool the request asks for that no step calls."""
    draft = context.draft
    if draft is None:
        return []
    return [Problem("check.missing_action", {
        "tool": step.tool, "description": step.description,
        "example": json.dumps({"tool": step.tool, "args": step.args}, ensure_ascii=False)})
        for step in missing_effects(draft, plan, context.registry)]


CHECK = Check(name="missing_actions", kind="problem", stages=frozenset({"draft"}),
              run=missing_actions, weak_models_only=True)
