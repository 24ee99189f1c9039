"""Repair: a new version never does again a side effect that already ran.

A pending side-effecting step that makes the same call as a completed one (core.plan.calls;
its condition aside: a repeat whose condition reads a new copy of a lookup is still a
repeat) is folded into that completed step: steps that read it read the completed step's
result instead. A step whose arguments are still to be inferred is never such a repeat, nor
is a call of an idempotent tool that comes after another side effect of the new version
("cd temp" after "cd .."): something changed since it ran, so it does its work again, and
the tool says that doing it twice is harmless. Runs wherever a new version keeps completed
steps: a replan, a checkpoint, a follow-up.
"""

from __future__ import annotations

from core.plan.approval import has_side_effect
from core.plan.calls import call_key
from core.plan.dag import ancestors
from core.plan.model import Plan, Step
from core.plan.versions import renumber
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "fold_repeated_effects"]


def fold_repeated_effects(plan: Plan, context: CheckContext) -> list[Problem]:
    """Remove from ``plan`` each pending step that repeats a completed side effect; one
    note per removed step."""
    registry = context.registry
    done = {key: s.id for s in plan.steps
            if s.status == "completed" and has_side_effect(s, registry)
            and (key := call_key(s, registry)) is not None}
    mapping: dict[str, str] = {}
    notes = []
    graph = plan.dependency_graph()
    for step in plan.steps:
        if step.status != "pending" or not has_side_effect(step, registry):
            continue
        key = call_key(renumber(step, mapping), registry)
        twin = done.get(key) if key is not None else None
        if twin is not None and not _done_again(plan, step, graph, mapping, context):
            mapping[step.id] = twin
            notes.append(Problem("check.repeated_effect_done",
                                 {"twin": twin, "description": step.description}, step.id))
    if mapping:
        plan.steps = [renumber(s, mapping) if s.status == "pending" else s
                      for s in plan.steps if s.id not in mapping]
    return notes


def _done_again(plan: Plan, step: Step, graph: dict[str, list[str]],
                folded: dict[str, str], context: CheckContext) -> bool:
    """True when ``step`` calls an idempotent tool after another pending side effect of
    ``plan`` (one it waits for, not itself folded): a repeat that does its work again."""
    tool = context.registry.get(step.tool) if step.tool in context.registry else None
    if tool is None or not tool.idempotent:
        return False
    return any(plan.step(sid).status == "pending" and sid not in folded
               and has_side_effect(plan.step(sid), context.registry)
               for sid in ancestors(graph, step.depends_on))


CHECK = Check(name="repeated_effects", kind="repair",
              stages=frozenset({"replan", "checkpoint", "follow_up"}), run=fold_repeated_effects,
              weak_models_only=False)
