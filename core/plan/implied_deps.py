"""Dependencies a step's own arguments and condition already imply.

A step whose arguments say ``{{s1.price}}`` (or whose condition reads ``s1.status``) can
only run after s1. Small models often write the reference and forget ``depends_on``, and a
corrective retry costs them replies and often fails again, while the fix is certain: so
:func:`add_implied_dependencies`
adds such links where the referenced step exists and the link makes no cycle, and leaves
everything else for validation to report.
"""

from __future__ import annotations

from contextlib import suppress

from core.base.expressions import ExpressionError, condition_step_refs, is_expression_condition
from core.plan.dag import ancestors
from core.plan.model import Plan, Step, references_in

__all__ = ["add_implied_dependencies", "steps_read"]


def add_implied_dependencies(plan: Plan) -> list[str]:
    """Add to each pending step of ``plan`` (in place) the steps it reads but does not
    depend on; return "sN → sM" for each link added."""
    ids = set(plan.ids())
    added = []
    for step in plan.steps:
        if step.status != "pending":
            continue
        for ref in sorted(steps_read(step) - set(step.depends_on) - {step.id}):
            graph = {s.id: s.depends_on for s in plan.steps}
            if ref in ids and step.id not in ancestors(graph, [ref]):
                step.depends_on.append(ref)
                added.append(f"{step.id} → {ref}")
    return added


def steps_read(step: Step) -> set[str]:
    """The ids of the steps whose results ``step`` reads: in its arguments and its
    condition."""
    refs = references_in(step.args or {})
    if step.condition and is_expression_condition(step.condition):
        with suppress(ExpressionError):  # validation words the parse error
            refs |= condition_step_refs(step.condition)
    return refs
