"""Background runs: start, pause, resume, cancel, confirm and recover runs recorded in the store.

A :class:`Runner` runs plans on a bounded thread pool and steers them by run id. Its owner
creates it (the dashboard keeps one in ``st.cache_resource``; a CLI command opens its own
with :func:`open_runner`) and closes it, which pauses its runs, as the process's exit does.
Events and plan snapshots go to the store, so any tab or process can follow a run and
steer it through control requests (see :mod:`core.runs.recovery`); one run's execution
lives in :mod:`core.runs.live_run`. A run executed by a worker (it has a workflow id) is
steered and followed through :mod:`core.runs.dispatch`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any

import core.runs.dispatch as dispatch
from core.base.messages import msg
from core.base.usage import Usage
from core.errors import StoreError
from core.execution.events import EventSink, RunEvent
from core.execution.scheduler import RunOptions
from core.lifecycle import ACTIVE_STATUSES, TERMINAL_STATUSES, statuses_allowing
from core.llm.engine import Engine
from core.plan.model import Plan
from core.runs.exit_watch import ExitWatch
from core.runs.followable import require_followable
from core.runs.live_run import LiveRun, Replanner
from core.runs.recovery import (
    await_resume_taken,
    engine_for_record,
    recover_interrupted,
    recover_run,
)
from core.store.run_store import RunRecord, RunStore, owner_alive

__all__ = ["Runner", "open_runner"]

EngineFactory = Callable[[RunRecord], Engine]
_RESUMABLE = statuses_allowing("resume")
_FOLLOWABLE = statuses_allowing("follow_up")


class Runner:
    """Runs plans in the background and steers them by run id; close it when done."""

    def __init__(
        self,
        store: RunStore | None = None,
        *,
        max_workers: int = 16,
        engine_factory: EngineFactory | None = None,
        poll_s: float = 0.5,
        stale_after_s: float = 30.0,
    ) -> None:
        self._owns_store = store is None
        self.store = store or RunStore()
        # A run waiting for a person's confirmation holds its worker, and the dashboard
        # shares one runner between every session: the pool is bounded, but not tightly.
        self._pool = ThreadPoolExecutor(max_workers=max_workers,
                                        thread_name_prefix="planboard-run")
        self._engine_factory = engine_factory  # None: from the run's stored settings
        self._poll_s = poll_s
        self._stale_after_s = stale_after_s
        self._live: dict[str, LiveRun] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._exit_watch: ExitWatch | None = None

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

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
        """Record the run (plan v1 and all, see :func:`core.runs.dispatch.record_new_run`:
        ``planning_usage``, ``drafted``) and run it in the background; return its id.

        Under ``PLANBOARD_EXECUTION=workers`` the run goes to the workers' queue instead: a
        worker builds its engine from the stored settings, and everyone follows the store.
        """
        self._require_open()
        if dispatch.execution_mode() == "workers":
            return dispatch.submit(self.store, request, plan,
                                   settings_public=settings_public or {}, options=options,
                                   planning_usage=planning_usage, drafted=drafted)
        new = dispatch.record_new_run(self.store, request, plan, options=options,
                                      settings_public=settings_public,
                                      planning_usage=planning_usage, drafted=drafted)
        self._launch(new.run_id, new.plan, engine, new.options, on_event, replanner,
                     resumed_from=None, extra=new.stored)
        return new.run_id

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
        by another live process is asked (through the store, or a worker's mailbox) to
        resume instead.
        """
        live = self._live_run(run_id)
        if live is not None:
            live.request_resume()
            return
        record = self.store.get_run(run_id)
        if record.workflow_id:
            dispatch.resume(self.store, run_id)
            return
        if record.status in TERMINAL_STATUSES:
            raise StoreError(msg("run.nothing_to_resume", run_id=run_id,
                                 status=msg(f"run_status.{record.status}")))
        if owner_alive(record, self._stale_after_s):
            self.store.request_control(run_id, "resume")
            await_resume_taken(self.store, run_id, stale_after_s=self._stale_after_s)
            return
        if record.status in ACTIVE_STATUSES:  # left running by a dead process
            recover_run(self.store, record)
            record = self.store.get_run(run_id)
        if record.plan is None:
            raise StoreError(msg("run.no_plan", run_id=run_id))
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
        StoreError for a run :func:`require_followable` refuses (unfinished, or a worker's).
        """
        from core.planning.followup import extend_plan_request

        record = self.store.get_run(run_id)
        require_followable(record)
        plan, usage = prepared or extend_plan_request(record.plan, text, engine)
        extra = dict(record.options)
        spent = Usage.model_validate(extra.get("followup_usage") or {}) + usage
        extra["followup_usage"] = spent.model_dump()
        if prepared is not None:  # shown to a person, who approved it
            extra["approved_version"] = plan.version
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
            self._require_open()
            if run_id in self._live:
                raise StoreError(f"run {run_id} is already running in this process")
            self._live[run_id] = live
            if self._exit_watch is None:  # the first run: pause the runs at exit
                self._exit_watch = ExitWatch(self._pause_at_exit)
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
            raise

    # ---- executing ------------------------------------------------------------------

    def _execute(self, live: LiveRun) -> None:
        try:
            live.run()
        finally:
            with self._lock:
                self._live.pop(live.run_id, None)
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
        if self._by_worker(run_id):
            dispatch.pause(self.store, run_id)
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
        if record.workflow_id:
            return dispatch.cancel(self.store, run_id, timeout, poll_s=self._poll_s)
        if record.status in TERMINAL_STATUSES:
            raise StoreError(msg("run.nothing_to_cancel", run_id=run_id,
                                 status=msg(f"run_status.{record.status}")))
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

    def decide_version(self, run_id: str, version: int, approve: bool) -> None:
        """Approve or reject the new plan version the run is waiting on."""
        self._decide(run_id, str(version), "approve_version" if approve else "reject_version")

    def _decide(self, run_id: str, step_id: str, verb: str) -> None:
        live = self._live_run(run_id)
        if live is not None:
            live.control.apply(f"{verb}:{step_id}")
            return
        if self._by_worker(run_id):
            dispatch.decide(self.store, run_id, verb, step_id)
            return
        record = self._steerable(run_id, verb)
        self.store.request_control(record.run_id, f"{verb}:{step_id}")

    def _steerable(self, run_id: str, verb: str) -> RunRecord:
        record = self.store.get_run(run_id)
        if record.status not in ACTIVE_STATUSES | {"paused"} or not owner_alive(
            record, self._stale_after_s
        ):
            hint = msg("run.resume_first") if record.status in {"paused", "interrupted"} else ""
            raise StoreError(msg("run.not_steerable", verb=msg(f"control.{verb}"), run_id=run_id,
                                 status=msg(f"run_status.{record.status}"), hint=hint))
        return record

    def _live_run(self, run_id: str) -> LiveRun | None:
        with self._lock:
            return self._live.get(run_id)

    def _by_worker(self, run_id: str) -> bool:
        """True when a DBOS workflow executes the run (steered through its mailbox)."""
        return self.store.get_run(run_id).workflow_id is not None

    # ---- waiting and recovery -------------------------------------------------------

    def wait(self, run_id: str, timeout: float | None = None, *,
             until_confirmation: bool = False) -> RunRecord:
        """Block until the run stops here (finished, paused) or ``timeout``; return it.

        ``until_confirmation=True`` also returns when the run waits for a person's approval.
        Runs executed by another process or a worker are followed through the store.
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
        if self._by_worker(run_id):
            return dispatch.wait(self.store, run_id, timeout, poll_s=self._poll_s,
                                 until_confirmation=until_confirmation, stop=self._closed)
        while True:
            record = self.store.get_run(run_id)
            if record.status not in ACTIVE_STATUSES or (
                until_confirmation and record.status == "waiting_confirmation"
            ) or not owner_alive(record, self._stale_after_s):
                return record
            if deadline is not None and time.monotonic() >= deadline:
                return record
            # another process runs it: the store is the only channel, read it again soon
            if self._closed.wait(self._poll_s):
                return self.store.get_run(run_id)

    def recover_interrupted(self) -> list[str]:
        """Mark runs whose process died as interrupted; reset their running steps to pending.

        Runs owned by this process count as alive: another Runner here may execute them.
        """
        return recover_interrupted(self.store, stale_after_s=self._stale_after_s)

    def pause_all(self, timeout: float = 30.0) -> list[str]:
        """Pause every run of this runner and wait (bounded) until each has stopped."""
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
            watch, self._exit_watch = self._exit_watch, None
        self._closed.set()
        for live in lives:
            if cancel:
                live.control.cancel()
            live.done.wait(timeout)
        self._pool.shutdown(wait=True)
        if watch is not None:
            watch.stop()

    def close(self, timeout: float = 30.0) -> None:
        """Pause this runner's runs (they can be resumed later), stop it, close its store.

        A store passed in by the caller stays open: it is the caller's to close.
        """
        self.pause_all(timeout)
        self.shutdown(cancel=False, timeout=timeout)
        if self._owns_store:
            self.store.close()

    def _require_open(self) -> None:
        if self._closed.is_set():
            raise StoreError(msg("run.runner_closed"))

    def _pause_at_exit(self) -> None:
        if not self._closed.is_set():
            self.pause_all(timeout=10.0)


def open_runner(store: RunStore | None = None) -> Runner:
    """A new runner on ``store`` (None: the default), crashed runs recorded as interrupted."""
    runner = Runner(store)
    runner.recover_interrupted()
    return runner
