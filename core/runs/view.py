"""The facts the dashboard shows about one run, computed from the store in one place.

:func:`load_run_view` reads the run, its plan versions and its event log, and returns a
:class:`RunView`: which steps wait for a person, each step's latest success check, what
made every plan version and why, the new version waiting for approval (with its diff from
the approved one), the reflections, progress, usage, which controls reach the run (those
its status allows, :mod:`core.lifecycle`; none for a run another agent carries out,
:mod:`core.review`) and which of its tools have a side effect. The pages draw it; they
derive nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from core.base.messages import Message, recorded
from core.base.usage import Usage
from core.execution.options import Unasked, runs_unasked
from core.execution.success_check import FailureKind, SuccessVerdict
from core.execution.version_gate import REJECTED
from core.lifecycle import (
    FINISHED_STEP_STATUSES,
    HELD_STATUSES,
    TERMINAL_STATUSES,
    Control,
    allowed_controls,
)
from core.plan.diff import PlanDiff, diff_plans
from core.plan.graph import side_effect_tool_names
from core.plan.model import Plan, Step
from core.review.reviews import is_review, review_registry, run_controls
from core.store.run_store import (
    PlanVersion,
    RunRecord,
    RunStore,
    StoredEvent,
    VersionSource,
)
from core.tools.registry import ToolRegistry

__all__ = [
    "Progress",
    "Reflected",
    "RunRecord",
    "RunView",
    "SkipReason",
    "StepCheck",
    "StoredEvent",
    "VersionView",
    "VersionWait",
    "build_run_view",
    "count_progress",
    "load_run_view",
    "read_ahead_steps",
    "skip_reason",
    "step_checks",
    "step_usage",
    "waiting_steps",
]

logger = logging.getLogger(__name__)

# events after which no step waits any more, or after which one given step stops waiting
_CLEARS_WAITING = {"paused", "cancelled", "interrupted", "run_finished"}
_BLOCKED = "skipped: depends on failed step "
_ENDS_WAITING = {"confirmed", "rejected", "step_completed", "step_failed", "step_skipped"}


class StepCheck(BaseModel):
    """A step's latest success verdict (when it completed) or failure class (when it failed)."""

    success: SuccessVerdict | None = None
    failure_class: FailureKind | None = None


class VersionView(BaseModel):
    """One plan version: what made it and why."""

    version: int
    plan: Plan
    source: VersionSource
    reason: str = ""
    created_at: datetime
    message: Message | None = None  # the reason as a code, to word it in any language


class VersionWait(BaseModel):
    """A new plan version that widens the approved one, waiting for a person's decision."""

    version: int
    approved_version: int | None = None
    steps: list[str] = Field(default_factory=list)  # the side-effecting steps it adds/changes
    diff: PlanDiff | None = None  # from the approved version to this one


class Reflected(BaseModel):
    """What the run learned after a failed attempt."""

    seq: int
    attempt: int = 1
    root_cause: str = ""
    lesson: str = ""
    should_retry: bool = False
    retry_hint: str = ""


SkipKind = Literal["condition", "rejected", "cancelled", "blocked", "other"]


class SkipReason(BaseModel):
    """Why a step was skipped: a kind the pages word in their language, and its detail."""

    kind: SkipKind
    detail: str = ""  # the condition, the failed steps, or (other) the reason as written
    message: Message | None = None  # (other) the reason's code, to word it in any language


class Progress(BaseModel):
    """The current plan's steps counted by outcome (a cancelled run's unrun steps apart)."""

    total: int = 0
    done: int = 0  # completed
    skipped: int = 0  # skipped for a reason of their own (condition, rejection, blocked)
    failed: int = 0
    running: int = 0
    not_run: int = 0  # of a cancelled run: pending, or skipped by the cancellation
    cancelled: bool = False

    @property
    def fraction(self) -> float:
        """How much of the plan has ended, between 0 and 1; the unrun steps of a cancelled
        run do not count, so its bar is never full unless everything had ended."""
        ended = self.done + self.skipped + self.failed
        return ended / self.total if self.total else 0.0


