"""The lifecycle of runs and steps: every status, every transition, which controls each allows.

The one place that names a status. The stored values are these strings, so the database
and the CLI's JSON keep their shape; everything else (the store, the runner, the CLI, the
pages) asks this module instead of keeping its own set.

A run::

                         ┌──────── pause ────────┐
                         │                       ▼
    planned ──start──▶ running ◀──decided──▶ waiting_confirmation
       │                 │  ▲                    │
       │           pause │  │ resume             │ pause
       │                 ▼  │                    ▼
       │               paused ◀──────────────────┘
       │
       └─ any unfinished status ──┬─ finish ──▶ completed | failed   (follow-up, re-run ─▶ running)
                                  ├─ cancel ──▶ cancelled             (re-run ─▶ running)
                                  └─ crash ───▶ interrupted ─resume─▶ running

    unfinished: planned, running, waiting_confirmation, paused, interrupted
    held (an owner process executes it): planned, running, waiting_confirmation, paused
    terminal: completed, failed, cancelled — left only by a follow-up (completed, failed) or
    a re-run from one step (any of the three), which a person asks for

    waiting_confirmation: a side-effecting step waits for a person, or a new plan version
    that widens the approved plan does (core.plan.approval); "confirm" decides either.

A step::

    pending ──▶ running ──▶ completed | failed | skipped
       └──────────────────▶ failed | skipped   (blocked, condition false, rejected, cancelled)
    running ──crash reset──▶ pending           (the one way back: its process died)

:meth:`core.plan.model.Step.advance` is the only code that changes a step's status.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, get_args

__all__ = [
    "ACTIVE_STATUSES",
    "CONTROLS",
    "CRASH_RESET",
    "FINISHED_STEP_STATUSES",
    "HELD_STATUSES",
    "RUN_STATUSES",
    "RUN_TRANSITIONS",
    "STEP_RESETS",
    "STEP_STATUSES",
    "STEP_TRANSITIONS",
    "TERMINAL_STATUSES",
    "UNFINISHED_STATUSES",
    "Control",
    "OutcomeStatus",
    "RunStatus",
    "StepReset",
    "StepStatus",
    "allowed_controls",
    "allows",
    "run_may_become",
    "statuses_allowing",
    "step_may_become",
]

# ---- runs -------------------------------------------------------------------------------

RunStatus = Literal[
    "planned", "running", "waiting_confirmation", "paused", "completed", "failed",
    "cancelled", "interrupted",
]
OutcomeStatus = Literal["completed", "failed", "cancelled", "paused"]
"""How one pass of the scheduler stops (a paused run is continued later)."""

RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
TERMINAL_STATUSES: frozenset[RunStatus] = frozenset({"completed", "failed", "cancelled"})
UNFINISHED_STATUSES: frozenset[RunStatus] = frozenset(RUN_STATUSES) - TERMINAL_STATUSES
ACTIVE_STATUSES: frozenset[RunStatus] = frozenset({"planned", "running", "waiting_confirmation"})
HELD_STATUSES: frozenset[RunStatus] = ACTIVE_STATUSES | {"paused"}
"""Statuses in which an owner process holds the run (a crash turns them into interrupted)."""

_ENDINGS: frozenset[RunStatus] = frozenset({"completed", "failed", "cancelled", "interrupted"})
RUN_TRANSITIONS: Mapping[RunStatus, frozenset[RunStatus]] = MappingProxyType({
    # a run may also be recorded as finished straight away (a tool trial, a test)
    "planned": frozenset({"running", "waiting_confirmation", "paused"}) | _ENDINGS,
    "running": frozenset({"waiting_confirmation", "paused"}) | _ENDINGS,
    "waiting_confirmation": frozenset({"running", "paused"}) | _ENDINGS,
    "paused": frozenset({"running"}) | _ENDINGS,
    # a process that lost the run while it stopped may still record its failure
    "interrupted": frozenset({"running", "failed", "cancelled"}),
    "completed": frozenset({"running"}),  # a follow-up or a re-run
    "failed": frozenset({"running"}),  # a follow-up or a re-run
    "cancelled": frozenset({"running"}),  # a re-run
})

Control = Literal["pause", "resume", "cancel", "confirm", "follow_up", "rerun"]
CONTROLS: Mapping[RunStatus, frozenset[Control]] = MappingProxyType({
    # confirm: a decision may arrive while the run is still pausing, as the runner accepts
    "planned": frozenset({"pause", "cancel", "confirm"}),
    "running": frozenset({"pause", "cancel", "confirm"}),
    "waiting_confirmation": frozenset({"pause", "cancel", "confirm"}),
    "paused": frozenset({"resume", "cancel", "confirm"}),
    "interrupted": frozenset({"resume", "cancel"}),
    "completed": frozenset({"follow_up", "rerun"}),
    "failed": frozenset({"follow_up", "rerun"}),
    "cancelled": frozenset({"rerun"}),
})


def run_may_become(old: str, new: str) -> bool:
    """True when a run in status ``old`` may move to ``new`` (staying put is always fine)."""
    if old == new:
        return old in RUN_TRANSITIONS
    return new in RUN_TRANSITIONS.get(old, frozenset())


def allowed_controls(status: str) -> frozenset[Control]:
    """The controls a run in ``status`` offers (none for an unknown status)."""
    return CONTROLS.get(status, frozenset())


def allows(status: str, control: Control) -> bool:
    """True when a run in ``status`` may be steered with ``control``."""
    return control in allowed_controls(status)


def statuses_allowing(control: Control) -> frozenset[RunStatus]:
    """Every run status in which ``control`` is offered (e.g. resume: paused, interrupted)."""
    return frozenset(status for status, controls in CONTROLS.items() if control in controls)


# ---- steps ------------------------------------------------------------------------------

StepStatus = Literal["pending", "running", "completed", "failed", "skipped"]
STEP_STATUSES: tuple[StepStatus, ...] = get_args(StepStatus)
FINISHED_STEP_STATUSES: frozenset[StepStatus] = frozenset({"completed", "failed", "skipped"})
STEP_TRANSITIONS: Mapping[StepStatus, frozenset[StepStatus]] = MappingProxyType({
    "pending": frozenset({"running", "skipped", "failed"}),
    "running": frozenset({"completed", "failed", "skipped"}),
    "completed": frozenset(),
    "failed": frozenset(),
    "skipped": frozenset(),
})

StepReset = Literal["crash reset"]
CRASH_RESET: StepReset = "crash reset"
STEP_RESETS: Mapping[StepReset, tuple[StepStatus, StepStatus]] = MappingProxyType({
    CRASH_RESET: ("running", "pending"),  # the process running the step died
})
"""The only moves backwards, each named: ``Step.advance(new, reason=name)``."""


def step_may_become(old: str, new: str, reason: StepReset | None = None) -> bool:
    """True when a step in ``old`` may move to ``new`` (with ``reason`` for a named reset)."""
    if reason is not None:
        return STEP_RESETS.get(reason) == (old, new)
    return new in STEP_TRANSITIONS.get(old, frozenset())
