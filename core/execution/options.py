"""How to run a plan: the options a person chooses for one run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from core.base.messages import msg
from core.errors import ConfigError
from core.llm.budget import BUDGET_ENV, DEFAULT_MODEL_CALLS
from core.planning.choices import DEFAULT_POLICY, CheckpointPolicy

__all__ = ["UNASKED", "RunOptions", "Unasked", "default_model_calls", "runs_unasked"]

Unasked = Literal["side_effects", "new_versions", "read_ahead"]
"""What a run's options let run without asking a person: its side-effecting steps
(confirmation off), new plan versions that widen the approved plan (approved beforehand),
the read-only calls made while its plan was written (read ahead)."""
UNASKED: tuple[Unasked, ...] = get_args(Unasked)


class RunOptions(BaseModel):
    """How to run a plan.

    ``confirm_side_effects`` is on by default: a side-effecting step waits for a person
    (the dashboard asks); a caller that approved the whole plan some other way (the
    CLI's approval prompt, ``--yes``, a test) turns it off explicitly.

    ``new_versions`` says what happens when a later version (replan, checkpoint, retry,
    follow-up) widens the approved plan (:func:`core.plan.approval.widening`): ``ask`` a
    person and wait; ``refuse`` it (the widening steps fail with "needs approval": nobody
    is there to ask); or ``approve`` it (a person opted in beforehand).

    ``step_delay_s`` is the demo pace: the coordinator waits that long before it starts
    each step (0, the default, is off), so that a watcher sees the cards move.

    ``earlier_steps`` are the steps an earlier request of the run finished (what a
    follow-up extends): the follow-up's answer does not stand on them, so a follow-up
    whose own steps all failed is not completed however ignorable each failure is.

    ``max_model_calls`` is what the plan may spend on model calls in all, its planning
    included (:mod:`core.llm.budget`; default ``PLANBOARD_MAX_MODEL_CALLS``, else 50).

    ``read_ahead`` holds the read-only calls made while the plan was written (call key →
    its result and when it was read, :mod:`core.execution.read_ahead`): a step making one
    of those calls takes its result instead of calling again, while the read is recent.
    """

    max_parallel: int = Field(default=4, ge=1, le=64)
    max_replans: int = Field(default=2, ge=0, le=10)
    confirm_side_effects: bool = True
    run_id: str | None = None
    checkpoint: CheckpointPolicy = DEFAULT_POLICY
    max_attempts: int = Field(default=2, ge=1, le=5)  # attempts after reflection (runner)
    new_versions: Literal["ask", "refuse", "approve"] = "ask"
    step_delay_s: float = Field(default=0, ge=0, le=10)  # demo pace: a pause before each step
    earlier_steps: list[str] = Field(default_factory=list)
    max_model_calls: int = Field(default_factory=lambda: default_model_calls(), ge=1, le=10_000)
    read_ahead: dict[str, Any] = Field(default_factory=dict)


def default_model_calls(environ: Mapping[str, str] | None = None) -> int:
    """The model-call budget ``PLANBOARD_MAX_MODEL_CALLS`` sets (a whole number ≥ 1),
    else :data:`core.llm.budget.DEFAULT_MODEL_CALLS`; ConfigError names a bad value."""
    raw = (os.environ if environ is None else environ).get(BUDGET_ENV, "").strip()
    if not raw:
        return DEFAULT_MODEL_CALLS
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(msg("config.not_positive_count", variable=BUDGET_ENV, raw=raw,
                              example=DEFAULT_MODEL_CALLS))
    return int(raw)


def runs_unasked(options: Mapping[str, Any]) -> list[Unasked]:
    """What runs without asking a person under ``options`` (a run's stored options, or
    ``RunOptions.model_dump()``), in the order of :data:`UNASKED`; empty when a person is
    asked before anything with an effect runs. An option missing from ``options`` has its
    default, which asks."""
    found: list[Unasked] = []
    if not options.get("confirm_side_effects", True):
        found.append("side_effects")
    if options.get("new_versions") == "approve":
        found.append("new_versions")
    if options.get("read_ahead"):
        found.append("read_ahead")
    return found