class RunView(BaseModel):
    """Everything the run page shows about a run, as facts."""

    record: RunRecord
    versions: list[VersionView] = Field(default_factory=list)
    events: list[StoredEvent] = Field(default_factory=list)
    waiting: list[str] = Field(default_factory=list)
    in_doubt: list[str] = Field(default_factory=list)  # of waiting: their call may have happened
    read_ahead: list[str] = Field(default_factory=list)  # their call was made while planning
    version_wait: VersionWait | None = None
    checks: dict[str, StepCheck] = Field(default_factory=dict)
    reflections: list[Reflected] = Field(default_factory=list)
    controls: frozenset[Control] = frozenset()  # those that reach the run
    # of a run another agent carries out: the tools it declared with a side effect (None:
    # a run of PlanBoard's own, whose tools are the process's catalogue)
    declared_side_effects: frozenset[str] | None = None
    usage: Usage = Field(default_factory=Usage)
    # when it was read (core.runs.live_views.RunViews): of two views of one run, the larger
    # was read later and is the newer, whatever their event logs hold; 0: read elsewhere.
    # It orders pictures of the run and says nothing about the run, so it is not dumped.
    read: int = Field(default=0, exclude=True)
    _catalogue_side_effects: tuple[ToolRegistry, frozenset[str]] | None = PrivateAttr(None)

    @property
    def plan(self) -> Plan | None:
        """The run's current plan."""
        return self.record.plan

    @property
    def finished(self) -> bool:
        """True once the run completed, failed or was cancelled."""
        return self.record.status in TERMINAL_STATUSES

    @property
    def settled(self) -> bool:
        """True while no process holds the run: nothing changes until a person acts."""
        return self.record.status not in HELD_STATUSES

    @property
    def done_steps(self) -> int:
        """How many steps of the current plan have finished."""
        return sum(s.status in FINISHED_STEP_STATUSES for s in self.plan.steps) if self.plan else 0

    @property
    def total_steps(self) -> int:
        """How many steps the current plan has."""
        return len(self.plan.steps) if self.plan else 0

    @property
    def progress(self) -> Progress:
        """The plan's steps counted by outcome."""
        return count_progress(self.plan, cancelled=self.record.status == "cancelled")

    @property
    def unasked(self) -> list[Unasked] | None:
        """What the run lets run without asking a person
        (:func:`core.execution.options.runs_unasked` of its options); None for a run of no
        plan a person approved (a plan-less answer, a tool trial: their options name a mode)
        and for a run another agent carries out (it asks no one here)."""
        options = self.record.options
        if "mode" in options or is_review(self.record):
            return None
        return runs_unasked(options)

    def side_effect_tools(self, catalogue: ToolRegistry) -> frozenset[str]:
        """The tools of the run's plan that have a side effect: those its agent declared,
        for a run another agent carries out, else those of ``catalogue`` (the tools
        PlanBoard's own runs call), worked out once per view and catalogue."""
        if self.declared_side_effects is not None:
            return self.declared_side_effects
        known = self._catalogue_side_effects
        if known is None or known[0] is not catalogue:
            known = self._catalogue_side_effects = (catalogue, side_effect_tool_names(catalogue))
        return known[1]

    @property
    def skip_reasons(self) -> dict[str, SkipReason]:
        """Why each skipped step of the current plan was skipped, by step id."""
        steps = self.plan.steps if self.plan else []
        return {s.id: skip_reason(s) for s in steps if s.status == "skipped"}


def load_run_view(store: RunStore, run_id: str) -> RunView:
    """The view of run ``run_id`` (RunNotFoundError when there is none)."""
    record = store.get_run(run_id)
    events = store.events(run_id)
    return build_run_view(record, store.plan_versions(run_id), events)


def build_run_view(record: RunRecord, stored: list[PlanVersion],
                   events: list[StoredEvent], *, read: int = 0) -> RunView:
    """The view of a run from what the store holds of it: the run, its plan versions
    (oldest first) and its event log (in order); ``read``: see :attr:`RunView.read`."""
    controls = allowed_controls(record.status)
    finished = record.status in TERMINAL_STATUSES
    versions = _versions(stored, events)
    declared = (side_effect_tool_names(review_registry(record)) if is_review(record)
                else None)
    return RunView(
        record=record,
        versions=versions,
        events=events,
        waiting=waiting_steps(events) if "confirm" in controls else [],
        in_doubt=in_doubt_steps(events) if "confirm" in controls else [],
        version_wait=_version_wait(events, versions) if "confirm" in controls else None,
        checks=step_checks(events),
        read_ahead=read_ahead_steps(events),
        reflections=_reflections(events),
        controls=run_controls(record, controls),
        declared_side_effects=declared,
        usage=record.usage if finished and record.usage.llm_calls else step_usage(record.plan),
        read=read,
    )


def skip_reason(step: Step) -> SkipReason:
    """Why ``step`` was skipped, read from the reason the scheduler recorded on it."""
    error = (step.error or "").strip()
    if error.startswith("condition not met"):
        return SkipReason(kind="condition", detail=step.condition or "")
    if error == REJECTED:
        return SkipReason(kind="rejected")
    if error.startswith("cancelled"):  # by a person, or before it started
        return SkipReason(kind="cancelled")
    if error.startswith(_BLOCKED):
        return SkipReason(kind="blocked", detail=error.removeprefix(_BLOCKED))
    return SkipReason(kind="other", detail=error, message=step.error_message)


def count_progress(plan: Plan | None, *, cancelled: bool) -> Progress:
    """Count ``plan``'s steps by outcome; ``cancelled`` sets the unrun steps apart."""
    progress = Progress(total=len(plan.steps) if plan else 0, cancelled=cancelled)
    for step in plan.steps if plan else []:
        if step.status == "completed":
            progress.done += 1
        elif step.status == "failed":
            progress.failed += 1
        elif step.status == "running":
            progress.running += 1
        elif cancelled and (step.status == "pending"
                            or skip_reason(step).kind == "cancelled"):
            progress.not_run += 1
        elif step.status == "skipped":
            progress.skipped += 1
    return progress


