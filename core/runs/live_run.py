"""What a run records while it executes: events with plan snapshots, status, usage, its end.

A :class:`LiveRun` is what the executing process knows about a run: its plan, control,
listener and replanner. It records every event with the plan snapshot it leaves behind,
follows the status the events imply, reflects on the outcome (retrying when advised) and
records how the run ended. :class:`core.runs.workflow.DurableRun` drives it inside the
DBOS workflow that executes the run.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.base.usage import Usage
from core.execution.control import RunControl
from core.execution.events import EventSink, RunEvent
from core.execution.scheduler import RunOptions, RunOutcome
from core.lifecycle import TERMINAL_STATUSES
from core.llm.budget import budgeted
from core.llm.engine import Engine
from core.plan.model import FINISHED, Plan
from core.store.run_store import RunStore

if TYPE_CHECKING:
    from core.learning.after_run import Learning

__all__ = ["DRAFTED_BY_WORKER", "TRACE_CONTEXT", "USAGE_KEYS", "LiveRun", "Replanner"]

logger = logging.getLogger(__name__)

Replanner = Callable[[Plan, str, Engine], Plan]
# the key of the run's options that holds the W3C trace context it was submitted under
# (core.base.tracing): every process that executes the run adds its spans to that trace
TRACE_CONTEXT = "trace_context"
# the key of the options of a run submitted as a request (run --yes --detach): the worker
# that takes it drafts the plan, approved as drafted (core.runs.workflow)
DRAFTED_BY_WORKER = "drafted_by_worker"
# the run's usage beside its plan's steps; rerun_usage: what the steps a re-run replaced spent
USAGE_KEYS = ("planning_usage", "replan_usage", "learning_usage", "followup_usage",
               "rerun_usage")
_BUDGET_KEYS = ("planning_usage", "replan_usage", "followup_usage")  # learning is not the plan's
_STATUS_OF_EVENT = {"waiting_confirmation": "waiting_confirmation", "confirmed": "running",
                    "rejected": "running", "paused": "paused", "resumed": "running"}
# events about one step that change nothing but that step (the scheduler emits each after
# changing its step, and only it)
_ONE_STEP_EVENTS = frozenset({"step_started", "step_completed", "step_failed", "step_skipped",
                              "step_reset", "waiting_confirmation", "confirmed", "rejected"})


@dataclass
class LiveRun(ABC):
    """A run this process executes: its state, its control, and how it is run and recorded."""

    store: RunStore
    run_id: str
    engine: Engine
    options: RunOptions
    plan: Plan
    on_event: EventSink | None = None
    replanner: Replanner | None = None
    options_extra: dict[str, Any] = field(default_factory=dict)
    changed: threading.Condition = field(default_factory=threading.Condition)
    status: str = "planned"
    finished: bool = False  # how the run stopped is recorded: its status changes no more
    control: RunControl = field(default_factory=RunControl)
    _recording: threading.RLock = field(default_factory=threading.RLock, repr=False)
    # the plan object, its version and its step ids when this process last stored its
    # whole snapshot (a step added to the plan since, as an answer adds its calls, is not
    # in that snapshot: the next event stores the whole plan again)
    _snapshot: tuple[Plan, int, list[str]] | None = field(default=None, init=False,
                                                          repr=False)

    # ---- running ----------------------------------------------------------------------

    def replanner_for_run(self) -> Replanner | None:
        """The replanner the scheduler uses: the run's own, else core.planning's with its
        usage added to the run's; None offline without one (no replanning without a model)."""
        if self.engine.offline and self.replanner is None:
            return None

        def replanner(plan: Plan, failure: str, engine: Engine) -> Plan:
            # the new version is adopted when the scheduler's "replanned" event carries it
            if self.replanner is not None:
                return self.replanner(plan, failure, engine)
            return self._default_replan(plan, failure, engine)

        return replanner

    def budgeted_engine(self) -> Engine:
        """The run's engine on its model-call budget (:mod:`core.llm.budget`), with what the
        plan has spent already counted in: its planning, replans and follow-ups, and the
        calls of the steps that are finished (a resumed run does not make those again)."""
        spent = sum(Usage.model_validate(self.options_extra.get(key) or {}).llm_calls
                    for key in _BUDGET_KEYS)
        spent += sum(step.llm_calls for step in self.plan.steps if step.status in FINISHED)
        return budgeted(self.engine, self.options.max_model_calls, spent)

    @abstractmethod
    def _run_until_settled(self) -> RunOutcome:
        """Run the plan until it settles: finished, or stopped by a person."""

    def _learn_and_retry(self, outcome: RunOutcome) -> RunOutcome:
        """Reflect on the finished attempt, keep its lesson, and run new attempts if advised."""
        from core.learning.after_run import learn_from_run

        request = self.store.get_run(self.run_id).request
        max_attempts = self.options.max_attempts
        for attempt in range(1, max_attempts + 1):
            learned = self._learn(learn_from_run, request, outcome, attempt)
            self.add_usage("learning_usage", learned.usage)
            if learned.reflection is not None:
                self.record(RunEvent(
                    kind="reflected", plan_version=self.plan.version,
                    data={**learned.reflection.model_dump(), "attempt": attempt,
                          "lesson_id": learned.lesson.id if learned.lesson else None}))
            if learned.retry_plan is None:
                return outcome
            self.record(RunEvent(
                kind="replanned", plan_version=learned.retry_plan.version,
                plan=learned.retry_plan,
                data={"from_version": self.plan.version,
                      "to_version": learned.retry_plan.version, "source": "retry",
                      "reason": learned.reflection.retry_hint or learned.reflection.lesson}))
            outcome = self._run_until_settled()
        return outcome

    def _learn(self, learn: Callable[..., Learning], request: str, outcome: RunOutcome,
               attempt: int) -> Learning:
        """One reflection on ``outcome`` (a hook: a durable run records it)."""
        return learn(self.store, self.run_id, request, outcome, self.engine, attempt=attempt,
                     max_attempts=self.options.max_attempts)

    def add_usage(self, key: str, usage: Usage) -> None:
        """Add ``usage`` to the run's stored ``key`` total (planning, replans, learning, ...)."""
        spent = Usage.model_validate(self.options_extra.get(key) or {}) + usage
        self.options_extra[key] = spent.model_dump()
        self.store.set_options(self.run_id, self.options_extra)

    def _default_replan(self, plan: Plan, failure: str, engine: Engine) -> Plan:
        """core.planning's replanning (inside the failed phase, in a plan with phases), with
        its LLM usage added to the run's."""
        from core.errors import PlanError
        from core.planning.phase_replan import replan_any

        result = replan_any(plan, failure, engine)
        self.add_usage("replan_usage", result.usage)
        if result.plan is None:
            raise PlanError(
                "Replanning failed: the model's new steps could not be used ("
                + "; ".join(result.errors) + "); finish with the results so far"
            )
        return result.plan

    # ---- recording --------------------------------------------------------------------

    def record(self, event: RunEvent) -> None:
        """Write the event with the plan snapshot; follow the status; tell the listener.

        The snapshot is the plan the event carries (``event.plan``, e.g. the version a
        replan or a checkpoint made), which becomes the run's current plan; events
        without one snapshot the current plan. An event about one step of the plan whose
        whole snapshot this process stored last, with the same steps, writes only that
        step's state.
        """
        with self._recording:
            previous, reason = None, None
            if event.plan is not None and event.plan is not self.plan:
                if event.kind == "replanned":
                    previous = self.plan  # its replaced steps are retired: keep that too
                    reason = str(event.data.get("reason") or "replanned")
                self.plan = event.plan
            only = self._only_step(event, previous)
            self._store_event(event, reason, previous, only)
            if only is None:
                self._snapshot = (self.plan, self.plan.version, self.plan.ids())
            self._follow_status(event.kind)
            if event.kind == "confirmed" and event.step_id is None:  # a version approved
                self.options_extra["approved_version"] = event.data.get("version")
                self.store.set_options(self.run_id, self.options_extra)
        with self.changed:
            self.changed.notify_all()
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                logger.exception("event listener of run %s failed", self.run_id)

    def _only_step(self, event: RunEvent, previous: Plan | None) -> str | None:
        """The step an event changed alone, when its plan's snapshot is already stored."""
        if previous is not None or event.step_id is None or event.kind not in _ONE_STEP_EVENTS:
            return None
        stored = self._snapshot
        if stored is None or stored[0] is not self.plan or stored[1] != self.plan.version:
            return None
        return event.step_id if stored[2] == self.plan.ids() else None

    def _store_event(self, event: RunEvent, reason: str | None, previous: Plan | None,
                     only_step: str | None = None) -> None:
        """Write the event and the current plan snapshot, or only the step it changed (a
        hook: a durable run keys it)."""
        self.store.record_step(self.run_id, event, self.plan, reason=reason, previous=previous,
                               only_step=only_step)

    def _follow_status(self, kind: str, *, write: bool = True) -> None:
        """Follow the status an event implies; ``write=False`` only in memory (a replay)."""
        status = _STATUS_OF_EVENT.get(kind)
        if self.finished or status is None or status == self.status:
            return
        if kind == "resumed" and self.status != "paused":
            return  # resumed while still pausing (or while waiting for a person): no change
        if write:
            self.store.set_status(self.run_id, status)
        self.status = status

    def _finish(self, outcome: RunOutcome) -> None:
        with self._recording:
            self.finished = True
        status = outcome.status if outcome.status in TERMINAL_STATUSES | {"paused"} else "failed"
        planning = sum(
            (Usage.model_validate(self.options_extra.get(key) or {}) for key in USAGE_KEYS),
            Usage(),
        )
        self.store.finish_run(self.run_id, status, answer=outcome.answer,
                              usage=planning + outcome.usage,
                              plans=[*outcome.versions, outcome.plan])
        self.status = status

    def _fail(self, exc: Exception) -> None:
        with self._recording:
            self.finished = True
        try:
            event = RunEvent(kind="run_finished", plan_version=self.plan.version,
                             data={"status": "failed", "error": f"{type(exc).__name__}: {exc}"})
            self.store.save_plan_version(self.run_id, self.plan)
            self.store.set_status(self.run_id, "failed", event=event)
            self.status = "failed"
        except Exception:
            logger.exception("cannot record the failure of run %s", self.run_id)
