"""Problem: a replan that plans again the very call that just failed.

Asked to replan after ``time__convert_time`` refused ``{{s4.datetime}}`` ("Expected
HH:MM"), a small model planned the same call as "convert the time again", three versions
in a row, and the run failed after them. The same call (core.plan.calls) fails the same
way, unless the service only failed to answer (a timeout, a 429: trying again is the fix)
or the new step runs under another condition (a refund refused as "not delivered", now
guarded by the order's status).
The replanner's rules already say to fix the cause or take another route; this says which
step did not, with the error, for the model's corrective turn (then it stays a warning,
for the person approving). Steps whose arguments are still to be inferred are never the
same call.
"""

from __future__ import annotations

from core.errors import is_transport_error
from core.plan.calls import call_key
from core.plan.model import Plan
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "repeated_failures"]


def repeated_failures(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per pending step that repeats the call of a step that failed, other
    than to a service that did not answer, in the plan before the replan
    (``context.before``)."""
    if context.before is None:
        return []
    failed = {key: step for step in context.before.steps
              if step.status == "failed" and not is_transport_error(step.error)
              and (key := call_key(step, context.registry, condition=True)) is not None}
    problems = []
    for step in plan.steps:
        earlier = failed.get(call_key(step, context.registry, condition=True) or "")
        if step.status == "pending" and earlier is not None:
            problems.append(Problem("check.repeats_failed_call", {
                "step": step.id, "failed": earlier.id, "tool": step.tool,
                "error": earlier.error or "—"}, step.id))
    return problems


CHECK = Check(name="repeated_failures", kind="problem", stages=frozenset({"replan"}),
              run=repeated_failures, weak_models_only=False)
