"""Background runs: start, pause, resume, cancel, confirm and recover runs recorded in the store.

Every run, a plan or a knowledge or direct answer (:meth:`Runner.answer`), executes as the
DBOS workflow ``planboard.run`` (:mod:`core.runs.workflow`), whose id the store records. By
default a :class:`Runner` starts it on this process's DBOS, over the PlanBoard home's SQLite
(or ``PLANBOARD_DB_URL``); under ``PLANBOARD_EXECUTION=workers`` it only puts it on the runs
queue for ``python -m core worker``. Either way a run is steered through its mailbox and
followed through the store (:mod:`core.runs.dispatch`), so a tab or a process that did not
start it steers it the same way.

Every call that changes a run takes the ``actor`` who asks (None: the OS user of this
process) and is checked by :mod:`core.access.policy` before anything happens; what was
accepted is written to the audit log with the person (:mod:`core.access.audit`), and a
run records its owner (the person who started it).

The owner of a runner (the dashboard keeps one in ``st.cache_resource``; a CLI command opens
its own with :func:`open_runner`) closes it, which pauses the runs it executes and stops
them where they wait, as the process's exit does; ``resume`` continues them, in this
process or another, from their last recorded step.
"""

from __future__ import annotations

import threading
import time
import uuid
from types import TracebackType
from typing import TYPE_CHECKING, Any

import core.runs.dispatch as dispatch
from core.access.audit import AuditAction, record_act
from core.access.identity import Actor
from core.access.policy import Access, access_for, start_action
from core.base.messages import msg
from core.base.usage import Usage
from core.errors import ConfigError, RecordLostError, StoreError
from core.execution.events import EventSink, RunEvent
from core.execution.executor import predict_llm_calls
from core.execution.scheduler import RunOptions
from core.lifecycle import ACTIVE_STATUSES, TERMINAL_STATUSES, statuses_allowing
from core.llm.engine import Engine
from core.plan.approval import widening
from core.plan.model import Plan
from core.plan.size import check_size
from core.runs.attachments import Attached
from core.runs.followable import require_followable
from core.runs.live_run import Replanner
from core.runs.local_runs import SUSPEND_WAIT_S, LocalRuns
from core.runs.recovery import recover_interrupted, recover_run
from core.runs.rerun import RERUNNABLE, PreparedRerun, require_rerunnable
from core.store.run_store import RunRecord, RunStore

if TYPE_CHECKING:
    from core.planning.routes import Route

__all__ = ["Runner", "open_runner"]

_FOLLOWABLE = statuses_allowing("follow_up")