def waiting_steps(events: Iterable[StoredEvent]) -> list[str]:
    """Steps waiting for a person's confirmation, in the order they asked."""
    waiting: dict[str, None] = {}
    for event in events:
        if event.kind == "waiting_confirmation" and event.step_id:
            waiting[event.step_id] = None
        elif event.kind in _ENDS_WAITING and event.step_id:
            waiting.pop(event.step_id, None)
        elif event.kind in _CLEARS_WAITING:
            waiting.clear()
    return list(waiting)


def in_doubt_steps(events: Iterable[StoredEvent]) -> list[str]:
    """Of the steps waiting for a person, those asked because their call began before the
    run stopped and may already have happened (core.execution.in_doubt)."""
    events = list(events)
    doubtful = {event.step_id: bool(event.data.get("in_doubt")) for event in events
                if event.kind == "waiting_confirmation" and event.step_id}
    return [step_id for step_id in waiting_steps(events) if doubtful.get(step_id)]


def read_ahead_steps(events: Iterable[StoredEvent]) -> list[str]:
    """Steps whose latest completion took the call made while the plan was written
    (core.execution.read_ahead), in the order they completed."""
    latest: dict[str, bool] = {}
    for event in events:
        if event.kind == "step_completed" and event.step_id:
            latest.pop(event.step_id, None)
            latest[event.step_id] = bool(event.data.get("read_ahead"))
    return [step_id for step_id, read in latest.items() if read]


def _version_wait(events: Iterable[StoredEvent], versions: list[VersionView]
                  ) -> VersionWait | None:
    """The version waiting for approval, if any: asked and not yet decided or dropped."""
    wait: VersionWait | None = None
    for event in events:
        if event.step_id is not None:
            continue
        if event.kind == "waiting_confirmation" and "version" in event.data:
            wait = VersionWait.model_validate(event.data)
        elif event.kind in {"confirmed", "rejected", "replanned", *_CLEARS_WAITING}:
            wait = None
    if wait is None:
        return None
    plans = {v.version: v.plan for v in versions}  # the latest snapshot of each version
    old, new = plans.get(wait.approved_version or 0), plans.get(wait.version)
    if old is not None and new is not None:
        wait.diff = diff_plans(old, new)
    return wait


def step_checks(events: Iterable[StoredEvent]) -> dict[str, StepCheck]:
    """Per step, the latest success verdict or failure class.

    A step that starts again (a later version, a retry) drops what an earlier try recorded.
    """
    checks: dict[str, StepCheck] = {}
    for event in events:
        if not event.step_id:
            continue
        if event.kind == "step_started":
            checks.pop(event.step_id, None)
        elif event.kind == "step_completed" and isinstance(event.data.get("success"), dict):
            try:  # a verdict without "met" was written by a check that passed
                verdict = SuccessVerdict.model_validate({"met": True, **event.data["success"]})
            except ValidationError:
                logger.warning("run %s: unreadable success check of %s", event.run_id,
                               event.step_id)
                continue
            checks[event.step_id] = StepCheck(success=verdict)
        elif event.kind == "step_failed" and event.data.get("failure_class") in (
                "fatal", "ignorable"):
            checks[event.step_id] = StepCheck(failure_class=event.data["failure_class"])
    return checks


def step_usage(plan: Plan | None) -> Usage:
    """The LLM usage recorded on the plan's steps (the run's, while it has no total yet)."""
    total = Usage()
    for step in plan.steps if plan else []:
        total = total + Usage(llm_calls=step.llm_calls, prompt_tokens=step.prompt_tokens,
                              completion_tokens=step.completion_tokens)
    return total


def _versions(stored: list[PlanVersion], events: list[StoredEvent]) -> list[VersionView]:
    """Every version with its stored source; the why is the replan's own words when known
    (and their code, when PlanBoard worded them: ``reason_message``)."""
    said: dict[int, str] = {}
    coded: dict[int, Message] = {}
    for event in events:
        if event.kind == "replanned" and event.data.get("reason"):
            version = int(event.data.get("to_version") or event.plan_version)
            said[version] = str(event.data["reason"])
            coded.pop(version, None)
            message = recorded(event.data.get("reason_message"))
            if message is not None:
                coded[version] = message
    return [VersionView(version=v.version, plan=v.plan, source=v.source,
                        reason=said.get(v.version) or v.reason or "", created_at=v.created_at,
                        message=coded.get(v.version))
            for v in stored]


def _reflections(events: Iterable[StoredEvent]) -> list[Reflected]:
    found = []
    for event in events:
        if event.kind != "reflected":
            continue
        data = {k: v for k, v in event.data.items() if v is not None}
        try:
            found.append(Reflected.model_validate({**data, "seq": event.seq}))
        except ValidationError:
            logger.warning("run %s: unreadable reflection (event %d)", event.run_id, event.seq)
    return found
