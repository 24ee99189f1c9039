"""Repair: a lookup repeated in a loop is folded into its first call.

A small model sometimes falls into a loop while writing a plan and emits the same lookup
again and again, and the corrective retry loops the same way. A repeated read adds nothing
but a call, so each pending read-only step that makes the same call (core.plan.calls, its
condition included) as an earlier step is folded into it: steps that read the repeat read
the first instead, and the plan says so. Not a read that comes after a side effect (the
record may have changed), and never a step whose arguments are still to be inferred. It
makes up for a weak model's loop, so it runs only for them.
"""

from __future__ import annotations

from core.plan.approval import has_side_effect
from core.plan.calls import call_key
from core.plan.dag import ancestors
from core.plan.model import Plan
from core.plan.versions import renumber
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "fold_repeated_reads"]


def fold_repeated_reads(plan: Plan, context: CheckContext) -> list[Problem]:
    """Remove each pending read-only tool step that repeats an earlier step's call; one
    note per kept step that repeats were folded into."""
    registry = context.registry
    graph = {step.id: step.depends_on for step in plan.steps}
    effects = {step.id for step in plan.steps if has_side_effect(step, registry)}
    first: dict[str, str] = {}
    mapping: dict[str, str] = {}
    for step in plan.steps:
        key = call_key(renumber(step, mapping), registry, condition=True)
        if key is None or step.tool not in registry:
            continue  # arguments still to be inferred: not the same call as any other
        original = first.setdefault(key, step.id)
        if (original != step.id and step.status == "pending" and step.id not in effects
                and not effects & set(ancestors(graph, step.depends_on))):
            mapping[step.id] = original
    if not mapping:
        return []
    plan.steps = [renumber(s, mapping) if s.status == "pending" else s
                  for s in plan.steps if s.id not in mapping]
    folded: dict[str, list[str]] = {}
    for repeat, original in mapping.items():
        folded.setdefault(original, []).append(repeat)
    return [Problem("check.repeated_read" if len(ids) == 1 else "check.repeated_reads",
                    {"step": original, "count": len(ids)}, original)
            for original, ids in folded.items()]


CHECK = Check(name="repeated_reads", kind="repair", stages=frozenset({"draft"}),
              run=fold_repeated_reads, weak_models_only=True)