class Runner:
    """Starts runs as DBOS workflows and steers them by run id; close it when done."""

    def __init__(self, store: RunStore | None = None, *, poll_s: float = 0.2) -> None:
        self._owns_store = store is None
        self.store = store or RunStore()
        self._poll_s = poll_s
        self._local = LocalRuns(self._stop_at_exit)
        self._closed = threading.Event()
        self.record_lost: RecordLostError | None = None  # at the last recovery

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
        actor: Actor | None = None,
        queued: bool = False,
        once: bool = False,
    ) -> str:
        """Record the run (plan v1 and all, see :func:`core.runs.dispatch.record_new_run`:
        ``planning_usage``, ``drafted``, and the LLM calls the plan is expected to make)
        and start its workflow here; return its id. A plan too large for a run
        (:mod:`core.plan.size`), or one ``actor`` may not approve (a plan with side effects
        needs an approver), is refused before anything is recorded; ``actor`` owns the run.

        ``once``: this is a person's approval of this version of the plan, which starts one
        run: when the version has a run already (a second click, another tab or process),
        RunExistsError names it and nothing starts.

        ``engine``, ``on_event`` and ``replanner`` serve the run while this process executes
        it; a process that continues it later builds the engine from ``settings_public``.
        Under ``PLANBOARD_EXECUTION=workers`` (or ``queued``) the run goes to the workers'
        queue instead.
        """
        check_size(plan)
        self._require_open()  # before the roles are read: a closed runner's store is closed
        access = self.access(actor)
        action = start_action(plan, engine.registry, options)
        access.require(action)
        estimate = Usage(llm_calls=predict_llm_calls(plan, engine.registry,
                                                     offline=engine.offline))
        run_id = self._start(request, plan, engine=engine, options=options,
                             settings_public=settings_public, on_event=on_event,
                             replanner=replanner, planning_usage=planning_usage,
                             drafted=drafted, estimate=estimate, queued=queued,
                             extra={"owner": access.actor.record()}, once=once)
        record = self.store.get_run(run_id)
        approved = record.options.get("approved_version", plan.version)
        if record.versions > 1:  # the person's edit is the version they approved
            record_act(self.store, access.actor, "edit", run_id=run_id, version=approved)
        record_act(self.store, access.actor, "approve", run_id=run_id, version=approved,
                   detail={"side_effects": action == "approve"})
        return run_id

    def answer(
        self,
        request: str,
        route: Route,
        *,
        engine: Engine,
        settings_public: dict[str, Any] | None = None,
        on_event: EventSink | None = None,
        routing_usage: Usage | None = None,
        queued: bool = False,
        actor: Actor | None = None,
    ) -> str:
        """Record a knowledge or direct answer (``route``) as a run and start its workflow,
        as :meth:`start` does a plan's; return its id.

        The answer is the workflow's to make (:class:`core.runs.workflow.DurableAnswer`):
        follow it with :meth:`wait` or the run view. ``routing_usage`` (deciding the route)
        is added to the run's usage. ``queued``: put it on the workers' queue whatever
        ``PLANBOARD_EXECUTION`` says (``run --detach``). An answer that cannot be made at
        all raises here, and nothing is recorded (:func:`core.runs.answers.check_answerable`).
        """
        from core.runs.answers import ANSWER_MODES, check_answerable

        if route.mode not in ANSWER_MODES:
            raise ValueError(f"a {route.mode} route is not answered without a plan")
        self._require_open()
        access = self.access(actor)
        access.require("run_read_only")  # an answer without a plan causes no side effect
        check_answerable(request, route.mode, engine)
        return self._start(request, Plan(goal=request), engine=engine,
                           options=RunOptions(confirm_side_effects=False),
                           settings_public=settings_public, on_event=on_event,
                           planning_usage=routing_usage, queued=queued,
                           extra={"mode": route.mode, "route_reason": route.reason,
                                  "owner": access.actor.record()})

    def _start(self, request: str, plan: Plan, *, engine: Engine, options: RunOptions | None,
               settings_public: dict[str, Any] | None, on_event: EventSink | None,
               replanner: Replanner | None = None, planning_usage: Usage | None = None,
               drafted: Plan | None = None, estimate: Usage | None = None,
               extra: dict[str, Any] | None = None, queued: bool = False,
               once: bool = False) -> str:
        self._require_open()
        if queued or dispatch.execution_mode() == "workers":
            return dispatch.submit(self.store, request, plan,
                                   settings_public=settings_public or {}, options=options,
                                   planning_usage=planning_usage, drafted=drafted,
                                   estimate=estimate, extra=extra, once=once)
        self._launch_engine()  # first: a database DBOS cannot use records no run
        new = dispatch.record_new_run(self.store, request, plan, options=options,
                                      settings_public=settings_public,
                                      planning_usage=planning_usage, drafted=drafted,
                                      workflow=True, estimate=estimate, extra=extra,
                                      once=once)
        try:
            self._local.execute(new.run_id, new.run_id, Attached(engine, on_event, replanner))
        except BaseException:  # recorded, and not started: resume starts it
            recover_run(self.store, self.store.get_run(new.run_id))
            raise
        return new.run_id

    def resume(
        self,
        run_id: str,
        *,
        engine: Engine | None = None,
        on_event: EventSink | None = None,
        replanner: Replanner | None = None,
        actor: Actor | None = None,
    ) -> None:
        """Continue a paused or interrupted run from its first unfinished step (its owner
        or an approver: ``actor``).

        Completed steps are kept with their results and timestamps: DBOS replays the
        run's record up to its last completed step. A run paused where a live process
        executes it is asked (through its mailbox) to resume; one whose process has ended
        is continued here (or, under workers, by a worker). Either way after one claim in
        the store, so that of two people resuming it one continues it and the other is
        told (StoreError ``run.busy``, naming the process that runs it), as is whoever
        resumes a run that something executes already; one waiting for a confirmation in a
        live process is left to the caller to answer. The only wait for another process
        is bounded: for the one holding a paused run to take the resume (StoreError after
        10 s, saying so).
        """
        self._require_open()
        record = self.store.get_run(run_id)
        access = self.access(actor)
        access.require("steer", record)
        if record.status in TERMINAL_STATUSES:
            raise StoreError(msg("run.nothing_to_resume", run_id=run_id,
                                 status=msg(f"run_status.{record.status}")))
        held_by = dispatch.holder(record)
        if held_by is not None and record.status == "waiting_confirmation":
            return  # it waits for a person, not for a process: the caller answers it
        if held_by is not None and record.status != "paused":
            raise StoreError(msg("run.busy", run_id=run_id, holder=held_by))
        if held_by is not None:  # paused where a live process waits: it continues it
            self.store.claim_run(run_id, {"paused"}, workflow_id=record.workflow_id or run_id)
            seen = dispatch.resume(self.store, run_id)
            self._act(access, "resume", run_id)
            self._local.nudge(run_id)
            dispatch.await_resumed(self.store, run_id, seen)
            return
        if record.status in ACTIVE_STATUSES:  # its process ended while it ran
            recover_run(self.store, record)
            record = self.store.get_run(run_id)
        if record.status in ACTIVE_STATUSES:  # another process claimed it meanwhile
            raise StoreError(msg("run.busy", run_id=run_id, holder=dispatch.holder(record)
                                 or msg("run.holder_unknown")))
        if record.plan is None:
            raise StoreError(msg("run.no_plan", run_id=run_id))
        resumed = RunEvent(kind="resumed", plan_version=record.plan.version,
                           data={"from_status": record.status})
        # a paused run, continued from its record, stops at its pause again: the mail that
        # resumes it is there first, and the run records that it resumed
        self._continue(record, Attached(engine, on_event, replanner),
                       allowed=frozenset({record.status}), resumed=resumed)
        self._act(access, "resume", run_id)

    def follow_up(self, run_id: str, text: str, *, engine: Engine,
                  on_event: EventSink | None = None,
                  prepared: tuple[Plan, Usage] | None = None,
                  actor: Actor | None = None) -> Plan:
        """Extend a finished run with a follow-up request and run the new steps.

        Completed steps and results are kept; the new version adds steps and a new
        synthesis, and only those run, in a new workflow of the run. ``prepared`` is a
        version already made (and shown to a person) with
        :func:`core.planning.followup.extend_plan_request`, whose new side effects ``actor``
        approves (an approver's to do). Returns the version.
        StoreError for a run :func:`require_followable` refuses (unfinished).
        """
        from core.planning.followup import extend_plan_request

        self._require_open()
        record = self.store.get_run(run_id)
        access = self.access(actor)
        access.require("steer", record)
        require_followable(record)
        if prepared is not None and widening(record.plan, prepared[0], engine.registry):
            access.require("approve", record)
        plan, usage = prepared or extend_plan_request(record.plan, text, engine)
        extra = _later_options(record)
        spent = Usage.model_validate(extra.get("followup_usage") or {}) + usage
        extra["followup_usage"] = spent.model_dump()
        extra["earlier_steps"] = [step.id for step in record.plan.steps]  # not its answer's
        if prepared is not None:  # shown to a person, who approved it
            extra["approved_version"] = plan.version
        replanned = RunEvent(
            kind="replanned", plan_version=plan.version,
            data={"from_version": record.plan.version, "to_version": plan.version,
                  "source": "follow-up", "reason": text})
        # the new version, its usage and event are written only if this process wins the run
        self._continue(record, Attached(engine, on_event), allowed=_FOLLOWABLE,
                       events=[replanned], fresh=True,
                       claim=dict(plan=plan, reason=f"follow-up: {text}", options=extra))
        self._act(access, "follow_up", run_id, version=plan.version, detail={"text": text})
        return plan

    def rerun(self, prepared: PreparedRerun, *, engine: Engine | None = None,
              on_event: EventSink | None = None, actor: Actor | None = None) -> None:
        """Run a re-run a person approved (:func:`core.runs.rerun.prepare_rerun`): its
        version becomes the run's current and approved one, and a new workflow of the run
        executes its fresh steps; the kept steps' results are read, never made again.

        StoreError when the run is no longer finished, or has a newer version than the
        one the re-run was prepared from (nothing is recorded then); AccessDeniedError
        unless ``actor`` owns the run or approves, and approves when a side effect runs
        again.
        """
        self._require_open()
        record = self.store.get_run(prepared.run_id)
        access = self.access(actor)
        access.require("steer", record)
        if prepared.side_effects:
            access.require("approve", record)
        current = require_rerunnable(record)
        if current.version + 1 != prepared.plan.version:
            raise StoreError(msg("rerun.changed_meanwhile", run_id=record.run_id,
                                 version=current.version))
        extra = _later_options(record) | {"approved_version": prepared.plan.version}
        spent = Usage.model_validate(extra.get("rerun_usage") or {}) + prepared.replaced
        extra["rerun_usage"] = spent.model_dump()
        replanned = RunEvent(
            kind="replanned", plan_version=prepared.plan.version,
            data={"from_version": current.version, "to_version": prepared.plan.version,
                  "source": "rerun", "reason": prepared.reason,
                  "reason_message": prepared.why.model_dump(),
                  "steps": prepared.again})
        self._continue(record, Attached(engine, on_event), allowed=RERUNNABLE,
                       events=[replanned], fresh=True,
                       claim=dict(plan=prepared.plan, reason=prepared.reason, options=extra))
        self._act(access, "rerun", record.run_id, version=prepared.plan.version,
                  step_id=prepared.step_id, detail={"again": prepared.again})

    def _continue(self, record: RunRecord, loan: Attached, *, allowed: frozenset[str],
                  events: list[RunEvent] | None = None, resumed: RunEvent | None = None,
                  fresh: bool = False, claim: dict[str, Any] | None = None) -> None:
        """Claim the run in the store, then continue its workflow from its record, or
        start a new one (``fresh``, or none DBOS can continue) on the stored plan.

        ``resumed`` is recorded with the claim, unless the workflow continues from a
        paused record (it records its own, when it reads the resume mail sent here).
        """
        import core.runs.durable as durable

        workers = dispatch.execution_mode() == "workers"
        if not workers:
            self._launch_engine()
        workflow_id = record.workflow_id
        if fresh or not dispatch.can_continue(workflow_id):
            workflow_id = record.run_id if workflow_id is None else (
                f"{record.run_id}.{uuid.uuid4().hex[:6]}")
            fresh = True
        written = list(events or [])
        if resumed is not None and (fresh or record.status != "paused"):
            written.append(resumed)
        self.store.claim_run(record.run_id, allowed, workflow_id=workflow_id, events=written,
                             holder=durable.embedded_executor_id(), **(claim or {}))
        try:
            if resumed is not None and not fresh:
                durable.send_control(workflow_id, "resume")
            if workers:
                dispatch.start_on_queue(workflow_id, record.run_id, fresh=fresh)
            else:
                self._local.execute(record.run_id, workflow_id, loan, take_over=not fresh)
        except BaseException:  # claimed, and not started: nobody holds it but this process
            recover_run(self.store, self.store.get_run(record.run_id))
            raise

    @staticmethod
    def _launch_engine() -> None:
        """DBOS in this process; ConfigError (one line) when its database cannot be used."""
        import core.runs.durable as durable

        try:
            durable.launch(durable.embedded_executor_id())
        except durable.LAUNCH_FAILURES as exc:
            raise ConfigError(msg("run.engine_unavailable",
                                  error=durable.failure_cause(exc))) from None

    # ---- steering -------------------------------------------------------------------

    def pause(self, run_id: str, *, actor: Actor | None = None) -> None:
        """Finish the running steps, start no new ones (its owner or an approver)."""
        access = self.access(actor)
        access.require("steer", self._steerable(run_id, "pause"))
        dispatch.pause(self.store, run_id)
        self._local.nudge(run_id)
        self._act(access, "pause", run_id)

    def cancel(self, run_id: str, timeout: float = 30.0, *,
               actor: Actor | None = None) -> RunRecord:
        """Cancel the run (its owner or an approver) and return once the cancellation is
        recorded (a ``timeout`` shorter than :data:`core.runs.dispatch.WORKER_GONE_AFTER_S`
        only asks a live process, which records it)."""
        record = self.store.get_run(run_id)
        access = self.access(actor)
        access.require("steer", record)
        if record.status in TERMINAL_STATUSES:
            raise StoreError(msg("run.nothing_to_cancel", run_id=run_id,
                                 status=msg(f"run_status.{record.status}")))
        if not dispatch.is_executing(record):
            cancelled = dispatch.cancel_stopped(self.store, record)
        else:
            self._local.nudge(run_id)
            cancelled = dispatch.cancel(self.store, run_id, timeout, poll_s=self._poll_s)
        self._act(access, "cancel", run_id)
        return cancelled

    def confirm(self, run_id: str, step_id: str, *, actor: Actor | None = None) -> None:
        """Approve the side-effecting step the run is waiting on (an approver's to do)."""
        self._decide(run_id, step_id, "confirm", actor)

    def reject(self, run_id: str, step_id: str, *, actor: Actor | None = None) -> None:
        """Refuse the side-effecting step the run is waiting on (it will not run)."""
        self._decide(run_id, step_id, "reject", actor)

    def decide_version(self, run_id: str, version: int, approve: bool, *,
                       actor: Actor | None = None) -> None:
        """Approve or reject the new plan version the run is waiting on (it widens the
        side effects: an approver's to do)."""
        self._decide(run_id, str(version), "approve_version" if approve else "reject_version",
                     actor)

    def _decide(self, run_id: str, step_id: str, verb: AuditAction,
                actor: Actor | None) -> None:
        access = self.access(actor)
        access.require("approve", self._steerable(run_id, verb))
        dispatch.decide(self.store, run_id, verb, step_id)
        self._local.nudge(run_id)
        version = int(step_id) if verb.endswith("_version") else None
        self._act(access, verb, run_id, version=version,
                  step_id=None if version is not None else step_id)

    # ---- who may, and who did ------------------------------------------------------

    def access(self, actor: Actor | None) -> Access:
        """What ``actor`` (None: this process's OS user) may do under the roles in force."""
        return access_for(actor, self.store)

    def _act(self, access: Access, action: AuditAction, run_id: str, *,
             version: int | None = None, step_id: str | None = None,
             detail: dict[str, Any] | None = None) -> None:
        if version is None:
            plan = self.store.get_run(run_id).plan
            version = plan.version if plan else None
        record_act(self.store, access.actor, action, run_id=run_id, version=version,
                   step_id=step_id, detail=detail)

    def _steerable(self, run_id: str, verb: str) -> RunRecord:
        """The run, when a live process executes it (else StoreError: resume it first)."""
        record = self.store.get_run(run_id)
        if record.status in ACTIVE_STATUSES | {"paused"} and dispatch.is_executing(record):
            return record
        hint = msg("run.resume_first") if record.status in {"paused", "interrupted"} else ""
        raise StoreError(msg("run.not_steerable", verb=msg(f"control.{verb}"), run_id=run_id,
                             status=msg(f"run_status.{record.status}"), hint=hint))

    # ---- waiting and recovery -------------------------------------------------------

    def wait(self, run_id: str, timeout: float | None = None, *,
             until_confirmation: bool = False) -> RunRecord:
        """Block until the run stops (finished, paused, interrupted) or ``timeout``;
        return it. ``until_confirmation=True`` also returns when the run waits for a
        person's approval."""
        return dispatch.wait(self.store, run_id, timeout, poll_s=self._poll_s,
                             until_confirmation=until_confirmation, stop=self._closed,
                             loan=self._local.loan(run_id))

    def recover_interrupted(self) -> list[str]:
        """Record runs whose embedded process has ended as interrupted; reset their
        running steps to pending. While the engine's record is lost nothing can be
        judged: :attr:`record_lost` says why, and the runs stay as the store has them."""
        try:
            recovered = recover_interrupted(self.store)
        except RecordLostError as exc:
            self.record_lost = exc
            return []
        self.record_lost = None
        return recovered

    def pause_all(self, timeout: float = 30.0) -> list[str]:
        """Pause every run this runner executes here and wait (bounded) until each has
        stopped; return their ids."""
        paused = []
        for run_id in self._local.unfinished():
            try:
                dispatch.pause(self.store, run_id)
                self._local.nudge(run_id)
                paused.append(run_id)
            except StoreError:  # it has ended meanwhile
                continue
        deadline = time.monotonic() + timeout
        for run_id in paused:
            self.wait(run_id, max(0.0, deadline - time.monotonic()))
        return paused

    def close(self, timeout: float = 30.0) -> None:
        """Pause this runner's runs, stop them where they wait (``resume`` continues
        them), stop the runner and close its store.

        A store passed in by the caller stays open: it is the caller's to close.
        """
        if self._closed.is_set():
            return
        self.pause_all(timeout)
        self._stop(timeout)
        if self._owns_store:
            self.store.close()

    def shutdown(self, *, cancel: bool = True, timeout: float = 30.0) -> None:
        """Cancel (optionally) the runs this runner executes here, and stop it as
        :meth:`close` does, leaving its store open."""
        for run_id in self._local.unfinished() if cancel else []:
            try:
                self.cancel(run_id, timeout)
            except StoreError:  # it has ended meanwhile
                continue
        self._stop(timeout)

    def _stop(self, timeout: float) -> None:
        self._local.suspend(timeout)
        self._closed.set()
        self._local.stop_watching()

    def _require_open(self) -> None:
        if self._closed.is_set():
            raise StoreError(msg("run.runner_closed"))

    def _stop_at_exit(self) -> None:
        if not self._closed.is_set():
            self.pause_all(timeout=SUSPEND_WAIT_S)
            self._local.suspend(SUSPEND_WAIT_S)


def open_runner(store: RunStore | None = None) -> Runner:
    """A new runner on ``store`` (None: the default), crashed runs recorded as interrupted."""
    runner = Runner(store)
    runner.recover_interrupted()
    return runner


def _later_options(record: RunRecord) -> dict[str, Any]:
    """The run's options for a later request on it (a follow-up, a re-run): the reads made
    while its first plan was written served that plan only, and a step run again calls."""
    options = dict(record.options)
    options.pop("read_ahead", None)
    return options
