"""Runs as DBOS workflows, seen from any process: record, submit, steer and follow them.

A run is recorded in the store (:func:`record_new_run`) and executed as the workflow
``planboard.run`` whose id the store keeps: on the process that started it (the default),
or, with ``PLANBOARD_EXECUTION=workers``, on the runs queue that every
``python -m core worker`` of the same database serves. Steering a run leaves a message in
its mailbox (the workflow applies it); the store stays the one place to follow it, so the
dashboard and the command line read any run the same way. DBOS's workflow status, and
the process the store names as the run's holder (the one that recorded or claimed it),
say who executes a run (:func:`holder`) and whether it can continue from its record
(:func:`can_continue`).

Only the functions that talk to DBOS import it (importing ``dbos`` costs about 0.7 s).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError

from core.base import tracing
from core.base.messages import Message, msg
from core.base.usage import Usage
from core.errors import ConfigError, StoreError
from core.execution.events import RunEvent
from core.execution.read_ahead import for_version
from core.execution.scheduler import RunOptions
from core.lifecycle import ACTIVE_STATUSES, TERMINAL_STATUSES, UNFINISHED_STATUSES
from core.plan.diff import diff_plans
from core.plan.model import Plan
from core.runs.executors import embedded_executor_id, executor_gone
from core.runs.live_run import DRAFTED_BY_WORKER, TRACE_CONTEXT
from core.store.claims import HOLDER
from core.store.run_store import RunRecord, RunStore

if TYPE_CHECKING:
    from core.runs.attachments import Attached

__all__ = [
    "EXECUTION_MODES",
    "NewRun",
    "await_resumed",
    "can_continue",
    "cancel",
    "cancel_stopped",
    "decide",
    "execution_mode",
    "holder",
    "is_executing",
    "pause",
    "record_new_run",
    "resume",
    "start_on_queue",
    "submit",
    "submit_request",
    "unfinished_runs",
    "version_run_id",
    "wait",
]

EXECUTION_MODES = ("embedded", "workers")
_STEERABLE = ACTIVE_STATUSES | {"paused"}
_QUEUED = (None, "ENQUEUED")  # no worker has taken the workflow (None: not enqueued yet)
T = TypeVar("T")


def execution_mode() -> str:
    """Where new runs execute: ``embedded`` (this process, the default) or ``workers``
    (PLANBOARD_EXECUTION=workers: only put on the runs queue); ConfigError otherwise."""
    chosen = os.environ.get("PLANBOARD_EXECUTION", "").strip().lower() or "embedded"
    if chosen not in EXECUTION_MODES:
        raise ConfigError(msg("run.bad_execution_mode", value=repr(chosen)))
    return chosen


# ---- recording and submitting ---------------------------------------------------------------

@dataclass(frozen=True)
class NewRun:
    """A run just recorded: its id, the plan to execute, its options (as given and as
    stored, with the planning usage and the approved version)."""

    run_id: str
    plan: Plan
    options: RunOptions
    stored: dict[str, Any]


def version_run_id(request: str, plan: Plan) -> str:
    """The id of the run an approval of this version of the plan (for ``request``) starts:
    the same for the same request and plan, whichever tab or process approves it, so the
    store's key lets one approval of a version start one run (RunExistsError names it)."""
    version = json.dumps({"request": request, "plan": plan.canonical()}, sort_keys=True,
                         ensure_ascii=False, default=str)
    return hashlib.sha256(version.encode("utf-8")).hexdigest()[:12]


def record_new_run(
    store: RunStore, request: str, plan: Plan, *, options: RunOptions | None,
    settings_public: dict[str, Any] | None, planning_usage: Usage | None = None,
    drafted: Plan | None = None, workflow: bool = False, estimate: Usage | None = None,
    extra: Mapping[str, Any] | None = None, once: bool = False,
) -> NewRun:
    """Record a new run (plan v1 and all) with status planned.

    ``planning_usage`` (the LLM calls that made the plan) is added to the run's usage.
    ``drafted`` is the plan as the planner made it: when a person edited it before
    approving, the draft is kept as version 1 and the edited plan runs as version 2.
    ``workflow``: a DBOS workflow whose id is the run id executes it. ``estimate``: what
    running the plan was expected to cost before it ran (its timeline's cost meter).
    ``extra``: more options to store (a plan-less answer's mode and route). ``once``: the
    run gets the version's id (:func:`version_run_id`); when a run has it already,
    RunExistsError naming that run, and nothing is recorded.
    """
    run_id = version_run_id(request, plan) if once else uuid.uuid4().hex[:12]
    options = (options or RunOptions()).model_copy(update={"run_id": run_id})
    stored = options.model_dump(mode="json") | dict(extra or {})
    stored[HOLDER] = embedded_executor_id()  # until its workflow starts
    if planning_usage is not None:
        stored["planning_usage"] = planning_usage.model_dump()
    if estimate is not None:
        stored["estimate"] = estimate.model_dump()
    edited = drafted is not None and not diff_plans(drafted, plan).is_empty
    first = drafted if edited and drafted is not None else plan
    stored["approved_version"] = first.version + 1 if edited else plan.version
    if options.read_ahead:  # they serve the version that runs first, and only that one
        stored["read_ahead"] = for_version(options.read_ahead, stored["approved_version"])
    with _submitting(run_id, stored, plan):
        store.create_run(request, settings_public or {}, first, run_id=run_id, options=stored,
                         usage=planning_usage, workflow_id=run_id if workflow else None)
    if edited:
        edited_reason = msg("version.edited")
        plan = plan.model_copy(update={"version": first.version + 1})
        store.save_plan_version(run_id, plan, reason="manual edit")
        store.append_event(run_id, RunEvent(
            kind="replanned", plan_version=plan.version,
            data={"from_version": first.version, "to_version": plan.version,
                  "source": "manual", "reason": str(edited_reason),
                  "reason_message": edited_reason.model_dump()}))
    return NewRun(run_id, plan, options, stored)


