"""Final repair: an identifier a lookup still invents after the corrective retry is removed.

The argument is then missing, as if the plan had never written it: read from the one step it
depends on whose tool returns it (core.planning.checks.id_sources.read_from_dependency: the
model that invented it twice might invent it again), else inferred from the step's inputs
when the step runs, where an inferred identifier seen nowhere still does not run
(core.execution.executor), or the person fills it in. Never ``null``, which no
schema of an identifier takes. A side-effecting step keeps its value: removed, its target
would be chosen at run time, out of the sight of the person approving it, who sees the id
and the grounding warning instead. The plan's grounding warning about a removed value,
worded for the model, gives way to a note saying it was removed.
"""

from __future__ import annotations

from core.plan.approval import has_side_effect
from core.plan.model import Plan
from core.planning.checks.grounding import invented_id, ungrounded_ids
from core.planning.checks.id_sources import read_from_dependency
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "remove_invented_ids"]


def remove_invented_ids(plan: Plan, context: CheckContext) -> list[Problem]:
    """Remove every invented identifier argument of a read-only step, reading it from the
    dependency that returns it where there is one; one note each."""
    removed: list[Problem] = []
    stale: set[str] = set()
    for step, name, value in list(ungrounded_ids(plan, context)):
        if has_side_effect(step, context.registry):
            continue
        stale.add(invented_id(step, name, value).worded(context.language))
        step.args = {key: kept for key, kept in (step.args or {}).items() if key != name}
        removed.append(Problem("check.invented_id_removed",
                               {"step": step.id, "name": name, "value": repr(value)}, step.id))
        linked = read_from_dependency(plan, step, name, context)
        if linked is not None:
            removed.append(linked)
    plan.warnings = [warning for warning in plan.warnings if warning not in stale]
    return removed


CHECK = Check(name="clear_invented", kind="final",
              stages=frozenset({"draft", "replan", "checkpoint", "follow_up"}),
              run=remove_invented_ids, weak_models_only=False)
