"""A run executed as a DBOS workflow (``planboard.run``, id = the run id).

After a crash DBOS runs the workflow again from the top, replaying the recorded output of
every step it finished, so the workflow's own code must decide the same way again. What
varies therefore comes from recorded steps:

- ``load`` reads the run from the store once;
- each plan step is a DBOS step ``step:{id}:v{version}``, reserved in launch order and run
  on a thread of the run, holding one of this process's step permits while it works;
- each wait for finished steps is a recorded step ``wait`` (the launch numbers that ended);
- the coordinator's own model calls (success checks, checkpoints, replans) and the
  reflection after the run are recorded steps;
- a person's controls arrive as messages (``DBOS.recv``), read every half second while
  steps run and waited for, holding no step permit, while none does.

Events written by the workflow carry a replay key (workflow id and event number), so a
replay writes no event twice. Tools with side effects keep their idempotency keys: a
step interrupted inside its tool runs again.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dbos import DBOS

from core.errors import PlanBoardError
from core.execution.control import ControlWake, RunControl
from core.execution.events import RunEvent
from core.execution.executor import StepOutcome
from core.execution.launcher import Finished, StepHandle, StepWork, paced_work
from core.execution.scheduler import RunOptions, RunOutcome, run_plan
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs import durable
from core.runs.durable import CONTROL_TOPIC
from core.runs.live_run import LiveRun
from core.store.run_store import RunRecord, RunStore

__all__ = ["RUN_WORKFLOW", "DurableLauncher", "DurableRun", "run_workflow", "set_step_permits"]

logger = logging.getLogger(__name__)

RUN_WORKFLOW = "planboard.run"
MAIL_EVERY_S = 0.5  # while steps run, the mailbox is read at most this often
IDLE_WAIT_S = 60.0  # while none runs, one wait in the mailbox (then the loop looks again)
T = TypeVar("T")
_ENGINE_ENVIRONMENT = ("OPENAI_", "PLANBOARD_", "DASHSCOPE_", "DEEPSEEK_")  # what engines read

_permits = threading.BoundedSemaphore(16)


def set_step_permits(count: int) -> None:
    """Let at most ``count`` plan steps of this process's runs work at once (a worker's
    ``--concurrency``); runs waiting for a person or paused hold none."""
    global _permits
    _permits = threading.BoundedSemaphore(count)


class DurableLauncher:
    """Runs a workflow's plan steps as DBOS steps and records what finished, and when.

    ``on_mail(action)`` applies a control message read from the run's mailbox.
    """

    def __init__(self, work: StepWork, max_parallel: int,
                 on_mail: Callable[[str], None]) -> None:
        self._work = work
        self._on_mail = on_mail
        self._pool = ThreadPoolExecutor(max_workers=max_parallel,
                                        thread_name_prefix="planboard-durable-step")
        self._running: dict[int, tuple[Future[StepOutcome], StepHandle]] = {}
        self._launched = 0
        self._mail_read_at = 0.0

    def start(self, plan: Plan, step: Step, key: str) -> StepHandle:
        handle = StepHandle(seq=self._launched, step_id=step.id, key=key)
        self._launched += 1
        reservation = DBOS.reserve_step()  # in launch order, so a replay matches it
        context = contextvars.copy_context()  # the workflow's context, for the thread
        future = self._pool.submit(context.run, reservation.run,
                                   {"name": f"step:{step.id}:v{plan.version}"},
                                   self._permitted, plan, step, key)
        self._running[handle.seq] = (future, handle)
        return handle

    def _permitted(self, plan: Plan, step: Step, key: str) -> StepOutcome:
        with _permits:
            return self._work(plan, step, key)

    def next_done(self, timeout: float, wake: ControlWake) -> list[Finished]:
        if not self._running:  # waiting for a person or a decision: only mail can help
            self.read_mail(IDLE_WAIT_S)
            return []
        ended, read_mail = DBOS.run_step({"name": "wait"}, self._wait, timeout)
        finished = []
        for seq in ended:
            future, handle = self._running.pop(seq)
            finished.append(Finished(handle, _outcome(handle, future)))
        if read_mail:
            self.read_mail(0)
        return finished

    def _wait(self, timeout: float) -> tuple[list[int], bool]:
        """The recorded wait: launch numbers that ended (in launch order), and whether the
        mailbox is due to be read."""
        wait([future for future, _ in self._running.values()], timeout=timeout,
             return_when=FIRST_COMPLETED)
        ended = [seq for seq, (future, _) in self._running.items() if future.done()]
        now = time.monotonic()
        due = now - self._mail_read_at >= MAIL_EVERY_S
        if due:
            self._mail_read_at = now
        return ended, due

    def read_mail(self, timeout_s: float) -> None:
        """Apply the messages waiting in the run's mailbox, waiting up to ``timeout_s`` for
        the first."""
        action = DBOS.recv(CONTROL_TOPIC, timeout_seconds=timeout_s)
        while action is not None:
            self._on_mail(str(action))
            action = DBOS.recv(CONTROL_TOPIC, timeout_seconds=0)

    def record(self, name: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return DBOS.run_step({"name": name}, call, *args, **kwargs)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> DurableLauncher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _outcome(handle: StepHandle, future: Future[StepOutcome]) -> StepOutcome:
    try:
        return future.result()
    except Exception as exc:  # execute_step never raises; this guards the guarantee
        logger.exception("step %s raised out of the executor", handle.step_id)
        return StepOutcome(status="failed", error=f"{type(exc).__name__}: {exc}")


@dataclass
class DurableRun(LiveRun):
    """A LiveRun whose decisions are recorded by DBOS and whose control is its mailbox."""

    approved: Plan | None = None
    worker: str = ""
    _events: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.control = RunControl()  # fed by the mailbox only
        self.control.set_approved(self.approved or self.plan)
        self._recording = threading.RLock()

    def run(self) -> None:
        """Run to the end (a pause waits in the mailbox) and record how it stopped."""
        try:
            self._finish(self._learn_and_retry(self._run_until_settled()))
        except Exception as exc:
            if not durable.is_launched():
                raise  # the engine stopped under the run (a worker shutting down): not its failure
            logger.exception("run %s stopped with an error", self.run_id)
            self._fail(exc)

    def _run_until_settled(self) -> RunOutcome:
        work = paced_work(self.engine, self.control, self.options.step_delay_s)
        with DurableLauncher(work, self.options.max_parallel, self._on_mail) as launcher:
            while True:
                outcome = run_plan(self.plan, self.engine, options=self.options,
                                   control=self.control, on_event=self.record,
                                   replanner=self.replanner, launcher=launcher)
                self.plan = outcome.plan
                if outcome.status != "paused":
                    return outcome
                while self.control.is_paused() and not self.control.is_cancelled():
                    launcher.read_mail(IDLE_WAIT_S)
                if not self.control.is_cancelled():
                    self.record(RunEvent(kind="resumed", plan_version=self.plan.version,
                                         data={"requested_by": "mailbox"}))

    def _on_mail(self, action: str) -> None:
        logger.info("run %s: control %s", self.run_id, action)
        self.control.apply(action)

    def _learn(self, learn: Callable[..., Any], request: str, outcome: RunOutcome,
               attempt: int) -> Any:
        return DBOS.run_step({"name": f"learn:{attempt}"}, super()._learn, learn, request,
                             outcome, attempt)

    def _store_event(self, event: RunEvent, reason: str | None, previous: Plan | None) -> None:
        self._events += 1
        key = f"{DBOS.workflow_id}:{self._events}"
        if event.kind.startswith("step_") and self.worker:
            event.data.setdefault("worker", self.worker)
        self.store.record_step(self.run_id, event, self.plan, reason=reason,
                               previous=previous, replay_key=key)

    def record(self, event: RunEvent) -> None:
        """As LiveRun.record, but an event a replay already wrote is skipped entirely."""
        key = f"{DBOS.workflow_id}:{self._events + 1}"
        if not self.store.event_recorded(self.run_id, key):
            super().record(event)
            return
        self._events += 1  # replayed: follow it in memory only
        if event.plan is not None:
            self.plan = event.plan
        if event.kind == "confirmed" and event.step_id is None:  # a version approved
            self.options_extra["approved_version"] = event.data.get("version")
        self._follow_status(event.kind)


# ---- the workflow ---------------------------------------------------------------------------

_stores: dict[tuple[str, str], RunStore] = {}
_stores_lock = threading.Lock()


def _store() -> RunStore:
    """One store per database for this process's workflows (tests switch homes)."""
    where = (os.environ.get("PLANBOARD_HOME", ""), os.environ.get("PLANBOARD_DB_URL", ""))
    with _stores_lock:
        if where not in _stores:
            _stores[where] = RunStore()
        return _stores[where]


