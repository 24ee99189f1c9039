"""Repair: a side effect the request asks for, taken from a pack's rule draft when the
model's plan makes the lookups it reads.

A small model may fold an action into a lookup's description ("Check whether the record is
ready, and if it is, act on it", calling only the lookup), so that clause coverage finds
the action's word and is satisfied while nothing would act; asked again, it writes the same
plan. A pack's rule draft knows which clauses ask for a side effect and drafts the step with
its condition over the lookup it needs. Its step is added when the model's plan makes the
lookups it reads (:func:`map_calls`: the same tools on the same identifiers), re-pointed at
the model's steps, and the plan says so; a person approves it before anything runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from core.plan.approval import has_side_effect
from core.plan.model import REFERENCE, STEP_NAME, Plan, Step
from core.plan.versions import renumber
from core.planning.checks.shape import Check, CheckContext, Problem
from core.tools.registry import ToolRegistry

__all__ = ["CHECK", "adopt_rule_actions", "map_calls", "missing_effects", "same_target"]

_IDENTIFIER = re.compile(r"\d{3,}")


def adopt_rule_actions(plan: Plan, context: CheckContext) -> list[Problem]:
    """Add to ``plan`` each drafted side effect it lacks and whose lookups it makes; one
    note per step added."""
    draft, registry = context.draft, context.registry
    if draft is None:
        return []
    synthesis = plan.synthesis_step()
    added = []
    for wanted in missing_effects(draft, plan, registry):
        mapping = _map_reads(wanted, draft, plan)
        if mapping is None:
            continue
        step = renumber(wanted, {**mapping, wanted.id: plan.next_step_id()})
        before = (list(plan.steps), list(synthesis.depends_on) if synthesis else [])
        position = plan.steps.index(synthesis) if synthesis else len(plan.steps)
        plan.steps.insert(position, step)
        if synthesis is not None:
            synthesis.depends_on.append(step.id)
        if plan.validate(registry):  # never leave a plan worse than it was
            plan.steps = before[0]
            if synthesis is not None:
                synthesis.depends_on = before[1]
            continue
        added.append(Problem("check.action_adopted", {
            "tool": step.tool, "step": step.id, "description": step.description}, step.id))
    return added


def missing_effects(draft: Plan, plan: Plan, registry: ToolRegistry) -> list[Step]:
    """The draft's first step for each side-effecting tool ``plan`` never calls."""
    called = {step.tool for step in plan.steps}
    missing = []
    for step in draft.steps:
        if step.tool not in called and has_side_effect(step, registry):
            called.add(step.tool)
            missing.append(step)
    return missing


def _map_reads(wanted: Step, draft: Plan, plan: Plan) -> dict[str, str] | None:
    """Draft step id → the model's step making the same call, for every draft step
    ``wanted`` reads; None when one has no such step."""
    reads = set(wanted.depends_on) | set(STEP_NAME.findall(wanted.condition or ""))
    reads |= {m.group(1) for m in REFERENCE.finditer(json.dumps(wanted.args, default=str))}
    return map_calls(reads, draft, plan.steps)


def same_target(draft_step: Step, step: Step) -> bool:
    """The same tool on the same identifiers (the numbers in its arguments): a looser match
    than the same call (core.plan.calls), since a draft and a model word the rest apart."""
    return draft_step.tool == step.tool and _identifiers(draft_step) == _identifiers(step)


def _identifiers(step: Step) -> set[str]:
    return {found for value in (step.args or {}).values()
            for found in _IDENTIFIER.findall(str(value))}


def map_calls(refs: Iterable[str], draft: Plan, steps: Sequence[Step]) -> dict[str, str] | None:
    """Each of the draft's step ids in ``refs`` → the first of ``steps`` with the same
    target (:func:`same_target`); None when one has no such step."""
    mapping = {}
    for ref in refs:
        if ref not in draft.ids():
            return None
        source = draft.step(ref)
        match = next((s for s in steps if s.tool and same_target(source, s)), None)
        if match is None:
            return None
        mapping[ref] = match.id
    return mapping


CHECK = Check(name="rule_actions", kind="repair", stages=frozenset({"draft"}),
              run=adopt_rule_actions, weak_models_only=True)
