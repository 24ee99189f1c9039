"""The approved plan is the boundary: which steps of a new version a person has not approved.

A person approves a plan version; its side-effecting steps are then the only side effects
the run may cause. A later version (a replan, a checkpoint, a retry, a follow-up) *widens*
that boundary when one of its pending side-effecting steps is not among the approved ones:
it is new, or its tool, arguments or condition changed, or a step its arguments or its
condition read changed. Read-only steps never widen it, whatever they do.

A step keeps its approval when a new version renumbers it: an approved side-effecting step
covers one pending step with the same definition, under its own id or (when the approved
id is gone or no longer pending) under a new one. A step that already ran used its approval.

A step's definition here is not "the same call" of core.plan.calls: what a person approved
includes arguments left to be inferred ("refund the broken order", worked out when it runs),
what every step it reads does in turn, and a reasoning step's description; so two steps
with no arguments yet cover each other here when their definitions match, while neither
is ever the same call as another.
"""

from __future__ import annotations

import json
from typing import Any

from core.plan.model import STEP_NAME, Plan, Step, substitute_references
from core.tools.registry import ToolRegistry

__all__ = ["has_side_effect", "widening"]

_MAX_DEPTH = 64  # references nest no deeper in a valid plan; a cycle stops here too
_SPENT = frozenset({"running", "completed"})  # a step in these used its approval


def has_side_effect(step: Step, registry: ToolRegistry) -> bool:
    """True when ``step`` calls a side-effecting tool (an unknown tool counts: it may)."""
    if step.tool is None:
        return False
    return step.tool not in registry or registry.get(step.tool).side_effect


def widening(approved: Plan, proposed: Plan, registry: ToolRegistry) -> list[str]:
    """The ids of ``proposed``'s pending side-effecting steps that ``approved`` does not cover.

    Empty when ``proposed`` needs no new approval (only read-only changes, or none).
    """
    risky = {tool.name for tool in registry if tool.side_effect}

    def effect(step: Step) -> bool:  # has_side_effect, with one look-up per step
        return step.tool is not None and (step.tool in risky or step.tool not in registry)

    if proposed is approved:  # a plan covers itself: every step is under its own grant
        return []
    grants = {s.id: _signature(approved, s) for s in approved.steps if effect(s)}
    spent = {s.id for s in proposed.steps if s.status in _SPENT}
    candidates = [s for s in proposed.steps if s.status == "pending" and effect(s)]
    signatures = {s.id: _signature(proposed, s) for s in candidates}
    uncovered = []
    for step in candidates:  # first a step under its own approved id
        if grants.get(step.id) == signatures[step.id]:
            del grants[step.id]
        else:
            uncovered.append(step)
    alive = spent | {s.id for s in candidates}
    free = [(step_id, sig) for step_id, sig in grants.items()
            if step_id not in alive or step_id in {s.id for s in uncovered}]
    widened = []
    for step in uncovered:  # then a renumbered copy of an approved step
        match = next((i for i, (_, sig) in enumerate(free) if sig == signatures[step.id]),
                     None)
        if match is None:
            widened.append(step.id)
        else:
            free.pop(match)
    return widened


def _signature(plan: Plan, step: Step) -> str:
    """What a step does, with every step it reads replaced by what that step does."""
    steps = {s.id: s for s in plan.steps}
    return json.dumps(_what(steps, step, 0), sort_keys=True, ensure_ascii=False, default=str)


def _what(steps: dict[str, Step], step: Step, depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH:
        return {"id": step.id}

    def read(step_id: str) -> Any:
        other = steps.get(step_id)
        return step_id if other is None or other is step else _what(steps, other, depth + 1)

    what: dict[str, Any] = {"tool": step.tool, "args": substitute_references(
        step.args or {},
        lambda m: json.dumps(read(m.group(1)), sort_keys=True, default=str) + m.group(2))}
    if step.tool is None:  # a reasoning step is what it was asked to do
        what["description"] = step.description
    if step.condition:
        what["condition"] = STEP_NAME.sub(
            lambda m: json.dumps(read(m.group(1)), sort_keys=True, default=str), step.condition)
    return what
