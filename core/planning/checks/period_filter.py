"""Problem: SQL that ignores the period the request names ("cancelled in Q1 2026", "last
quarter").

A small model counts rows of all time for a question about one quarter. A pending step
calling an SQL tool (one whose keywords include "sql") whose arguments never mention the
year of the request's period is sent back with the period's bounds, so that the corrective
retry adds the date condition; what remains becomes a warning.
"""

from __future__ import annotations

import json

from core.plan.model import Plan
from core.planning.checks.shape import Check, CheckContext, Problem
from core.planning.periods import request_period

__all__ = ["CHECK", "period_ignored"]


def period_ignored(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per pending SQL step whose query leaves out the year of the request's
    period (core.planning.periods: explicit, or relative to today and the data)."""
    period = request_period(context.request, context.registry)
    if period is None:
        return []
    year, start, end = str(period.start.year), period.start.isoformat(), period.end.isoformat()
    registry = context.registry
    return [Problem("check.period_ignored", {"start": start, "end": end, "step": step.id},
                    step.id)
            for step in plan.steps
            if step.status == "pending" and step.tool in registry
            and "sql" in registry.get(step.tool or "").keywords
            and year not in json.dumps(step.args, ensure_ascii=False)]


CHECK = Check(name="period_filter", kind="problem", stages=frozenset({"draft"}),
              run=period_ignored, weak_models_only=True)
