"""How large a plan a run takes: past a size, a plan is refused before anything runs.

A flat plan past ``PLANBOARD_MAX_STEPS`` steps (200 by default) cannot be reviewed as one
list, and every replan would rewrite all of it; it is refused with a one-line message that
suggests phases. A plan with phases is reviewed and replanned a phase at a time, so the
limit holds for each phase. The check reads only the step count: it answers at once
however large the plan is.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping

from core.base.messages import Message, msg
from core.errors import ConfigError, PlanTooLargeError
from core.plan.model import Plan

__all__ = ["DEFAULT_MAX_STEPS", "SIZE_ENV", "check_size", "max_steps", "size_problem"]

SIZE_ENV = "PLANBOARD_MAX_STEPS"
DEFAULT_MAX_STEPS = 200


def max_steps(environ: Mapping[str, str] | None = None) -> int:
    """The largest plan (or phase) a run takes: ``PLANBOARD_MAX_STEPS`` (a whole number
    ≥ 1), else :data:`DEFAULT_MAX_STEPS`; ConfigError names a bad value."""
    raw = (os.environ if environ is None else environ).get(SIZE_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_STEPS
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(msg("config.not_positive_count", variable=SIZE_ENV, raw=raw,
                              example=DEFAULT_MAX_STEPS))
    return int(raw)


def size_problem(plan: Plan, most: int | None = None) -> Message | None:
    """Why ``plan`` is too large for a run (None when it is not); ``most`` defaults to
    :func:`max_steps`."""
    most = max_steps() if most is None else most
    if not plan.phases:
        if len(plan.steps) > most:
            return msg("plan.too_large", count=len(plan.steps), most=most, variable=SIZE_ENV)
        return None
    sizes = Counter(step.phase for step in plan.steps)
    for phase_id, count in sizes.most_common(1):
        if count > most:
            return msg("plan.phase_too_large", phase=phase_id, count=count, most=most,
                       variable=SIZE_ENV)
    return None


def check_size(plan: Plan, most: int | None = None) -> None:
    """Raise PlanTooLargeError (one line) when ``plan`` is too large for a run."""
    problem = size_problem(plan, most)
    if problem is not None:
        raise PlanTooLargeError(problem)