def _load(run_id: str) -> dict[str, Any]:
    """The recorded start of a run: its plan, options and approved version; the run is
    marked as running here."""
    store = _store()
    record = store.get_run(run_id)
    if record.plan is None:
        raise ValueError(f"run {run_id} has no plan to execute")
    wanted = record.options.get("approved_version")
    stored = store.plan_versions(run_id)
    found = [v.plan for v in stored if v.version == wanted] or [v.plan for v in stored[:1]]
    approved = record.plan if wanted == record.plan.version else (found or [None])[-1]
    if record.status == "planned":
        store.set_status(run_id, "running")
    return {"plan": record.plan.model_dump(mode="json"), "options": dict(record.options),
            "approved": approved.model_dump(mode="json") if approved else None}


_engines: dict[str, Engine] = {}
_engines_lock = threading.Lock()


def _engine_for(record: RunRecord) -> Engine:
    """The engine for the run's stored settings, shared by this process's runs with the
    same settings and environment (a new model client costs ~0.1 s per run)."""
    from core.runs.recovery import engine_for_record

    environment = {k: v for k, v in os.environ.items() if k.startswith(_ENGINE_ENVIRONMENT)}
    key = json.dumps([record.settings, environment], sort_keys=True, default=str)
    with _engines_lock:
        if key not in _engines:
            _engines[key] = engine_for_record(record)
        return _engines[key]


