"""The demo pack's own plan check: a refund's arrival condition, taken from its rule draft.

A small model writes "If the order has arrived, refund the broken one" as a refund step's
description and leaves ``condition`` empty, even after the corrective retry asks for it
(the engine's condition_in_words problem). The demo's rules read the same clause and draft
the same refund with a checkable condition over the same lookup (``s2.status ==
'delivered'``). :func:`adopt_arrival_conditions` gives the model's step that condition,
re-pointed at the model's own lookup step, and says so on the plan, which a person
approves before it runs. It adopts nothing it cannot map (the same tools on the same
identifiers) and only the condition the rules understand from words, an order that has
arrived: the rules draft every conditional refund on delivery, which is not what "if the
courier lost it" says. A repair for weak models, run at the draft stage.
"""

from __future__ import annotations

import re

from core.plan.model import Plan, Step
from core.planning.checks.guards import states_a_condition
from core.planning.checks.rule_actions import map_calls, same_target
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["ARRIVAL_CONDITIONS", "DEMO_CHECKS", "adopt_arrival_conditions"]

_STEP_REF = re.compile(r"\bs\d+\b")
# words for "the order has arrived", the one condition the rules draft from words
_ARRIVED = re.compile(r"\b(?:arriv|deliver|receiv|signed)\w*|到了|到货|签收|送达|收到",
                      re.IGNORECASE)
_ARRIVAL_CONDITION = re.compile(r"^\s*s\d+\.status\s*==\s*'delivered'\s*$")


def adopt_arrival_conditions(plan: Plan, context: CheckContext) -> list[Problem]:
    """Give each pending side effect whose description states an arrival it lacks as a
    condition the rule draft's condition for the same target; one note per step."""
    registry = context.registry
    lacking = [step for step in plan.steps if step.status == "pending" and not step.condition
               and step.tool in registry and registry.get(step.tool or "").side_effect
               and states_a_condition(step)]
    draft = context.draft if lacking else None
    if draft is None:
        return []
    adopted = []
    for step in lacking:
        twin = next((d for d in draft.steps if d.condition and same_target(d, step)
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
        adopted.append(Problem("check.condition_adopted", {
            "step": step.id, "tool": step.tool, "condition": step.condition}, step.id))
    return adopted


def _map_references(twin: Step, draft: Plan, plan: Plan, step: Step) -> dict[str, str] | None:
    """Draft step id → the model's step with the same target, for every step the draft's
    condition reads; None when one has no such step before ``step``."""
    refs = set(_STEP_REF.findall(twin.condition or ""))
    return map_calls(refs, draft, plan.steps[:plan.steps.index(step)]) or None


ARRIVAL_CONDITIONS = Check(name="demo.arrival_conditions", kind="repair",
                           stages=frozenset({"draft"}), run=adopt_arrival_conditions,
                           weak_models_only=True)
DEMO_CHECKS = (ARRIVAL_CONDITIONS,)
