"""Actions the request asks for that no step takes: "…and if it has, refund the broken one".

A small model may fold the refund into the lookup's description ("Check if order 88231 has
arrived, and if it has, refund the broken one", calling ``query_order``), so that clause
coverage (:mod:`core.planning.coverage`) finds the word "refund" and is satisfied while
nothing would refund; asked again, it writes the same plan. The offline rules read the
request's clauses and know which ones ask for a side effect (a refund, not the refund
policy), and draft the step with its condition over the lookup it needs.

:func:`adopt_rule_actions` adds the rules' step when the model's plan makes the lookups it
reads (the same tools on the same identifiers), re-pointed at the model's steps, and says
so on the plan, which a person approves before anything runs. :func:`missing_action_problems`
names each such tool still missing, for the corrective retry and then as a warning.
"""

from __future__ import annotations

import json

from core.base.language import detect_language, pick
from core.plan.model import REFERENCE, Plan, Step
from core.plan.versions import STEP_NAME, renumber
from core.planning.offline import rule_drafts
from core.planning.rule_conditions import map_calls
from core.tools.registry import ToolRegistry

__all__ = ["adopt_rule_actions", "missing_action_problems"]

def adopt_rule_actions(request: str, plan: Plan, registry: ToolRegistry, *,
                       draft: Plan | None = None) -> list[str]:
    """Add to ``plan`` each rule-drafted side effect it lacks and whose lookups it makes;
    return the ids of the steps added. ``draft`` is the rule planner's plan for
    ``request`` when the caller has it."""
    draft = draft if draft is not None else next(iter(rule_drafts(request, registry)), None)
    if draft is None:
        return []
    synthesis = plan.synthesis_step()
    added = []
    for wanted in _missing(draft, plan, registry):
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
        added.append(step.id)
        plan.warnings.append(pick(
            detect_language(plan.goal),
            f"计划里没有请求要求的 {step.tool}；已按请求的原话加上 {step.id}"
            f"（“{step.description}”），请在批准前核对。",
            f"The plan lacked the {step.tool} the request asks for; {step.id} "
            f'("{step.description}") was added from the request\'s wording: check it '
            "before approving."))
    return added


def missing_action_problems(request: str, plan: Plan, registry: ToolRegistry, *,
                            draft: Plan | None = None) -> list[str]:
    """One problem per side-effecting tool the request asks for that no step calls."""
    lang = detect_language(request)
    problems = []
    draft = draft if draft is not None else next(iter(rule_drafts(request, registry)), None)
    for step in _missing(draft, plan, registry) if draft is not None else []:
        example = json.dumps({"tool": step.tool, "args": step.args}, ensure_ascii=False)
        problems.append(pick(
            lang,
            f"请求要求执行 {step.tool}（“{step.description}”），但没有步骤调用它：请加上这一步，"
            f"例如 {example}，条件写进 condition。",
            f'The request asks for {step.tool} ("{step.description}"), but no step calls '
            f"it: add that step, e.g. {example}, with any condition in \"condition\"."))
    return problems


def _missing(draft: Plan, plan: Plan, registry: ToolRegistry) -> list[Step]:
    """The draft's first step for each side-effecting tool ``plan`` never calls."""
    called = {step.tool for step in plan.steps}
    missing = []
    for step in draft.steps:
        if step.tool in registry and step.tool not in called and registry.get(
                step.tool or "").side_effect:
            called.add(step.tool)
            missing.append(step)
    return missing


def _map_reads(wanted: Step, draft: Plan, plan: Plan) -> dict[str, str] | None:
    """Draft step id → the model's step making the same call, for every draft step
    ``wanted`` reads; None when one has no such step."""
    reads = set(wanted.depends_on) | set(STEP_NAME.findall(wanted.condition or ""))
    reads |= {m.group(1) for m in REFERENCE.finditer(json.dumps(wanted.args, default=str))}
    return map_calls(reads, draft, plan.steps)
