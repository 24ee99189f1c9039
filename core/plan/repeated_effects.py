"""A new version must not do again a side effect that already ran.

A pending side-effecting step that makes the same call as a completed one (core.plan.calls;
its condition aside: a repeat whose condition reads a new copy of a lookup is still a
repeat) is folded into that completed step: steps that read it read the completed step's
result instead. A step whose arguments are still to be inferred is never such a repeat.
"""

from __future__ import annotations

from core.base.language import detect_language, pick
from core.plan.approval import has_side_effect
from core.plan.calls import call_key
from core.plan.model import Plan
from core.plan.versions import renumber
from core.tools.registry import ToolRegistry

__all__ = ["fold_repeated_effects"]


def fold_repeated_effects(plan: Plan, registry: ToolRegistry) -> list[str]:
    """Remove from ``plan`` each pending step that repeats a completed side effect.

    Returns one line per removed step, in the request's language (empty: nothing repeated).
    """
    done = {key: s.id for s in plan.steps
            if s.status == "completed" and has_side_effect(s, registry)
            and (key := call_key(s, registry)) is not None}
    mapping: dict[str, str] = {}
    lines = []
    lang = detect_language(plan.goal)
    for step in plan.steps:
        if step.status != "pending" or not has_side_effect(step, registry):
            continue
        key = call_key(renumber(step, mapping), registry)
        twin = done.get(key) if key is not None else None
        if twin is not None:
            mapping[step.id] = twin
            lines.append(pick(lang, f"{twin} 已经完成了“{step.description}”，没有再做一次",
                              f"{twin} already did “{step.description}”; it is not done again"))
    if mapping:
        plan.steps = [renumber(s, mapping) if s.status == "pending" else s
                      for s in plan.steps if s.id not in mapping]
    return lines