@contextmanager
def _submitting(run_id: str, stored: dict[str, Any], plan: Plan | None) -> Iterator[None]:
    """The span ``submit run`` around recording a run (the root of the run's trace, or a
    child of the caller's span); its trace context goes into the options ``stored``, so
    that whichever process executes the run continues that trace."""
    with tracing.span("submit run", {"planboard.run.id": run_id,
                                     "planboard.plan.steps": len(plan.steps) if plan else None},
                      kind="producer"):
        found = tracing.carrier()
        if found:
            stored[TRACE_CONTEXT] = found
        yield


def submit(store: RunStore, request: str, plan: Plan, *, settings_public: dict[str, Any],
           options: RunOptions | None, planning_usage: Usage | None = None,
           drafted: Plan | None = None, estimate: Usage | None = None,
           extra: Mapping[str, Any] | None = None, once: bool = False) -> str:
    """Record the run (as :func:`record_new_run`, ``once`` too) and put it on the runs
    queue for a worker; return its id. StoreError when the queue cannot be reached (the run
    is then recorded as failed, saying why)."""
    import core.runs.durable as durable

    _queue(durable.workflow_status, "")  # fails (and records nothing) when unreachable
    new = record_new_run(store, request, plan, options=options, settings_public=settings_public,
                         planning_usage=planning_usage, drafted=drafted, workflow=True,
                         estimate=estimate, extra=extra, once=once)
    _enqueue_recorded(store, new.run_id, new.plan.version)
    return new.run_id


def submit_request(store: RunStore, request: str, *, settings_public: dict[str, Any],
                   options: RunOptions | None, extra: Mapping[str, Any] | None = None) -> str:
    """Record a request without a plan and put it on the runs queue; return its id. The
    worker that takes it drafts the plan with its own tools and model, and runs it as
    drafted: the person approved it beforehand (``run --yes --detach``). So a submission
    only records and enqueues: it loads no tool, starts no MCP server and asks no model.
    StoreError as :func:`submit`; ``extra``: more options to store (its owner)."""
    import core.runs.durable as durable

    _queue(durable.workflow_status, "")  # fails (and records nothing) when unreachable
    run_id = uuid.uuid4().hex[:12]
    stored = (options or RunOptions()).model_copy(update={"run_id": run_id}).model_dump(
        mode="json") | dict(extra or {}) | {DRAFTED_BY_WORKER: True,
                                             HOLDER: embedded_executor_id()}
    with _submitting(run_id, stored, None):
        store.create_run(request, settings_public, None, run_id=run_id, options=stored,
                         workflow_id=run_id)
    _enqueue_recorded(store, run_id, 1)
    return run_id


def _enqueue_recorded(store: RunStore, run_id: str, version: int) -> None:
    """Put the recorded run on the runs queue; when the queue cannot be reached the run is
    recorded failed, saying why, and the StoreError raised."""
    import core.runs.durable as durable

    try:
        _queue(durable.enqueue, durable.RUN_WORKFLOW, run_id, run_id)
    except StoreError as exc:
        store.set_status(run_id, "failed", event=RunEvent(
            kind="run_finished", plan_version=version,
            data={"status": "failed", "error": str(exc)}))
        raise


# ---- steering -------------------------------------------------------------------------------

def pause(store: RunStore, run_id: str) -> None:
    """Ask the worker to finish the running steps and start no new ones."""
    _send(_steerable(store, run_id, "pause"), "pause")


