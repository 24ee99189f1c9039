"""Problem: SQL that ignores the period the request names ("cancelled in Q1 2026").

A small model counts rows of all time for a question about one quarter. A pending step
calling an SQL tool (one whose keywords include "sql") whose arguments never mention the
year the request names is sent back with the period's bounds, so that the corrective retry
adds the date condition; what remains becomes a warning.
"""

from __future__ import annotations

import json
import re

from core.plan.model import Plan
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "period_ignored", "requested_period"]

# a year as a period ("in 2026", "Q1 2026", "2026 年"), not a budget ("under 2000")
_YEAR = re.compile(r"(?<!\d)(20\d{2})\s*年|\b(?:in|of|during|for|year|Q[1-4])\s+(20\d{2})\b",
                   re.IGNORECASE)
_QUARTERS = (
    re.compile(r"\b(?:first|1st)\s+quarter\b|\bQ1\b|第一季度|一季度|1\s*季度", re.IGNORECASE),
    re.compile(r"\b(?:second|2nd)\s+quarter\b|\bQ2\b|第二季度|二季度|2\s*季度", re.IGNORECASE),
    re.compile(r"\b(?:third|3rd)\s+quarter\b|\bQ3\b|第三季度|三季度|3\s*季度", re.IGNORECASE),
    re.compile(r"\b(?:fourth|4th)\s+quarter\b|\bQ4\b|第四季度|四季度|4\s*季度", re.IGNORECASE),
)


def requested_period(request: str) -> tuple[str, str, str] | None:
    """(year, first day, day after the last) of the one year the request names, narrowed to
    a quarter when it names one; None when it names no year or several."""
    years = {chinese or english for chinese, english in _YEAR.findall(request)}
    if len(years) != 1:
        return None
    year = int(years.pop())
    quarters = [index for index, pattern in enumerate(_QUARTERS) if pattern.search(request)]
    if len(quarters) != 1:
        return str(year), f"{year}-01-01", f"{year + 1}-01-01"
    first = 3 * quarters[0] + 1
    end = f"{year + 1}-01-01" if first == 10 else f"{year}-{first + 3:02d}-01"
    return str(year), f"{year}-{first:02d}-01", end


def period_ignored(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per pending SQL step whose query leaves out the request's year."""
    period = requested_period(context.request)
    if period is None:
        return []
    year, start, end = period
    registry = context.registry
    return [Problem("check.period_ignored", {"start": start, "end": end, "step": step.id},
                    step.id)
            for step in plan.steps
            if step.status == "pending" and step.tool in registry
            and "sql" in registry.get(step.tool or "").keywords
            and year not in json.dumps(step.args, ensure_ascii=False)]


CHECK = Check(name="period_filter", kind="problem", stages=frozenset({"draft"}),
              run=period_ignored, weak_models_only=True)