def _unrunnable(run_id: str, error: str) -> None:
    """Record that this process cannot execute the run at all, and why."""
    store = _store()
    plan_version = store.get_run(run_id).plan.version
    store.set_status(run_id, "failed", event=RunEvent(
        kind="run_finished", plan_version=plan_version,
        data={"status": "failed", "error": error}))


@DBOS.workflow(name=RUN_WORKFLOW)
def run_workflow(run_id: str) -> str:
    """Execute run ``run_id`` of the store to its end; return its final status."""
    loaded = DBOS.run_step({"name": "load"}, _load, run_id)
    store = _store()
    try:
        # the run's settings never change after it is created: reading them again is safe
        engine = _engine_for(store.get_run(run_id))
    except PlanBoardError as exc:  # e.g. this worker has no key for the run's endpoint
        DBOS.run_step({"name": "unrunnable"}, _unrunnable, run_id, str(exc))
        return "failed"
    options = RunOptions.model_validate(
        {k: v for k, v in loaded["options"].items() if k in RunOptions.model_fields}
        | {"run_id": run_id})
    approved = loaded["approved"]
    run = DurableRun(store=store, run_id=run_id, engine=engine, options=options,
                     plan=Plan.model_validate(loaded["plan"]),
                     options_extra=dict(loaded["options"]),
                     approved=Plan.model_validate(approved) if approved else None,
                     worker=DBOS.executor_id, status="running")
    run.run()
    return run.status
