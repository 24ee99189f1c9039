"""Conditions the request states, taken from the rule planner when the model left them out.

A small model writes "If the order has arrived, refund the broken one" as a refund step's
description and leaves ``condition`` empty, even after the corrective retry asks for it
(:mod:`core.planning.guards`). The offline rules read the same clause and draft the same
refund with a checkable condition over the same lookup (``s2.status == 'delivered'``).
:func:`adopt_rule_conditions` gives the model's step that condition, re-pointed at the
model's own lookup step, and says so on the plan, which a person approves before it runs.
It adopts nothing it cannot map: same tools, the same identifiers in the arguments, and
only the conditions the rules understand from words (an order that has arrived): the
rules draft every conditional refund on delivery, which is not what "if the courier lost
it" says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from core.base.language import detect_language, pick
from core.plan.model import Plan, Step
from core.planning.guards import states_a_condition
from core.planning.offline import rule_drafts
from core.tools.registry import ToolRegistry

__all__ = ["adopt_rule_conditions", "map_calls"]

_STEP_REF = re.compile(r"\bs\d+\b")
_IDENTIFIER = re.compile(r"\d{3,}")
# words for "the order has arrived", the one condition the rules draft from words
_ARRIVED = re.compile(r"\b(?:arriv|deliver|receiv|signed)\w*|到了|到货|签收|送达|收到",
                      re.IGNORECASE)
_ARRIVAL_CONDITION = re.compile(r"^\s*s\d+\.status\s*==\s*'delivered'\s*$")


def adopt_rule_conditions(request: str, plan: Plan, registry: ToolRegistry, *,
                          draft: Plan | None = None) -> list[str]:
    """Give each pending side effect whose description states a condition it lacks the
    rule planner's condition for the same call; return the step ids given one.

    ``draft`` is the rule planner's plan for ``request`` when the caller has it."""
    lacking = [step for step in plan.steps if step.status == "pending" and not step.condition
               and _side_effect(step, registry) and states_a_condition(step)]
    if not lacking:
        return []
    draft = draft if draft is not None else next(iter(rule_drafts(request, registry)), None)
    if draft is None:
        return []
    adopted = []
    for step in lacking:
        twin = next((d for d in draft.steps if d.condition and _same_target(d, step)
                     and _ARRIVAL_CONDITION.match(d.condition)
                     and _ARRIVED.search(step.description)), None)
        mapping = _map_references(twin, draft, plan, step) if twin else None
        if twin is None or mapping is None:
            continue
        before = list(step.depends_on)
        step.condition = _STEP_REF.sub(lambda ref, ids=mapping: ids[ref.group(0)],
                                       twin.condition or "")
        step.depends_on = [*before, *(sid for sid in mapping.values() if sid not in before)]
        if plan.validate(registry):  # never leave a plan worse than it was
            step.condition, step.depends_on = None, before
            continue
        adopted.append(step.id)
        plan.warnings.append(pick(
            detect_language(plan.goal),
            f"{step.id}（{step.tool}）的条件只写在描述里；已按请求的原话补上 condition："
            f"{step.condition}，请在批准前核对。",
            f"{step.id} ({step.tool}) stated its condition only in words; the request's "
            f"wording gave it the condition {step.condition}: check it before approving."))
    return adopted


def _side_effect(step: Step, registry: ToolRegistry) -> bool:
    return step.tool in registry and registry.get(step.tool or "").side_effect


def _identifiers(step: Step) -> set[str]:
    return {found for value in step.args.values() for found in _IDENTIFIER.findall(str(value))}


def _same_target(draft_step: Step, step: Step) -> bool:
    """The same tool on the same identifiers (an order number, say): a looser match than
    the same call (core.plan.calls), since the draft and the model word the rest apart."""
    return draft_step.tool == step.tool and _identifiers(draft_step) == _identifiers(step)


def _map_references(twin: Step, draft: Plan, plan: Plan, step: Step) -> dict[str, str] | None:
    """Draft step id → the model's step making the same call, for every step the draft's
    condition reads; None when one has no such step before ``step``."""
    refs = set(_STEP_REF.findall(twin.condition or ""))
    return map_calls(refs, draft, plan.steps[:plan.steps.index(step)]) or None


def map_calls(refs: Iterable[str], draft: Plan, steps: Sequence[Step]) -> dict[str, str] | None:
    """Each of the draft's step ids in ``refs`` → the first of ``steps`` making the same
    call (the same tool on the same identifiers); None when one has no such step."""
    mapping = {}
    for ref in refs:
        if ref not in draft.ids():
            return None
        source = draft.step(ref)
        match = next((s for s in steps if s.tool and _same_target(source, s)), None)
        if match is None:
            return None
        mapping[ref] = match.id
    return mapping