def resume(store: RunStore, run_id: str) -> int:
    """Ask the process that holds a paused run to continue it; return the number of the
    run's last event before the request (see :func:`await_resumed`)."""
    record = store.get_run(run_id)
    if record.status in TERMINAL_STATUSES:
        raise StoreError(msg("run.nothing_to_resume", run_id=run_id,
                             status=msg(f"run_status.{record.status}")))
    seen = max((event.seq for event in store.events(run_id)), default=0)
    _send(record, "resume")
    return seen


def await_resumed(store: RunStore, run_id: str, after: int, *, timeout: float = 10.0,
                  poll_s: float = 0.1) -> None:
    """Wait, up to ``timeout``, until the run records (after its event number ``after``)
    that it resumed, so that whoever follows it next sees it going. StoreError when it has
    not (busy, or nothing serves it): the request stays in its mailbox, and the run
    continues once its process reads it."""
    deadline = time.monotonic() + timeout
    while not any(event.kind == "resumed" for event in store.events(run_id, after=after)):
        if time.monotonic() > deadline:
            raise StoreError(msg("run.resume_not_taken", run_id=run_id,
                                 seconds=f"{timeout:g}"))
        time.sleep(poll_s)


def decide(store: RunStore, run_id: str, verb: str, target: str) -> None:
    """Send a person's decision: ``verb`` confirm or reject (``target`` a step id),
    approve_version or reject_version (``target`` a version number)."""
    _send(_steerable(store, run_id, verb), f"{verb}:{target}")


# A worker that has not answered a cancel for this long is taken for gone: a step ends
# within it, or the worker is dead (an LLM call of a local model may take longer: then the
# run is recorded cancelled while the call finishes, and its worker's end is not kept).
WORKER_GONE_AFTER_S = 30.0


def cancel(store: RunStore, run_id: str, timeout: float = 30.0, *,
           poll_s: float = 0.2) -> RunRecord:
    """Cancel the run and return once the cancellation is recorded.

    A run no worker has taken yet, or whose worker does not answer within ``timeout``
    (gone, say), is cancelled in DBOS and recorded here; else its worker cancels it. A
    ``timeout`` shorter than :data:`WORKER_GONE_AFTER_S` only asks (the dashboard's button
    does not wait for a step to end): the run is returned as it is, and its worker records
    the cancellation.
    """
    import core.runs.durable as durable

    record = store.get_run(run_id)
    if record.status in TERMINAL_STATUSES:
        raise StoreError(msg("run.nothing_to_cancel", run_id=run_id,
                             status=msg(f"run_status.{record.status}")))
    workflow_id = record.workflow_id or run_id
    if _engine(durable.workflow_status, workflow_id) not in _QUEUED:
        _send(record, "cancel")
        record = _follow(store, run_id, lambda status: status in TERMINAL_STATUSES,
                         timeout, poll_s)
        if record.status in TERMINAL_STATUSES or timeout < WORKER_GONE_AFTER_S:
            return record
        reason = f"cancelled while {record.status}; its worker did not answer"
    else:
        reason = f"cancelled while {record.status}, before a worker took it"
    _engine(durable.cancel_workflow, workflow_id)
    return _record_cancelled(store, run_id, reason)


def cancel_stopped(store: RunStore, record: RunRecord) -> RunRecord:
    """Cancel a run that nothing executes (its process ended, or it was stopped where it
    waited): its workflow, so that nobody continues it, then its record."""
    import core.runs.durable as durable

    if record.workflow_id is not None and _engine(durable.workflow_state, record.workflow_id):
        _engine(durable.cancel_workflow, record.workflow_id)
    return _record_cancelled(store, record.run_id, f"cancelled while {record.status}",
                             allowed={record.status})


def _record_cancelled(store: RunStore, run_id: str, reason: str,
                      allowed: Collection[str] = UNFINISHED_STATUSES) -> RunRecord:
    """The store's side of a cancel nobody else records (the workflow is cancelled);
    ``allowed``: the statuses the run may still be in (else it ended, or was resumed,
    meanwhile: how it is now stands, and is returned)."""
    try:
        return store.cancel_unowned(run_id, reason=reason, allowed=allowed)
    except StoreError:
        return store.get_run(run_id)


def _steerable(store: RunStore, run_id: str, verb: str) -> RunRecord:
    record = store.get_run(run_id)
    if record.status not in _STEERABLE:
        raise StoreError(msg("run.worker_not_steerable", verb=msg(f"control.{verb}"),
                             run_id=run_id, status=msg(f"run_status.{record.status}")))
    return record


def _send(record: RunRecord, action: str) -> None:
    """Leave ``action`` in the run's mailbox, once per request: every request is delivered
    (pause, resume, pause), since the run applies a repeated control harmlessly."""
    import core.runs.durable as durable

    key = f"{record.run_id}:{action}:{uuid.uuid4().hex}"  # a retried send delivers once
    _engine(durable.send_control, record.workflow_id or record.run_id, action,
            idempotency_key=key)


