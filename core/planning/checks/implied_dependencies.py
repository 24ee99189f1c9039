"""Repair: a step that reads another step's result depends on it.

A step whose arguments say ``{{s1.price}}`` (or whose condition reads ``s1.status``) can
only run after s1. A small model often writes the reference and leaves ``depends_on``
out, and asked again it often does the same, while the fix is certain: the link is added
where the referenced step exists and makes no cycle (core.plan.implied_deps); anything
else is left for validation to name. It runs first, so that every other check sees the
plan's real order. It completes what the step already says, so it leaves no note.
"""

from __future__ import annotations

from core.plan.implied_deps import add_implied_dependencies
from core.plan.model import Plan
from core.planning.checks.shape import STAGES, Check, CheckContext, Problem

__all__ = ["CHECK", "link_what_steps_read"]


def link_what_steps_read(plan: Plan, context: CheckContext) -> list[Problem]:
    """Add to each pending step the steps it reads but does not depend on."""
    add_implied_dependencies(plan)
    return []


CHECK = Check(name="implied_dependencies", kind="repair", stages=frozenset(STAGES),
              run=link_what_steps_read, weak_models_only=True)
