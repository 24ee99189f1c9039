"""Command-line commands for runs executed by workers: worker, recover, and following a
submitted run (``run`` in workers mode, ``run --detach``)."""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from core.access.audit import record_act
from core.access.policy import access_for
from core.base import tracing
from core.base.messages import msg, render
from core.cli.output import ask, bounded_int, print_json, print_progress, short
from core.cli.runs import report_run, wait_answering
from core.cli.text import cli_language, say
from core.errors import ConfigError, RunNotFoundError, StoreError
from core.llm.settings import safe_url
from core.planning.periods import today

__all__ = ["add_worker_commands", "cmd_recover", "cmd_worker", "follow_submitted",
           "printing_events", "run_on_workers", "submit_request"]

DEFAULT_CONCURRENCY = 4
_FOLLOW_POLL_S = 0.2


def add_worker_commands(subparsers: Any) -> None:
    """Add worker and recover to the ``python -m core`` parser."""
    worker = subparsers.add_parser(
        "worker", help="execute the runs submitted to the run queue until stopped")
    worker.add_argument("--name", help="a stable name for this worker (default: the host "
                                       "name), held by one live worker at a time; "
                                       "restarted under it, it finishes its unfinished "
                                       "runs")
    worker.add_argument("--concurrency", type=bounded_int(1, 256), default=DEFAULT_CONCURRENCY,
                        help="plan steps working at once (runs waiting for a person hold none)")
    worker.set_defaults(handler=cmd_worker)

    recover = subparsers.add_parser(
        "recover", help="hand the unfinished runs of a worker that is gone to the live ones, "
                        "or start the run engine's record afresh")
    which = recover.add_mutually_exclusive_group(required=True)
    which.add_argument("--worker", metavar="NAME",
                       help="the name of the worker that is gone for good")
    which.add_argument("--afresh", action="store_true",
                       help="the run engine's record (dbos.sqlite) is lost or damaged: make a "
                            "new one (a damaged file is kept beside it); unfinished runs "
                            "become interrupted, and resume continues them")
    recover.add_argument("--yes", action="store_true",
                         help="do not ask: you are sure that worker runs nowhere any more, or "
                              "that the record cannot be restored")
    recover.set_defaults(handler=cmd_recover)


def cmd_worker(args: argparse.Namespace) -> int:
    """Serve the run queue until SIGTERM or SIGINT, then stop at once.

    Stopping is a crash as far as the runs know, on purpose: DBOS has recorded every
    finished step, and a worker of this name starting again continues its runs from there.
    Destroying DBOS instead would leave the runs' threads going without an engine (their
    next step fails), and a run waiting for a person would hold the exit for a minute.
    """
    import core.runs.durable as durable

    name = durable.worker_executor_id(args.name)  # a bad name fails before anything starts
    today()  # so does a bad PLANBOARD_TODAY, which every run it took would fail on
    from dbos import error as dbos_errors

    from core.runs.durable_launcher import set_step_permits
    from core.runs.worker_name_lock import hold_worker_name
    from core.runs.workflow import warm_up  # registers the run workflow before the launch

    set_step_permits(args.concurrency)
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stop.set())
    try:
        # before the launch, which takes over every unfinished run of this name
        hold_worker_name(name, durable.system_database_url())
        warm_up()  # the first run it takes does not wait for the tools and the SDK
        launched = durable.launch(name)
    except (SQLAlchemyError, sqlite3.Error, dbos_errors.DBOSException) as exc:
        raise ConfigError(msg("run.worker_cannot_start", name=name,
                              error=durable.failure_cause(exc))) from None
    print(say("worker_ready", name=launched.executor_id, database=launched.database,
              concurrency=args.concurrency), flush=True)
    if tracing.enabled():
        print(say("worker_traces", endpoint=safe_url(tracing.endpoint())), flush=True)
    stop.wait()
    print(say("worker_stopped", name=name), flush=True)
    tracing.shutdown()  # os._exit runs no exit handler: the last spans leave now
    sys.stderr.flush()
    os._exit(0)


def cmd_recover(args: argparse.Namespace) -> int:
    """Put the unfinished runs of worker NAME back on the queue, once the operator says the
    worker is gone for good (DBOS cannot tell a dead worker from a slow one)."""
    import core.runs.dispatch as dispatch
    import core.runs.durable as durable

    if args.afresh:
        return _start_afresh(args)
    name = durable.worker_executor_id(args.worker)
    run_ids = dispatch.unfinished_runs(name)
    if not run_ids:
        print(say("recover_none", name=name))
        return 0
    store = args.runner().store
    for run_id in run_ids:
        try:
            record = store.get_run(run_id)
            print(f"{run_id}  {record.status:<21} {short(record.request)}")
        except RunNotFoundError:
            print(run_id)
    if not args.yes and not ask(say("recover_ask", name=name, count=len(run_ids))):
        print(say("not_recovered"))
        return 1
    for run_id in run_ids:
        dispatch.start_on_queue(run_id, run_id, fresh=False)
    print(say("recovered", name=name, count=len(run_ids)))
    return 0