def start_on_queue(workflow_id: str, run_id: str, *, fresh: bool) -> None:
    """Put run ``run_id`` on the runs queue for a worker: a new workflow (``fresh``) on
    its stored plan, else its workflow, continued from its record (only when nothing
    executes it: nothing checks that, the caller has made sure)."""
    import core.runs.durable as durable

    if fresh:
        _queue(durable.enqueue, durable.RUN_WORKFLOW, workflow_id, run_id)
    else:
        _queue(durable.resume_on_queue, workflow_id)


def holder(record: RunRecord) -> str | Message | None:
    """Who executes the run, or is about to: the live process (or the worker) DBOS shows
    running its workflow, or whose own queue holds it, the run queue while it waits there,
    or the live process that recorded or claimed the run (it is starting its workflow);
    None when nothing does (its process ended, or it was stopped)."""
    if record.workflow_id is not None:
        import core.runs.durable as durable

        found = _engine(durable.workflow_state, record.workflow_id)
        if found is not None and found[0] == "ENQUEUED" and not found[1]:
            return msg("run.holder_queue")
        if found is not None and found[0] in ("ENQUEUED", "PENDING") and not executor_gone(
                found[1]):
            return found[1]
    recorded = str(record.options.get(HOLDER) or "")
    if record.status in ACTIVE_STATUSES and recorded and not executor_gone(recorded):
        return recorded
    return None


def is_executing(record: RunRecord) -> bool:
    """True when something executes the run, has it queued, or is starting it
    (:func:`holder`)."""
    return holder(record) is not None


def can_continue(workflow_id: str | None) -> bool:
    """True when DBOS can continue the workflow from its record (unfinished: pending,
    queued, or stopped by a cancel); False for a finished or missing one."""
    import core.runs.durable as durable

    found = _engine(durable.workflow_state, workflow_id) if workflow_id else None
    return found is not None and found[0] in ("PENDING", "ENQUEUED", "CANCELLED")


# ---- a worker gone for good ----------------------------------------------------------------

def unfinished_runs(worker: str) -> list[str]:
    """The runs that worker ``worker`` took and did not finish."""
    import core.runs.durable as durable

    return _queue(durable.unfinished_workflows, worker)



# ---- following ------------------------------------------------------------------------------

def wait(store: RunStore, run_id: str, timeout: float | None = None, *,
         until_confirmation: bool = False, poll_s: float = 0.2,
         stop: threading.Event | None = None, loan: Attached | None = None) -> RunRecord:
    """Follow the run in the store until it leaves the active statuses (finished, paused),
    ``timeout`` passes or ``stop`` is set; return it. ``until_confirmation=True`` also
    returns when it waits for a person's decision. ``loan``: the run executes in this
    process, whose events wake the wait and whose end ends it."""
    return _follow(store, run_id, lambda status: status not in ACTIVE_STATUSES or (
        until_confirmation and status == "waiting_confirmation"), timeout, poll_s, stop, loan)


def _follow(store: RunStore, run_id: str, until: Callable[[str], bool],
            timeout: float | None, poll_s: float, stop: threading.Event | None = None,
            loan: Attached | None = None) -> RunRecord:
    """Watch the run's status until ``until`` holds for it, ``timeout`` passes or ``stop``
    is set (or, with a ``loan``, its workflow ended here); return the run as it is then.

    Only the status is read while waiting: the whole record (its plan) is read once, at
    the end, so that following a long plan costs no more per event than a short one."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pause_between = stop or threading.Event()
    while True:
        ended = loan is not None and loan.ended.is_set()  # before the read: it holds the end
        if ended or until(store.status(run_id)):
            break
        left = poll_s if deadline is None else min(poll_s, deadline - time.monotonic())
        if left <= 0 or pause_between.is_set():
            break
        if loan is not None:
            with loan.changed:  # an event of the run wakes it
                loan.changed.wait(left)
        elif pause_between.wait(left):  # another process runs it: read the store again
            break
    return store.get_run(run_id)


# ---- the engine's failures --------------------------------------------------------------------

def _engine(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call`` into DBOS; its database failures become one StoreError saying what to do
    (in workers mode: reach the workers' queue)."""
    queue = execution_mode() == "workers"
    return _reaching("run.queue_unavailable" if queue else "run.engine_unavailable",
                     call, *args, **kwargs)


def _queue(call: Callable[..., T], *args: Any) -> T:
    """``call`` into the workers' queue; its failures say to start a worker."""
    return _reaching("run.queue_unavailable", call, *args)


def _reaching(key: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    from core.runs.durable import failure_cause

    try:
        return call(*args, **kwargs)
    except SQLAlchemyError as exc:
        raise StoreError(msg(key, error=failure_cause(exc))) from None
