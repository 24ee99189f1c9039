"""Background runs: start, pause, resume, cancel, confirm and recover runs recorded in the store.

One :class:`Runner` per process (:func:`get_runner`) runs plans on a bounded thread pool and
addresses them by run id. Every event of a run is written to the store together with the
plan snapshot it leaves behind, so a run can be followed from any tab or process and
continued after a crash. Runs executed by another process are steered through control
requests written to the database, which that process's :class:`StoreBackedControl` picks up.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from core.engine import Engine
from core.errors import StoreError
from core.events import EventSink, RunEvent
from core.plan import Plan
from core.recovery import (
    IN_PROCESS,
    StoreBackedControl,
    await_resume_taken,
    engine_for_record,
    recover_interrupted,
    recover_run,
)
from core.scheduler import RunOptions, run_plan
from core.store import (
    ACTIVE_STATUSES,
    TERMINAL_STATUSES,
    RunRecord,
    RunStore,
    owner_alive,
)
from core.usage import Usage

__all__ = ["Runner", "StoreBackedControl", "get_runner", "reset_runner"]  # control re-exported

logger = logging.getLogger(__name__)

Replanner = Callable[[Plan, str, Engine], Plan]
EngineFactory = Callable[[RunRecord], Engine]
_HEARTBEAT_S = 2.0


@dataclass
class _LiveRun:
    """What this process knows about a run it executes."""

    run_id: str
    engine: Engine
    options: Any
    plan: Plan
    on_event: EventSink | None = None
    replanner: Replanner | None = None
    options_extra: dict[str, Any] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)
    changed: threading.Condition = field(default_factory=threading.Condition)
    status: str = "planned"
    candidate: Plan | None = None  # a replanned version not yet accepted by the scheduler
    control: StoreBackedControl = field(init=False)


class Runner:
    """Runs plans in the background and steers them by run id (one per process)."""

    def __init__(
        self,
        store: RunStore | None = None,
        *,
        max_workers: int = 4,
        engine_factory: EngineFactory | None = None,
        poll_s: float = 0.5,
        stale_after_s: float = 30.0,
    ) -> None:
        self.store = store or RunStore()
        # None: build the engine from the run's stored settings when resuming elsewhere
        self._pool = ThreadPoolExecutor(max_workers=max_workers,
                                        thread_name_prefix="planboard-run")
        self._engine_factory = engine_factory
        self._poll_s = poll_s
        self._stale_after_s = stale_after_s
        self._live: dict[str, _LiveRun] = {}
        self._lock = threading.Lock()

    # ---- starting and continuing ----------------------------------------------------

    def start(
        self,
        request: str,
        plan: Plan,
        *,
        engine: Engine,
        options: RunOptions | None = None,
        settings_public: dict[str, Any] | None = None,
        on_event: EventSink | None = None,
        replanner: Replanner | None = None,
        planning_usage: Usage | None = None,
    ) -> str:
        """Record the run (plan v1 and all) and run it in the background; return its id.

        ``planning_usage`` (the LLM calls that made the plan) is added to the run's usage.
        """
        run_id = uuid.uuid4().hex[:12]
        options = (options or RunOptions()).model_copy(update={"run_id": run_id})
        stored = options.model_dump(mode="json")
        if planning_usage is not None:
            stored["planning_usage"] = planning_usage.model_dump()
        self.store.create_run(request, settings_public or {}, plan, run_id=run_id,
                              options=stored, usage=planning_usage)
        self._launch(run_id, plan, engine, options, on_event, replanner, resumed_from=None,
                     extra=stored)
        return run_id

    def resume(
        self,
        run_id: str,
        *,
        engine: Engine | None = None,
        options: RunOptions | None = None,
        on_event: EventSink | None = None,
        replanner: Replanner | None = None,
    ) -> None:
        """Continue a paused or interrupted run from its first unfinished step.

        Completed steps are kept with their results and timestamps. A run being executed
        by another live process is asked (through the store) to resume instead.
        """
        live = self._live_run(run_id)
        if live is not None:
            live.control.resume()
            self._record(live, RunEvent(kind="resumed", plan_version=live.plan.version))
            return
        record = self.store.get_run(run_id)
        if record.status in TERMINAL_STATUSES:
            raise StoreError(f"run {run_id} is already {record.status}; nothing to resume")
        if owner_alive(record, self._stale_after_s):
            self.store.request_control(run_id, "resume")
            await_resume_taken(self.store, run_id, stale_after_s=self._stale_after_s)
            return
        if record.status in ACTIVE_STATUSES:  # left running by a dead process
            recover_run(self.store, record)
            record = self.store.get_run(run_id)
        if record.plan is None:
            raise StoreError(f"run {run_id} has no plan to continue; start a new run")
        stored = RunOptions.model_validate({**record.options, "run_id": run_id})
        if options is not None:
            stored = options.model_copy(update={"run_id": run_id})
        factory = self._engine_factory or engine_for_record
        self._launch(run_id, record.plan, engine or factory(record), stored,
                     on_event, replanner, resumed_from=record.status, extra=record.options)

    def _launch(self, run_id: str, plan: Plan, engine: Engine, options: RunOptions,
                on_event: EventSink | None, replanner: Replanner | None,
                resumed_from: str | None, extra: dict[str, Any]) -> None:
        live = _LiveRun(run_id=run_id, engine=engine, options=options, plan=plan, on_event=on_event,
                        replanner=replanner, options_extra=dict(extra))
        live.control = StoreBackedControl(
            self.store, run_id, on_action=lambda action: self._remote_action(live, action))
        self.store.pending_control(run_id)  # requests addressed to an earlier owner are void
        with self._lock:
            if run_id in self._live or run_id in IN_PROCESS.snapshot():
                raise StoreError(f"run {run_id} is already running in this process")
            self._live[run_id] = live
            IN_PROCESS.add(run_id)
        event = None
        if resumed_from is not None:
            event = RunEvent(kind="resumed", plan_version=plan.version,
                             data={"from_status": resumed_from})
        self.store.set_status(run_id, "running", event=event, owner=True)
        live.status = "running"
        self._pool.submit(self._execute, live)

    # ---- executing ------------------------------------------------------------------

    def _execute(self, live: _LiveRun) -> None:
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(live, stop), daemon=True,
                                   name=f"planboard-watch-{live.run_id}")
        watcher.start()
        try:
            outcome = self._run_until_settled(live)
            self._finish(live, outcome)
        except Exception as exc:
            logger.exception("run %s stopped with an error", live.run_id)
            self._fail(live, exc)
        finally:
            stop.set()
            watcher.join()
            with self._lock:
                self._live.pop(live.run_id, None)
                IN_PROCESS.discard(live.run_id)
            resumed_meanwhile = live.status == "paused" and not (
                live.control.is_paused() or live.control.is_cancelled())
            live.done.set()
            with live.changed:
                live.changed.notify_all()
            if resumed_meanwhile:  # resume() arrived while the run was stopping
                self.resume(live.run_id, engine=live.engine, on_event=live.on_event,
                            replanner=live.replanner)

    def _run_until_settled(self, live: _LiveRun) -> Any:
        def replanner(plan: Plan, failure: str, engine: Engine) -> Plan:
            if live.replanner is not None:
                live.candidate = live.replanner(plan, failure, engine)
            else:
                live.candidate = self._default_replan(live, plan, failure, engine)
            return live.candidate  # adopted on the "replanned" event

        while True:
            outcome = run_plan(live.plan, live.engine, options=live.options,
                               control=live.control, on_event=lambda e: self._record(live, e),
                               replanner=replanner)
            live.plan = outcome.plan
            if outcome.status != "paused":
                return outcome
            live.control.sync()
            if live.control.is_paused() or live.control.is_cancelled():
                return outcome
            # resumed while the running steps were finishing: go on with this plan

    def _default_replan(self, live: _LiveRun, plan: Plan, failure: str,
                        engine: Engine) -> Plan:
        """core.planner's replanning, with its LLM usage added to the run's."""
        from core.errors import PlanError
        from core.planner import replan_request

        result = replan_request(plan, failure, engine)
        spent = Usage.model_validate(live.options_extra.get("replan_usage") or {}) + result.usage
        live.options_extra["replan_usage"] = spent.model_dump()
        self.store.set_options(live.run_id, live.options_extra)
        if result.plan is None:
            raise PlanError(
                "Replanning failed: the model's new steps could not be used ("
                + "; ".join(result.errors) + "); finish with the results so far"
            )
        return result.plan

    def _watch(self, live: _LiveRun, stop: threading.Event) -> None:
        last_beat = time.monotonic()
        while not stop.wait(self._poll_s):
            try:
                live.control.sync()
                if time.monotonic() - last_beat >= _HEARTBEAT_S:
                    self.store.heartbeat(live.run_id)
                    last_beat = time.monotonic()
            except Exception:
                logger.exception("watcher of run %s", live.run_id)

    def _record(self, live: _LiveRun, event: RunEvent) -> None:
        """Write the event with the plan snapshot; follow the status; tell the listener."""
        if event.kind == "replanned" and live.candidate is not None:
            live.plan, live.candidate = live.candidate, None
            self.store.save_plan_version(live.run_id, live.plan,
                                         reason=str(event.data.get("reason") or "replanned"))
        self.store.record_step(live.run_id, event, live.plan)
        status = {"waiting_confirmation": "waiting_confirmation", "confirmed": "running",
                  "rejected": "running", "paused": "paused", "resumed": "running"}.get(event.kind)
        if status is not None and status != live.status:
            self.store.set_status(live.run_id, status)
            live.status = status
        with live.changed:
            live.changed.notify_all()
        if live.on_event is not None:
            try:
                live.on_event(event)
            except Exception:
                logger.exception("event listener of run %s failed", live.run_id)

    def _remote_action(self, live: _LiveRun, action: str) -> None:
        """Record a resume requested by another process (pause/cancel the scheduler records)."""
        if action == "resume":
            self._record(live, RunEvent(kind="resumed", plan_version=live.plan.version,
                                        data={"requested_by": "another process"}))

    def _finish(self, live: _LiveRun, outcome: Any) -> None:
        status = outcome.status if outcome.status in TERMINAL_STATUSES | {"paused"} else "failed"
        extra = live.options_extra
        planning = Usage.model_validate(extra.get("planning_usage") or {}) + Usage.model_validate(
            extra.get("replan_usage") or {})
        self.store.finish_run(live.run_id, status, answer=outcome.answer,
                              usage=planning + outcome.usage,
                              plans=[*outcome.versions, outcome.plan])
        live.status = status

    def _fail(self, live: _LiveRun, exc: Exception) -> None:
        try:
            event = RunEvent(kind="run_finished", plan_version=live.plan.version,
                             data={"status": "failed", "error": f"{type(exc).__name__}: {exc}"})
            self.store.save_plan_version(live.run_id, live.plan)
            self.store.set_status(live.run_id, "failed", event=event, owner=False)
            live.status = "failed"
        except Exception:
            logger.exception("cannot record the failure of run %s", live.run_id)

    # ---- steering -------------------------------------------------------------------

    def pause(self, run_id: str) -> None:
        """Finish the running steps, start no new ones (here, or via the store elsewhere)."""
        live = self._live_run(run_id)
        if live is not None:
            live.control.pause()
            return
        record = self._steerable(run_id, "pause")
        self.store.request_control(record.run_id, "pause")

    def cancel(self, run_id: str, timeout: float = 30.0) -> RunRecord:
        """Cancel the run and return once the cancellation is recorded."""
        live = self._live_run(run_id)
        if live is not None:
            live.control.cancel()
            live.done.wait(timeout)
            return self.store.get_run(run_id)
        record = self.store.get_run(run_id)
        if record.status in TERMINAL_STATUSES:
            raise StoreError(f"run {run_id} is already {record.status}; nothing to cancel")
        if owner_alive(record, self._stale_after_s):
            self.store.request_control(run_id, "cancel")
            return self.wait(run_id, timeout)
        event = RunEvent(kind="cancelled", plan_version=record.plan.version if record.plan else 1,
                         data={"reason": f"cancelled while {record.status}"})
        self.store.set_status(run_id, "cancelled", event=event, owner=False)
        return self.store.get_run(run_id)

    def confirm(self, run_id: str, step_id: str) -> None:
        """Approve the side-effecting step the run is waiting on."""
        self._decide(run_id, step_id, "confirm")

    def reject(self, run_id: str, step_id: str) -> None:
        """Refuse the side-effecting step the run is waiting on (it will not run)."""
        self._decide(run_id, step_id, "reject")

    def _decide(self, run_id: str, step_id: str, verb: str) -> None:
        live = self._live_run(run_id)
        if live is not None:
            live.control.apply(f"{verb}:{step_id}")
            return
        record = self._steerable(run_id, verb)
        self.store.request_control(record.run_id, f"{verb}:{step_id}")

    def _steerable(self, run_id: str, verb: str) -> RunRecord:
        record = self.store.get_run(run_id)
        if record.status not in ACTIVE_STATUSES | {"paused"} or not owner_alive(
            record, self._stale_after_s
        ):
            raise StoreError(
                f"cannot {verb} run {run_id}: it is {record.status} and no process runs it"
                + ("; resume it first" if record.status in {"paused", "interrupted"} else "")
            )
        return record

    def _live_run(self, run_id: str) -> _LiveRun | None:
        with self._lock:
            return self._live.get(run_id)

    # ---- waiting and recovery -------------------------------------------------------

    def wait(self, run_id: str, timeout: float | None = None, *,
             until_confirmation: bool = False) -> RunRecord:
        """Block until the run stops here (finished, paused) or ``timeout``; return it.

        ``until_confirmation=True`` also returns when the run waits for a person's approval.
        Runs executed by another process are followed through the store.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        live = self._live_run(run_id)
        if live is not None:
            with live.changed:
                live.changed.wait_for(
                    lambda: live.done.is_set() or (
                        until_confirmation and live.status == "waiting_confirmation"),
                    timeout,
                )
            return self.store.get_run(run_id)
        settled = threading.Event()
        while True:
            record = self.store.get_run(run_id)
            if record.status not in ACTIVE_STATUSES or (
                until_confirmation and record.status == "waiting_confirmation"
            ) or not owner_alive(record, self._stale_after_s):
                return record
            if deadline is not None and time.monotonic() >= deadline:
                return record
            settled.wait(self._poll_s)

    def recover_interrupted(self) -> list[str]:
        """Mark runs whose process died as interrupted; reset their running steps to pending."""
        here = IN_PROCESS.snapshot()  # every Runner of this process, not only this one
        return recover_interrupted(self.store, live_here=here,
                                   stale_after_s=self._stale_after_s)

    def shutdown(self, *, cancel: bool = True, timeout: float = 30.0) -> None:
        """Cancel (optionally) the runs of this process and stop the pool."""
        with self._lock:
            lives = list(self._live.values())
        for live in lives:
            if cancel:
                live.control.cancel()
            live.done.wait(timeout)
        self._pool.shutdown(wait=True)


class _Slot:
    """Holds the process-wide runner behind a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runner: Runner | None = None


_SLOT = _Slot()


def get_runner() -> Runner:
    """The process-wide runner, created on first use (recovering crashed runs then)."""
    with _SLOT.lock:
        if _SLOT.runner is None:
            runner = Runner()
            runner.recover_interrupted()
            _SLOT.runner = runner
        return _SLOT.runner


def reset_runner() -> None:
    """Shut down and forget the process-wide runner (tests, or a changed PLANBOARD_DB_URL)."""
    with _SLOT.lock:
        runner, _SLOT.runner = _SLOT.runner, None
    if runner is not None:
        runner.shutdown()
        runner.store.close()
