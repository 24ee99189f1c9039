"""Repair: a side effect planned twice in one plan is done once, unless the request asks again.

Two pending side-effecting steps that make the same call under the same condition
(core.plan.calls), neither ordered after the other, are one side effect planned twice: each
of two parts of a request ("if delivered, refund it", "then tell me the refund number") got
its own refund of the same order, in one list of steps or in two phases. The later step is
folded into the first: steps that read it read the first instead, and a phase it leaves
without steps is taken out of the plan (the phases after it come after the phases it came
after). The plan says what was folded.

Nothing changes when the request asks for the thing again ("twice", "again", "再…一次":
core.planning.clauses.asks_repeat), when one step is ordered after the other (done,
checked, done again), when their arguments or conditions differ, when arguments are still
to be inferred, or when the folded plan would have a problem the plan did not have.
"""

from __future__ import annotations

from core.base.copies import copied
from core.plan.approval import has_side_effect
from core.plan.calls import call_key
from core.plan.dag import ancestors
from core.plan.model import Phase, Plan
from core.plan.versions import renumber
from core.planning.checks.shape import Check, CheckContext, Problem
from core.planning.clauses import asks_repeat

__all__ = ["CHECK", "fold_twin_effects"]


def fold_twin_effects(plan: Plan, context: CheckContext) -> list[Problem]:
    """Fold each pending side effect that repeats an earlier one of ``plan`` (see the
    module docstring) into it; one note per folded step and per phase taken out."""
    if asks_repeat(context.request):
        return []
    mapping = _twins(plan, context)
    if not mapping:
        return []
    folded = copied(plan)
    folded.steps = [renumber(s, mapping) if s.status == "pending" else s
                    for s in folded.steps if s.id not in mapping]
    emptied = _without_emptied_phases(folded, plan)
    before = {str(problem) for problem in plan.validate(context.registry)}
    if any(str(problem) not in before for problem in folded.validate(context.registry)):
        return []  # never leave a plan worse than it was
    held = {plan.step(repeat).phase: repeat for repeat in mapping}
    notes = [Problem("check.twin_effect", {"step": repeat, "twin": twin,
                                           "tool": plan.step(twin).tool}, twin)
             for repeat, twin in mapping.items()]
    notes += [Problem("check.twin_effect_phase", {"phase": phase.id, "title": phase.title,
                                                  "step": held[phase.id]})
              for phase in emptied]
    plan.steps, plan.phases = folded.steps, folded.phases
    return notes


def _twins(plan: Plan, context: CheckContext) -> dict[str, str]:
    """Each pending side-effecting step that repeats an earlier one → that earlier step."""
    registry = context.registry
    graph = plan.dependency_graph()
    first: dict[str, str] = {}
    mapping: dict[str, str] = {}
    for step in plan.steps:
        if step.status != "pending" or not has_side_effect(step, registry):
            continue
        key = call_key(renumber(step, mapping), registry, condition=True)
        if key is None:
            continue  # arguments still to be inferred: not the same call as any other
        twin = first.setdefault(key, step.id)
        if twin == step.id:
            continue
        ordered = (twin in ancestors(graph, step.depends_on)
                   or step.id in ancestors(graph, graph[twin]))
        if not ordered:
            mapping[step.id] = twin
    return mapping


def _without_emptied_phases(folded: Plan, plan: Plan) -> list[Phase]:
    """Take out of ``folded`` the phases that had steps in ``plan`` and have none now;
    the phases after one come after its own phases instead. The phases taken out."""
    kept = {step.phase for step in folded.steps}
    emptied = [phase for phase in folded.phases
               if phase.id not in kept and plan.steps_of(phase.id)]
    if not emptied:
        return []
    gone = {phase.id: phase.depends_on for phase in emptied}

    def instead(deps: list[str]) -> list[str]:
        found: dict[str, None] = {}
        seen: set[str] = set()
        waiting = list(deps)
        while waiting:
            dep = waiting.pop(0)
            if dep in seen:
                continue
            seen.add(dep)
            if dep in gone:
                waiting += gone[dep]
            else:
                found[dep] = None
        return list(found)

    folded.phases = [phase.model_copy(update={"depends_on": instead(phase.depends_on)})
                     for phase in folded.phases if phase.id not in gone]
    return emptied


CHECK = Check(name="twin_effects", kind="repair",
              stages=frozenset({"draft", "replan", "checkpoint", "follow_up"}),
              run=fold_twin_effects, weak_models_only=False)
