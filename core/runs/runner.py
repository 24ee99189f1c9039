"""Background runs: start, pause, resume, cancel, confirm and recover runs recorded in the store.

One :class:`Runner` per process (:func:`get_runner`) runs plans on a bounded thread pool and
addresses them by run id. Every event of a run is written to the store together with the
plan snapshot it leaves behind, so a run can be followed from any tab or process and
continued after a crash. Runs executed by another process are steered through control
requests written to the database, which that process's :class:`StoreBackedControl` picks up.
This module is the manager (pool, registry of live runs, steering by id, the process-wide
singleton); how one run is executed and recorded lives in :mod:`core.runs.live_run`.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.base.usage import Usage
from core.errors import StoreError
from core.execution.events import EventSink, RunEvent
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.diff import diff_plans
from core.plan.model import Plan
from core.runs.live_run import LiveRun, Replanner
from core.runs.recovery import (
    IN_PROCESS,
    StoreBackedControl,
    await_resume_taken,
    engine_for_record,
    recover_interrupted,
    recover_run,
)
from core.store.run_store import (
    ACTIVE_STATUSES,
    TERMINAL_STATUSES,
    RunRecord,
    RunStore,
    owner_alive,
)

__all__ = ["Runner", "StoreBackedControl", "get_runner", "reset_runner"]  # control re-exported

EngineFactory = Callable[[RunRecord], Engine]
_RESUMABLE = frozenset({"paused", "interrupted"})
_FOLLOWABLE = frozenset({"completed", "failed"})


class Runner:
    """Runs plans in the background and steers them by run id (one per process)."""

    def __init__(
        self,
        store: RunStore | None = None,
        *,
        max_workers: int = 16,
        engine_factory: EngineFactory | None = None,
        poll_s: float = 0.5,
        stale_after_s: float = 30.0,
    ) -> None:
        self.store = store or RunStore()
        # A run waiting for a person's confirmation holds its worker, and the dashboard
        # shares one runner between every session: the pool is bounded, but not tightly.
        # None: build the engine from the run's stored settings when resuming elsewhere
        self._pool = ThreadPoolExecutor(max_workers=max_workers,
                                        thread_name_prefix="planboard-run")
        self._engine_factory = engine_factory
        self._poll_s = poll_s
        self._stale_after_s = stale_after_s
        self._live: dict[str, LiveRun] = {}
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
        drafted: Plan | None = None,
    ) -> str:
        """Record the run (plan v1 and all) and run it in the background; return its id.

        ``planning_usage`` (the LLM calls that made the plan) is added to the run's usage.
        ``drafted`` is the plan as the planner made it: when a person edited it before
        approving, the draft is kept as version 1 and the edited plan runs as version 2.
        """
        run_id = uuid.uuid4().hex[:12]
        options = (options or RunOptions()).model_copy(update={"run_id": run_id})
        stored = options.model_dump(mode="json")
        if planning_usage is not None:
            stored["planning_usage"] = planning_usage.model_dump()
        edited = drafted is not None and not diff_plans(drafted, plan).is_empty
        first = drafted if edited and drafted is not None else plan
        self.store.create_run(request, settings_public or {}, first, run_id=run_id,
                              options=stored, usage=planning_usage)
        if edited:
            plan = plan.model_copy(update={"version": first.version + 1})
            self.store.save_plan_version(run_id, plan, reason="manual edit")
            self.store.append_event(run_id, RunEvent(
                kind="replanned", plan_version=plan.version,
                data={"from_version": first.version, "to_version": plan.version,
                      "source": "manual", "reason": "edited by a person before approval"}))
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
            live.request_resume()
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
                     on_event, replanner, resumed_from=record.status, extra=record.options,
                     allowed=_RESUMABLE)

    def follow_up(self, run_id: str, text: str, *, engine: Engine,
                  on_event: EventSink | None = None,
                  prepared: tuple[Plan, Usage] | None = None) -> Plan:
        """Extend a finished run with a follow-up request and run the new steps.

        Completed steps and results are kept; the new version adds steps and a new
        synthesis, and only those run. ``prepared`` is a version already made (and shown
        to a person) with :func:`core.planning.followup.extend_plan_request`. Returns the version.
        """
        from core.planning.followup import extend_plan_request

        record = self.store.get_run(run_id)
        if record.status not in {"completed", "failed"} or record.plan is None:
            raise StoreError(f"run {run_id} is {record.status}; a follow-up needs a finished "
                             "run (wait for it, or start a new request)")
        plan, usage = prepared or extend_plan_request(record.plan, text, engine)
        extra = dict(record.options)
        spent = Usage.model_validate(extra.get("followup_usage") or {}) + usage
        extra["followup_usage"] = spent.model_dump()
        replanned = RunEvent(
            kind="replanned", plan_version=plan.version,
            data={"from_version": record.plan.version, "to_version": plan.version,
                  "source": "follow-up", "reason": text})
        options = RunOptions.model_validate(
            {k: v for k, v in extra.items() if k in RunOptions.model_fields} | {"run_id": run_id})
        # the new version, its usage and event are written only if this process wins the run
        self._launch(run_id, plan, engine, options, on_event, None,
                     resumed_from=record.status, extra=extra, allowed=_FOLLOWABLE,
                     claim_with=dict(plan=plan, reason=f"follow-up: {text}",
                                     options=extra, events=[replanned]))
        return plan

    def _launch(self, run_id: str, plan: Plan, engine: Engine, options: RunOptions,
                on_event: EventSink | None, replanner: Replanner | None,
                resumed_from: str | None, extra: dict[str, Any], *,
                allowed: frozenset[str] = frozenset({"planned"}),
                claim_with: dict[str, Any] | None = None) -> None:
        """Register the run here, claim it in the store (status in ``allowed``), run it.

        The claim is atomic across processes (one of two resumers wins; the other gets a
        StoreError) and drops control requests addressed to an earlier owner. On any
        failure the run is unregistered again.
        """
        live = LiveRun(store=self.store, run_id=run_id, engine=engine, options=options,
                       plan=plan, on_event=on_event, replanner=replanner,
                       options_extra=dict(extra), poll_s=self._poll_s)
        with self._lock:
            if run_id in self._live or run_id in IN_PROCESS.snapshot():
                raise StoreError(f"run {run_id} is already running in this process")
            self._live[run_id] = live
            IN_PROCESS.add(run_id)
        claim = dict(claim_with or {})
        if resumed_from is not None:
            claim["events"] = [*claim.get("events", ()), RunEvent(
                kind="resumed", plan_version=plan.version, data={"from_status": resumed_from})]
        try:
            self.store.claim_run(run_id, allowed, stale_after_s=self._stale_after_s, **claim)
            live.status = "running"
            self._pool.submit(self._execute, live)
        except BaseException:
            with self._lock:
                self._live.pop(run_id, None)
                IN_PROCESS.discard(run_id)
            raise

    # ---- executing ------------------------------------------------------------------

    def _execute(self, live: LiveRun) -> None:
        try:
            live.run()
        finally:
            with self._lock:
                self._live.pop(live.run_id, None)
                IN_PROCESS.discard(live.run_id)
            if live.mark_done():  # resume() arrived while the run was stopping
                self.resume(live.run_id, engine=live.engine, on_event=live.on_event,
                            replanner=live.replanner)

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
        return self.store.cancel_unowned(run_id, reason=f"cancelled while {record.status}",
                                         stale_after_s=self._stale_after_s)

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

    def _live_run(self, run_id: str) -> LiveRun | None:
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

    def pause_all(self, timeout: float = 30.0) -> list[str]:
        """Pause every run of this process and wait (bounded) until each has stopped."""
        with self._lock:
            lives = list(self._live.values())
        for live in lives:
            live.control.pause()
        for live in lives:
            live.done.wait(timeout)
        return [live.run_id for live in lives]

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
        self.exit_hook = False


_EXIT_WAIT_S = 10.0


_SLOT = _Slot()


def get_runner() -> Runner:
    """The process-wide runner, created on first use (recovering crashed runs then).

    When the process exits (a server stopped with SIGTERM or Ctrl-C), its runs are paused
    first: a run waiting for a confirmation would otherwise keep the process alive, and a
    paused run can be resumed later.
    """
    with _SLOT.lock:
        if _SLOT.runner is None:
            if not _SLOT.exit_hook:
                # threading's exit hooks run in reverse order, before the thread pools are
                # joined: this one, registered after concurrent.futures', runs first
                threading._register_atexit(_pause_on_exit)  # type: ignore[attr-defined]
                _SLOT.exit_hook = True
            runner = Runner()
            runner.recover_interrupted()
            _SLOT.runner = runner
        return _SLOT.runner


def _pause_on_exit() -> None:
    pause_local_runs(timeout=_EXIT_WAIT_S)


def pause_local_runs(timeout: float = 30.0) -> list[str]:
    """Pause the runs this process executes (if it has a runner at all); return their ids."""
    with _SLOT.lock:
        runner = _SLOT.runner
    return runner.pause_all(timeout) if runner is not None else []


def reset_runner() -> None:
    """Shut down and forget the process-wide runner (tests, or a changed PLANBOARD_DB_URL)."""
    with _SLOT.lock:
        runner, _SLOT.runner = _SLOT.runner, None
    if runner is not None:
        runner.shutdown()
        runner.store.close()