def _start_afresh(args: argparse.Namespace) -> int:
    """``recover --afresh``: a new engine record in place of a lost or damaged one; then
    the runs its loss left unfinished are recorded interrupted (resume continues them)."""
    import core.runs.durable as durable
    from core.errors import RecordLostError

    try:
        durable.check_record(durable.system_database_url())
    except RecordLostError as exc:
        print(say("warning", text=render(exc, cli_language())), file=sys.stderr)
    else:
        print(say("record_fine", path=durable.record_path()))
        return 0
    if not args.yes and not ask(say("afresh_ask", path=durable.record_path())):
        print(say("not_recovered"))
        return 1
    from core.runs.recovery import recover_interrupted
    from core.store.run_store import RunStore

    kept = durable.start_afresh()
    store = RunStore()
    try:
        interrupted = recover_interrupted(store)
    finally:
        store.close()
    if kept is not None:
        print(say("afresh_kept", kept=kept))
    print(say("afresh_done", path=durable.record_path(), count=len(interrupted)))
    return 0


def submit_request(request: str, options: Any, *, offline: bool, as_json: bool,
                   out: Any) -> int:
    """``run REQUEST --yes --detach``: record the request and put it on the runs queue; the
    worker that takes it drafts the plan and runs it (core.runs.dispatch.submit_request).
    Nothing here loads a tool, starts an MCP server or asks a model."""
    import core.runs.dispatch as dispatch
    from core.llm.settings import LLMSettings
    from core.runs.session import public_settings, require_request
    from core.store.run_store import RunStore

    require_request(request)
    if not offline and not LLMSettings.from_env().configured:
        raise ConfigError(msg("config.no_llm"))  # the run would need a model to plan
    store = RunStore()
    try:
        # approving a plan nobody has seen yet is approving whatever side effects it has
        access = access_for(None, store)
        access.require("approve")
        run_id = dispatch.submit_request(store, request, options=options,
                                         settings_public=public_settings(offline=offline),
                                         extra={"owner": access.actor.record()})
        record_act(store, access.actor, "approve", run_id=run_id, version=1,
                   detail={"drafted_by_worker": True})
    finally:
        store.close()
    if as_json:
        print_json({"run_id": run_id, "status": "planned"})
    print(say("detached_request", run_id=run_id), file=out)
    return 0


def run_on_workers(runner: Any, plan: Any, *, engine: Any, options: Any,
                   settings: dict[str, Any], usage: Any, detach: bool, as_json: bool, out: Any,
                   started: float, route: Any) -> int:
    """Submit an approved plan to the workers (the runner checks the OS user may approve
    it, and records who did); with ``detach`` print its id and how to follow it, else
    follow it here until it ends (answering its questions, as ``run`` does). Ctrl-C stops
    following; the run goes on."""
    run_id = runner.start(plan.goal, plan, engine=engine, options=options,
                          settings_public=settings, planning_usage=usage, queued=True)
    return follow_submitted(runner, run_id, detach=detach, as_json=as_json, out=out,
                            started=started, route=route)


def follow_submitted(runner: Any, run_id: str, *, detach: bool, as_json: bool, out: Any,
                     started: float, route: Any) -> int:
    """For a run just put on the workers' queue: with ``detach`` print its id and how to
    follow it, else follow it here until it ends (answering its questions). Ctrl-C stops
    following; the run goes on."""
    if detach:
        if as_json:
            print_json({"run_id": run_id, "status": runner.store.get_run(run_id).status})
        print(say("detached", run_id=run_id), file=out)
        return 0
    print(f"run {run_id}", file=out)
    try:
        with printing_events(runner.store, run_id, out):
            record = wait_answering(runner, run_id, out)
    except KeyboardInterrupt:
        print(say("still_running", run_id=run_id), file=sys.stderr)
        return 130
    return report_run(record, as_json, started, out, route)


def following_continued_run(store: Any, run_id: str, out: Any
                            ) -> tuple[AbstractContextManager[Any], Callable[[Any], None] | None]:
    """How the command line prints a run it continues (a follow-up, a re-run): the block
    to run it in and the ``on_event`` to pass. A worker executes it under
    ``PLANBOARD_EXECUTION=workers``, so its new events are read from the store after those
    already recorded; otherwise this process executes it and prints each event."""
    from core.runs.dispatch import execution_mode

    if execution_mode() == "workers":
        seen = max((event.seq for event in store.events(run_id)), default=0)
        return printing_events(store, run_id, out, after=seen), None
    return nullcontext(), lambda event: print_progress(event, out)


@contextmanager
def printing_events(store: Any, run_id: str, out: Any, *, after: int = 0) -> Iterator[None]:
    """Print the run's progress from the store while the block runs (a worker executes
    it, so no event reaches this process otherwise), from the event after number ``after``."""
    stop = threading.Event()

    def follow() -> None:
        seen = after
        while True:
            done = stop.wait(_FOLLOW_POLL_S)
            try:
                for event in store.events(run_id, after=seen):
                    print_progress(event, out)
                    seen = event.seq
            except StoreError:
                pass  # read again next time; the command reads the store too and says why
            if done:
                return

    follower = threading.Thread(target=follow, name="planboard-follow", daemon=True)
    follower.start()
    try:
        yield
    finally:
        stop.set()
        follower.join(5)
