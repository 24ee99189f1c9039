"""Problem: a side effect planned twice, the same call (core.plan.calls) under the same
condition, once after the other.

Twins side by side are folded before this check (core.planning.checks.twin_effects); a
repeat ordered after its twin ("refund, check, refund") may be meant, so the corrective
retry, or else the person approving, decides whether both were. A request that asks for
the thing again ("twice", "again": core.planning.clauses.asks_repeat) means both. Steps
whose arguments are still to be inferred are never the same call, however alike they look.
"""

from __future__ import annotations

from core.base.messages import Both
from core.plan.approval import has_side_effect
from core.plan.calls import call_key
from core.plan.model import Plan
from core.planning.checks.shape import Check, CheckContext, Problem
from core.planning.clauses import asks_repeat

__all__ = ["CHECK", "repeated_calls"]


def repeated_calls(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per side-effecting step whose call later steps repeat, unless the
    request asks for it again."""
    if asks_repeat(context.request):
        return []
    first: dict[str, str] = {}
    repeats: dict[str, list[str]] = {}
    for step in plan.steps:
        key = call_key(step, context.registry, condition=True)
        if key is None or not has_side_effect(step, context.registry):
            continue
        original = first.setdefault(key, step.id)
        if original != step.id:
            repeats.setdefault(original, []).append(step.id)
    return [Problem("check.repeated_calls",
                    {"step": original, "steps": Both(en=", ".join(ids), zh="、".join(ids))},
                    ids[0])
            for original, ids in repeats.items()]


CHECK = Check(name="repeated_calls", kind="problem", stages=frozenset({"draft"}),
              run=repeated_calls, weak_models_only=False)
