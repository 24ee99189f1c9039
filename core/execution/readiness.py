"""Which steps of a plan may start, which never can, and whether a condition skips one.

The one scheduling rule, read by the coordinator, by direct answers and by tests: a
pending step is *ready* when each of its dependencies completed, was skipped, or failed
in a way classified as ignorable; it is *blocked* when a dependency failed fatally,
directly or through another blocked step. An expression condition is evaluated over the
results so far; a condition written in prose is left to the executor's model.

In a plan with phases, a step also waits for the phases its phase comes after
(:func:`waiting_on_phases`): each must have finished (completed, or skipped) and, when it
has a done-definition, been judged against it. So a later phase never starts on the
results of a phase that may still be replanned.
"""

from __future__ import annotations

from collections.abc import Collection

from core.base.expressions import evaluate_condition, is_expression_condition
from core.execution.phase_check import check_key
from core.plan.model import Plan, Step

__all__ = ["blocked_steps", "condition_holds", "ready_steps", "waiting_on_phases"]

_DONE = frozenset({"completed", "skipped"})


def ready_steps(plan: Plan, *, ignorable: Collection[str] = (),
                held: Collection[str] = ()) -> list[Step]:
    """Pending steps, in plan order, whose dependencies are all done and none ``held``.

    A dependency is done when it completed or was skipped, or failed with its id in
    ``ignorable``; a dependency in ``held`` (e.g. a step that missed its success criteria
    while a replan may still come) keeps its dependents waiting.
    """
    done = {s.id for s in plan.steps
            if s.status in _DONE or (s.status == "failed" and s.id in ignorable)}
    return [s for s in plan.steps if s.status == "pending"
            and all(d in done and d not in held for d in s.depends_on)]


def waiting_on_phases(plan: Plan, judged: Collection[str]) -> set[str]:
    """The pending steps whose phase comes after a phase that is not done yet: not
    finished, or finished with a done-definition whose key (``check_key``) is not in
    ``judged``. Empty for a plan without phases."""
    if not plan.phases:
        return set()
    statuses = plan.phase_statuses()
    done = {phase.id for phase in plan.phases if statuses.get(phase.id) == "skipped" or (
        statuses.get(phase.id) == "completed"
        and (not phase.done_when or check_key(plan, phase.id) in judged))}
    after = {phase.id: phase.depends_on for phase in plan.phases}
    return {step.id for step in plan.steps if step.status == "pending"
            and any(dep not in done for dep in after.get(step.phase or "", ()))}


def blocked_steps(plan: Plan, *, ignorable: Collection[str] = ()
                  ) -> list[tuple[Step, list[str]]]:
    """Pending steps that can never run, each with the dependencies that stop it.

    A step is blocked by a dependency that failed (unless its id is in ``ignorable``) or
    that is itself blocked; steps come in plan order, a blocked one before its dependents.
    """
    stopped = {s.id for s in plan.steps if s.status == "failed" and s.id not in ignorable}
    blocked: list[tuple[Step, list[str]]] = []
    changed = True
    while changed:
        changed = False
        for step in plan.steps:
            culprits = [d for d in step.depends_on if d in stopped]
            if step.status == "pending" and culprits and step.id not in stopped:
                blocked.append((step, culprits))
                stopped.add(step.id)
                changed = True
    return blocked


def condition_holds(plan: Plan, step: Step) -> bool | None:
    """Whether the step's expression condition holds over the results so far.

    None when there is nothing to evaluate here: no condition, or one written in prose
    (the executor asks the model). ExpressionError when the expression cannot be evaluated.
    """
    if not step.condition or not is_expression_condition(step.condition):
        return None
    return evaluate_condition(step.condition, plan.results())
