"""The execution of one live run: scheduler loop, replans, retries, and what the store records.

A :class:`LiveRun` is what this process knows about a run it executes. :meth:`LiveRun.run`
drives the scheduler until the run settles (resuming in place when a resume arrives while
the running steps finish), reflects on the outcome and retries when advised, and records
every event with the plan snapshot it leaves behind. A watcher thread picks up control
requests written to the store by other processes and keeps the run's heartbeat.
:class:`core.runs.runner.Runner` creates, registers and steers these objects by run id.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.base.usage import Usage
from core.execution.events import EventSink, RunEvent
from core.execution.scheduler import RunOptions, RunOutcome, run_plan
from core.lifecycle import TERMINAL_STATUSES
from core.llm.engine import Engine
from core.plan.model import Plan
from core.runs.recovery import StoreBackedControl
from core.store.run_store import RunStore

if TYPE_CHECKING:
    from core.learning.after_run import Learning

__all__ = ["HEARTBEAT_S", "LiveRun", "Replanner"]

logger = logging.getLogger(__name__)

Replanner = Callable[[Plan, str, Engine], Plan]
HEARTBEAT_S = 2.0
_USAGE_KEYS = ("planning_usage", "replan_usage", "learning_usage", "followup_usage")
_STATUS_OF_EVENT = {"waiting_confirmation": "waiting_confirmation", "confirmed": "running",
                    "rejected": "running", "paused": "paused", "resumed": "running"}


@dataclass
class LiveRun:
    """A run this process executes: its state, its control, and how it is run and recorded."""

    store: RunStore
    run_id: str
    engine: Engine
    options: RunOptions
    plan: Plan
    on_event: EventSink | None = None
    replanner: Replanner | None = None
    options_extra: dict[str, Any] = field(default_factory=dict)
    poll_s: float = 0.5
    done: threading.Event = field(default_factory=threading.Event)
    changed: threading.Condition = field(default_factory=threading.Condition)
    status: str = "planned"
    finished: bool = False  # how the run stopped is recorded: its status changes no more
    control: StoreBackedControl = field(init=False)
    _recording: threading.RLock = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.control = StoreBackedControl(self.store, self.run_id,
                                          on_action=self.remote_action)
        self.control.set_approved(self._approved_plan())
        self._recording = threading.RLock()

    def _approved_plan(self) -> Plan:
        """The version a person approved (recorded in the options; else the first one)."""
        wanted = self.options_extra.get("approved_version")
        if wanted == self.plan.version:
            return self.plan
        stored = self.store.plan_versions(self.run_id)
        found = [v.plan for v in stored if v.version == wanted] or [v.plan for v in stored[:1]]
        return found[-1] if found else self.plan

    # ---- running ----------------------------------------------------------------------

    def run(self) -> None:
        """Run to the end (finished, paused or cancelled) and record how it stopped.

        Never raises: an unexpected error is recorded as the run's failure.
        """
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(stop,), daemon=True,
                                   name=f"planboard-watch-{self.run_id}")
        watcher.start()
        try:
            outcome = self._learn_and_retry(self._run_until_settled())
            self._finish(outcome)
        except Exception as exc:
            logger.exception("run %s stopped with an error", self.run_id)
            self._fail(exc)
        finally:
            stop.set()
            watcher.join()

    def mark_done(self) -> bool:
        """Wake everyone waiting on the run; True when a resume arrived while it stopped."""
        resumed_meanwhile = self.status == "paused" and not (
            self.control.is_paused() or self.control.is_cancelled())
        self.done.set()
        with self.changed:
            self.changed.notify_all()
        return resumed_meanwhile

    def _run_until_settled(self) -> RunOutcome:
        def replanner(plan: Plan, failure: str, engine: Engine) -> Plan:
            # the new version is adopted when the scheduler's "replanned" event carries it
            if self.replanner is not None:
                return self.replanner(plan, failure, engine)
            return self._default_replan(plan, failure, engine)

        # offline the scheduler's own rule applies: no replanning without a model
        chosen = None if self.engine.offline and self.replanner is None else replanner
        while True:
            outcome = run_plan(self.plan, self.engine, options=self.options,
                               control=self.control, on_event=self.record,
                               replanner=chosen)
            self.plan = outcome.plan
            if outcome.status != "paused":
                return outcome
            self.control.sync()
            if self.control.is_paused() or self.control.is_cancelled():
                return outcome
            # resumed while the running steps were finishing: go on with this plan
            if self.status == "paused":
                self.record(RunEvent(kind="resumed", plan_version=self.plan.version,
                                     data={"in_place": True}))

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
        """core.planning.planner's replanning, with its LLM usage added to the run's."""
        from core.errors import PlanError
        from core.planning.planner import replan_request

        result = replan_request(plan, failure, engine)
        self.add_usage("replan_usage", result.usage)
        if result.plan is None:
            raise PlanError(
                "Replanning failed: the model's new steps could not be used ("
                + "; ".join(result.errors) + "); finish with the results so far"
            )
        return result.plan

    def _watch(self, stop: threading.Event) -> None:
        # other processes reach this run only through the store, which sends no events:
        # it is read every poll_s (steering in this process wakes the control directly)
        last_beat = time.monotonic()
        while not stop.wait(self.poll_s):
            try:
                self.control.sync()
                if time.monotonic() - last_beat >= HEARTBEAT_S:
                    if not self.store.heartbeat(self.run_id) and not self.finished:
                        logger.warning("run %s: this process no longer owns it in the store",
                                       self.run_id)
                    last_beat = time.monotonic()
            except Exception:
                logger.exception("watcher of run %s", self.run_id)

    # ---- recording --------------------------------------------------------------------

    def record(self, event: RunEvent) -> None:
        """Write the event with the plan snapshot; follow the status; tell the listener.

        The snapshot is the plan the event carries (``event.plan``, e.g. the version a
        replan or a checkpoint made), which becomes the run's current plan; events
        without one snapshot the current plan.
        """
        with self._recording:
            previous, reason = None, None
            if event.plan is not None and event.plan is not self.plan:
                if event.kind == "replanned":
                    previous = self.plan  # its replaced steps are retired: keep that too
                    reason = str(event.data.get("reason") or "replanned")
                self.plan = event.plan
            self._store_event(event, reason, previous)
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

    def _store_event(self, event: RunEvent, reason: str | None, previous: Plan | None) -> None:
        """Write the event and the current plan snapshot (a hook: a durable run keys it)."""
        self.store.record_step(self.run_id, event, self.plan, reason=reason, previous=previous)

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

    def request_resume(self) -> None:
        """Resume the scheduler (asked in this process); record it if the run was paused.

        A run that already stopped paused is continued by the runner (see :meth:`mark_done`).
        """
        was_paused = self.control.is_paused() or self.status == "paused"
        self.control.resume()
        if was_paused:
            self._record_resumed({})

    def remote_action(self, action: str) -> None:
        """Record a resume requested by another process (pause/cancel the scheduler records).

        The control reports a resume only when it found the run paused or pausing.
        """
        if action == "resume":
            self._record_resumed({"requested_by": "another process"})

    def _record_resumed(self, data: dict[str, Any]) -> None:
        with self._recording:
            if not self.finished:
                self.record(RunEvent(kind="resumed", plan_version=self.plan.version, data=data))

    def _finish(self, outcome: RunOutcome) -> None:
        with self._recording:
            self.finished = True
        status = outcome.status if outcome.status in TERMINAL_STATUSES | {"paused"} else "failed"
        planning = sum(
            (Usage.model_validate(self.options_extra.get(key) or {}) for key in _USAGE_KEYS),
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
            self.store.set_status(self.run_id, "failed", event=event, owner=False)
            self.status = "failed"
        except Exception:
            logger.exception("cannot record the failure of run %s", self.run_id)
