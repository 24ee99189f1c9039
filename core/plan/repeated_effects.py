"""A new version must not do again a side effect that already ran.

A retry plan that started over planned the approved refund a second time. A pending
side-effecting step with the same tool and arguments as a completed one is folded into
that completed step: steps that read it read the completed step's result instead.
"""

from __future__ import annotations

import json

from core.base.language import detect_language, pick
from core.plan.approval import has_side_effect
from core.plan.model import Plan, Step
from core.plan.versions import renumber
from core.tools.registry import ToolRegistry

__all__ = ["fold_repeated_effects"]


def fold_repeated_effects(plan: Plan, registry: ToolRegistry) -> list[str]:
    """Remove from ``plan`` each pending step that repeats a completed side effect.

    Returns one line per removed step, in the request's language (empty: nothing repeated).
    """
    done = {_effect(s): s.id for s in plan.steps
            if s.status == "completed" and has_side_effect(s, registry)}
    mapping: dict[str, str] = {}
    lines = []
    lang = detect_language(plan.goal)
    for step in plan.steps:
        if step.status != "pending" or not has_side_effect(step, registry):
            continue
        twin = done.get(_effect(renumber(step, mapping)))
        if twin is not None:
            mapping[step.id] = twin
            lines.append(pick(lang, f"{twin} 已经完成了“{step.description}”，没有再做一次",
                              f"{twin} already did “{step.description}”; it is not done again"))
    if mapping:
        plan.steps = [renumber(s, mapping) if s.status == "pending" else s
                      for s in plan.steps if s.id not in mapping]
    return lines


def _effect(step: Step) -> str:
    """Tool and literal arguments only. Not approval's signature, which also compares the
    condition: a repeat whose condition reads a new copy of a lookup is still a repeat."""
    return json.dumps([step.tool, step.args], sort_keys=True, ensure_ascii=False, default=str)
