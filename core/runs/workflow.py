"""A run executed as a DBOS workflow (``planboard.run``, id = the run id).

After a crash DBOS runs the workflow again from the top, replaying the recorded output of
every step it finished, so the workflow's own code must decide the same way again. What
varies therefore comes from recorded steps:

- ``load`` reads the run from the store once;
- plan steps, waits for them, the coordinator's model calls and the person's messages go
  through :class:`core.runs.durable_launcher.DurableLauncher`;
- the reflection after the run is a recorded step;
- a knowledge or direct answer, which has no plan (:class:`DurableAnswer`), records each
  of its model calls and tool calls, and reads its mailbox after each of them.

Events written by the workflow carry a replay key (the id of the workflow that first ran
it, recorded by ``load``, and the event's number), so a replay or a fork writes no event
twice, and a replayed event moves the run's status in memory only. Tools with side effects
keep their idempotency keys: a step interrupted inside its tool runs again, unless its tool
is a side effect that is not idempotent: its call was noted in the workflow's events
(:mod:`core.runs.call_ledger`), and a person decides whether it runs again. Past ``load``,
whatever goes wrong ends the run failed with the reason; DBOS's own failures
(:class:`core.runs.durable_launcher.EngineFault`) are never taken for the run's.

The process that started the run may have lent it an engine, a listener and a replanner
(:mod:`core.runs.attachments`); elsewhere the engine comes from the run's stored settings.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dbos import DBOS

import core.runs.durable as durable
from core.base import tracing
from core.base.messages import msg, render
from core.base.usage import Usage
from core.errors import PlanBoardError
from core.execution.events import RunEvent
from core.execution.executor import StepOutcome, apply_outcome, predict_llm_calls
from core.execution.launcher import paced_work
from core.execution.scheduler import RunOptions, RunOutcome, run_plan
from core.lifecycle import TERMINAL_STATUSES
from core.llm.client import ChatModel, ChatReply
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.answers import Answer, AnswerTools, answer_request, answers_without_plan
from core.runs.attachments import Attached, RunSuspended, attached, detach
from core.runs.call_ledger import WorkflowCallLedger
from core.runs.durable_launcher import (
    IDLE_WAIT_S,
    DurableLauncher,
    EngineFault,
    read_mailbox,
    recorded,
    recorded_call,
    with_permit,
)
from core.runs.live_run import DRAFTED_BY_WORKER, TRACE_CONTEXT, LiveRun
from core.store.run_store import RunRecord, RunStore

__all__ = ["RUN_WORKFLOW", "SUSPEND", "DurableAnswer", "DurableRun", "run_workflow", "warm_up"]

logger = logging.getLogger(__name__)
_ENGINE_ENVIRONMENT = ("OPENAI_", "PLANBOARD_", "DASHSCOPE_", "DEEPSEEK_")  # what engines read

RUN_WORKFLOW = durable.RUN_WORKFLOW
SUSPEND = "suspend"  # the mail that stops a run where it waits (its process is closing)



@dataclass
class DurableRun(LiveRun):
    """A LiveRun whose decisions are recorded by DBOS and whose control is its mailbox."""

    approved: Plan | None = None
    worker: str = ""
    events_key: str = ""  # the workflow that first wrote the events (a fork replays them)
    queued: bool = True  # it waited on the runs queue (else started where it was asked)
    suspended: threading.Event | None = None  # set by this process when it closes
    mail: threading.Event | None = None  # set when this process sent the run a control
    _events: int = field(default=0, init=False)
    _key: str = field(default="", init=False)  # the replay key of the event being written
    _replaying: bool = field(default=True, init=False)

    def __post_init__(self) -> None:
        self.control.set_approved(self.approved or self.plan)  # fed by the mailbox only

    def run(self) -> None:
        """Run to the end (a pause waits in the mailbox) and record how it stopped."""
        try:
            self._finish(self._learn_and_retry(self._run_until_settled()))
        except Exception as exc:
            if not durable.is_launched():
                raise  # the engine stopped under the run (a worker shutting down): not its failure
            if not durable.record_intact():  # DBOS failed under it: resume it afresh
                with self._recording:
                    self.finished = True
                _lost_record(self.run_id)
                return
            logger.exception("run %s stopped with an error", self.run_id)
            self._fail(exc)

    def _finish(self, outcome: RunOutcome) -> None:
        """As LiveRun's, with a warning kept in the run's options when the engine's record
        was lost while it ran: it no longer holds what the run did."""
        if not durable.record_intact():
            lost = msg("run.record_lost_while_running", path=durable.record_path())
            self.options_extra["warnings"] = [str(lost)]
            self.store.set_options(self.run_id, self.options_extra)
        super()._finish(outcome)

    def _run_until_settled(self) -> RunOutcome:
        engine = self.budgeted_engine()
        work = paced_work(engine, self.control, self.options.step_delay_s,
                          ledger=WorkflowCallLedger(), read_ahead=self.options.read_ahead)
        with DurableLauncher(work, self.options.max_parallel, self._on_mail,
                             self.mail) as launcher:
            replanner = self.replanner_for_run()
            waited = self.queued  # a pause or cancel may have come while it was queued
            while True:
                if waited:
                    launcher.read_mail(0)
                waited = True
                outcome = run_plan(self.plan, engine, options=self.options,
                                   control=self.control, on_event=self.record,
                                   replanner=replanner, launcher=launcher)
                self.plan = outcome.plan
                if outcome.status != "paused":
                    return outcome
                while self.control.is_paused() and not self.control.is_cancelled():
                    launcher.read_mail(IDLE_WAIT_S)
                if not self.control.is_cancelled():
                    self.record(RunEvent(kind="resumed", plan_version=self.plan.version,
                                         data={"requested_by": "mailbox"}))

    def _on_mail(self, action: str) -> None:
        if action == SUSPEND:
            if self.suspended is not None and self.suspended.is_set():
                raise RunSuspended(self.run_id)
            return  # a replay of another process's suspension: this one goes on
        logger.info("run %s: control %s", self.run_id, action)
        self.control.apply(action)

    def _learn(self, learn: Callable[..., Any], request: str, outcome: RunOutcome,
               attempt: int) -> Any:
        return recorded(f"learn:{attempt}", super()._learn, learn, request, outcome, attempt)

    def _store_event(self, event: RunEvent, reason: str | None, previous: Plan | None,
                     only_step: str | None = None) -> None:
        if event.kind.startswith("step_") and self.worker:
            event.data.setdefault("worker", self.worker)
        self.store.record_step(self.run_id, event, self.plan, reason=reason,
                               previous=previous, replay_key=self._key, only_step=only_step)

    def record(self, event: RunEvent) -> None:
        """As LiveRun.record, but an event a replay already wrote is followed in memory
        only (the store already holds it and the status it led to)."""
        self._events += 1  # first, so that a failed write cannot shift later keys
        self._key = f"{self.events_key}:{self._events}"
        # a replay writes its recorded events first: once one is new, all later ones are
        if not self._replaying or not self.store.event_recorded(self.run_id, self._key):
            if self._replaying and self._events > 1:
                self._keep_recorded_times()
            self._replaying = False
            super().record(event)
            return
        if event.plan is not None:
            self.plan = event.plan
        if event.kind == "confirmed" and event.step_id is None:  # a version approved
            self.options_extra["approved_version"] = event.data.get("version")
        self._follow_status(event.kind, write=False)

    def _keep_recorded_times(self) -> None:
        """Give the steps a replay went through again the times the store recorded
        (a replay's ``advance`` stamps the time of the replay); only data, no decision,
        depends on them."""
        stored = {v.version: v.plan for v in self.store.plan_versions(self.run_id)}
        recorded = stored.get(self.plan.version)
        if recorded is None:
            return
        kept = {step.id: step for step in recorded.steps}
        for step in self.plan.steps:
            before = kept.get(step.id)
            if before is not None and before.status == step.status and before.started_at:
                step.started_at, step.finished_at = before.started_at, before.finished_at


class _AnswerCancelled(BaseException):
    """A person cancelled the answer (read from its mailbox between two recorded calls); a
    BaseException, so that no handler inside the answer takes it for a failed call."""


@dataclass
class DurableAnswer(DurableRun):
    """A knowledge or direct answer (:mod:`core.runs.answers`), executed by the run
    workflow like any run, and recorded in the store like one.

    Its model calls and tool calls are recorded steps (``model:<n>`` and
    ``tool:<step id>:<tool>``): a replay after a crash gets what they returned, so no
    recorded call is made again, and only the call in flight is (its tool is read-only:
    the answer's tools refuse any other). Each tool call is a step of the run's plan; the
    answer is its last step, which fails when the text is not an answer. The mailbox is
    read after each recorded call: a pause waits there, a cancel ends the answer, and a
    closing process stops it there (``resume`` continues it). Nothing is reflected on
    afterwards: a retry would be a plan.
    """

    _spent: Usage = field(default_factory=Usage, init=False)  # the model calls' usage
    _model_calls: int = field(default=0, init=False)

    def _run_until_settled(self) -> RunOutcome:
        request, mode = self.plan.goal, self.options_extra["mode"]
        # its calls make its steps (a new workflow of an unfinished answer starts over)
        self.plan = Plan(id=self.plan.id, goal=request, version=self.plan.version,
                         language=self.plan.language)
        tools = AnswerTools(self.engine.registry, plan=self.plan, perform=self._call_tool,
                            on_step=self._record_call)
        model = None if self.engine.model is None else _RecordedModel(self.engine.model,
                                                                       self._chat)
        try:
            if self.queued:  # a control may have come while it waited on the queue
                self._between_calls()
            self.record(RunEvent(kind="run_started", data={
                "mode": mode, "reason": self.options_extra.get("route_reason", "")}))
            answer = answer_request(request, mode, Engine(registry=tools, model=model),
                                    language=self.plan.language)
        except _AnswerCancelled:
            return self._cancelled()
        return self._answered(answer)

    def _learn_and_retry(self, outcome: RunOutcome) -> RunOutcome:
        return outcome

    def _call_tool(self, step: Step) -> Any:
        """One tool call of the answer, as the recorded step ``tool:<step id>:<tool>``."""
        return recorded_call(f"tool:{step.id}:{step.tool}", with_permit,
                             self.engine.registry.call, step.tool or "", step.args or {})

    def _chat(self, model: ChatModel, messages: list[dict[str, Any]],
              options: dict[str, Any]) -> ChatReply:
        """One model call of the answer, as the recorded step ``model:<n>``."""
        self._model_calls += 1
        reply = recorded_call(f"model:{self._model_calls}", with_permit, model.chat, messages,
                              **options)
        self._spent = self._spent + reply.usage
        self._between_calls()
        return reply

    def _record_call(self, kind: str, step: Step) -> None:
        data: dict[str, Any] = {"tool": step.tool, "description": step.description}
        if kind != "step_started":
            data = {"result": step.result, "error": step.error,
                    "resolved_args": step.resolved_args, "mode": "direct"}
        self.record(RunEvent(kind=kind, step_id=step.id, plan_version=self.plan.version,
                             data=data))
        if kind != "step_started":
            self._between_calls()

    def _between_calls(self) -> None:
        """Read the mailbox: wait while paused; _AnswerCancelled once cancelled."""
        read_mailbox(self._on_mail, 0)
        if self.control.is_paused() and not self.control.is_cancelled():
            self.record(RunEvent(kind="paused", plan_version=self.plan.version))
            while self.control.is_paused() and not self.control.is_cancelled():
                read_mailbox(self._on_mail, IDLE_WAIT_S)
            if not self.control.is_cancelled():
                self.record(RunEvent(kind="resumed", plan_version=self.plan.version,
                                     data={"requested_by": "mailbox"}))
        if self.control.is_cancelled():
            raise _AnswerCancelled

    def _answered(self, answer: Answer) -> RunOutcome:
        """The answer as the plan's last step, then the end of the run."""
        step = Step(id=self.plan.next_step_id(),
                    description=render(msg("answer.answer_step"), self.plan.language),
                    depends_on=[s.id for s in self.plan.steps])
        self.plan.steps.append(step)
        step.advance("running")
        self.record(RunEvent(kind="step_started", step_id=step.id,
                             plan_version=self.plan.version,
                             data={"tool": None, "description": step.description}))
        failed = answer.unanswered is not None
        apply_outcome(step, StepOutcome(status="failed" if failed else "completed",
                                        result=answer.text or None, error=answer.unanswered,
                                        error_message=answer.unanswered_message,
                                        usage=self._spent, mode="synthesis"))
        self.record(RunEvent(kind=f"step_{step.status}", step_id=step.id,  # type: ignore[arg-type]
                             plan_version=self.plan.version,
                             data={"result": step.result, "error": step.error,
                                   "mode": "synthesis", "usage": self._spent.model_dump()}))
        status = "failed" if failed else "completed"
        self.record(RunEvent(kind="run_finished", plan_version=self.plan.version,
                             data={"status": status, "answer": step.result}))
        return RunOutcome(status=status, plan=self.plan, versions=[], answer=step.result,
                          usage=self._spent)

    def _cancelled(self) -> RunOutcome:
        self.record(RunEvent(kind="cancelled", plan_version=self.plan.version,
                             data={"reason": "cancelled by a person", "skipped": []}))
        self.record(RunEvent(kind="run_finished", plan_version=self.plan.version,
                             data={"status": "cancelled", "answer": None}))
        return RunOutcome(status="cancelled", plan=self.plan, versions=[], usage=self._spent)


class _RecordedModel:
    """A chat model whose calls go through ``chat(model, messages, options)`` (the
    answer's recorded steps); everything else is the model's own (its provider profile)."""

    def __init__(self, model: ChatModel,
                 chat: Callable[[ChatModel, list[dict[str, Any]], dict[str, Any]], ChatReply]
                 ) -> None:
        self._model = model
        self._chat = chat

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def chat(self, messages: list[dict[str, Any]], **options: Any) -> ChatReply:
        return self._chat(self._model, messages, options)


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
    marked as running here. ``{"superseded": status}`` when the run is no longer this
    workflow's to execute (it ended, or another workflow claimed it meanwhile)."""
    store = _store()
    record = store.get_run(run_id)
    if record.status in TERMINAL_STATUSES or record.workflow_id not in (None, DBOS.workflow_id):
        # cancelled, or claimed by another workflow, between its claim and this start
        return {"superseded": record.status}
    if record.plan is None and not record.options.get(DRAFTED_BY_WORKER):
        raise ValueError(f"run {run_id} has no plan to execute")
    if record.status == "planned":
        store.set_status(run_id, "running")
    if record.plan is None:  # a request: the workflow drafts its plan (_draft)
        return {"options": dict(record.options), "events_key": DBOS.workflow_id}
    wanted = record.options.get("approved_version")
    stored = store.plan_versions(run_id)
    found = [v.plan for v in stored if v.version == wanted] or [v.plan for v in stored[:1]]
    approved = record.plan if wanted == record.plan.version else (found or [None])[-1]
    return {"plan": record.plan.model_dump(mode="json"), "options": dict(record.options),
            "events_key": DBOS.workflow_id,
            "approved": approved.model_dump(mode="json") if approved else None}


def _draft(run_id: str) -> dict[str, Any]:
    """The start of a run submitted as a request (``run --yes --detach``): its plan drafted
    here, with this process's tools and model, as the command line drafts one
    (:func:`core.runs.session.approved_draft`), stored as version 1 and approved as drafted
    (the person said yes beforehand), with what drafting cost and what running it is
    expected to cost (as ``Runner.start`` records them); then :func:`_load`'s record.
    A plan an interrupted attempt of this step stored is kept, not drafted again."""
    from core.runs.session import approved_draft

    store = _store()
    record = store.get_run(run_id)
    if record.plan is None:
        engine = _engine_for(record)
        plan, usage = approved_draft(record.request, engine, store)
        expected = Usage(llm_calls=predict_llm_calls(plan, engine.registry,
                                                     offline=engine.offline))
        store.set_options(run_id, dict(record.options) | {
            "approved_version": plan.version, "planning_usage": usage.model_dump(),
            "estimate": expected.model_dump()})  # the timeline's cost meter reads it
        store.save_plan_version(run_id, plan, reason="initial plan", source="draft")
    return _load(run_id)


def warm_up() -> None:
    """Load what runs need before the first one arrives (a worker, before it serves the
    queue): the tools, their MCP servers (kept by the process's pool), the model SDK and
    the planner. Else the first run a worker takes waits for them, about half a second
    without MCP servers and seconds with them."""
    import openai  # noqa: F401  imported by the first model call otherwise

    import core.planning.planner  # noqa: F401  replans and the drafts of requests
    from core.tools.toolsets import default_registry

    default_registry()


_engines: dict[str, tuple[str, Engine]] = {}  # settings -> (tools' stamp, engine)
_engines_lock = threading.Lock()


def _engine_for(record: RunRecord) -> Engine:
    """The engine for the run's stored settings, shared by this process's runs with the
    same settings, environment and tools (a new model client costs ~0.1 s per run); a
    change of the tools' sources (an MCP server that died, came back or changed its
    tools) makes a new one for the runs that start after it."""
    from core.runs.recovery import engine_for_record
    from core.tools.sources import sources_stamp

    environment = {k: v for k, v in os.environ.items() if k.startswith(_ENGINE_ENVIRONMENT)}
    key = json.dumps([record.settings, environment], sort_keys=True, default=str)
    stamp = sources_stamp()
    with _engines_lock:
        kept = _engines.get(key)
        if kept is None or kept[0] != stamp:  # the older engine's tools are out of date
            _engines[key] = (stamp, engine_for_record(record))
        return _engines[key][1]


def _lost_record(run_id: str) -> None:
    """The run cannot go on here: the engine's record was lost under it. It is recorded
    interrupted, saying so (no traceback, no SQL): once the record is made afresh,
    ``resume`` continues it from the steps the run store kept."""
    from core.runs.recovery import recover_run

    lost = msg("run.record_lost_while_running", path=durable.record_path())
    record = _store().get_run(run_id)
    if record.status not in TERMINAL_STATUSES and recover_run(_store(), record, str(lost)):
        logger.warning("run %s interrupted: %s", run_id, lost)


def _unrunnable(run_id: str, error: str) -> None:
    """Record that the run cannot go on in this workflow, and why (not a recorded step: a
    replay that diverged could not record it, and writing it twice changes nothing)."""
    store = _store()
    record = store.get_run(run_id)
    if record.status in TERMINAL_STATUSES:
        return
    store.set_status(run_id, "failed", event=RunEvent(
        kind="run_finished", plan_version=record.plan.version if record.plan else 1,
        data={"status": "failed", "error": error}))


@DBOS.workflow(name=RUN_WORKFLOW)
def run_workflow(run_id: str, queued: bool = True) -> str:
    """Execute run ``run_id`` of the store to its end; return its final status. Past the
    load, whatever goes wrong ends the run failed, saying why, never left "running".
    ``queued=False``: started directly by the process that asked, so no control can
    have waited for it (its mailbox is first read with the first step's wait)."""
    workflow_id = DBOS.workflow_id or run_id
    loan = attached(workflow_id) or Attached()
    try:
        loaded = DBOS.run_step({"name": "load"}, _load, run_id)
        if "superseded" in loaded:
            return str(loaded["superseded"])  # the run is another workflow's: leave it
        # one span per execution of the run (a resume, a follow-up, a worker taking over add
        # another), a child of the span that submitted it: one trace, whoever executes it
        with tracing.span("run", {
                "planboard.run.id": run_id, "planboard.workflow.id": workflow_id,
                "planboard.worker": durable.worker_name(DBOS.executor_id) or None},
                kind="consumer", parent=loaded["options"].get(TRACE_CONTEXT)) as span:
            if "plan" not in loaded:  # submitted as a request: its plan is drafted here
                loaded = recorded("draft", _draft, run_id)
            run = _execute(run_id, loaded, loan, queued)
            span.set({"planboard.run.status": run.status,
                      "planboard.run.mode": run.options_extra["mode"]
                      if isinstance(run, DurableAnswer) else None,
                      "planboard.plan.version": run.plan.version,
                      "planboard.plan.steps": len(run.plan.steps)})
            if run.status == "failed":
                span.fail("run_failed")
            return run.status
    except RunSuspended:
        _stopped_here(run_id, workflow_id)
        raise
    except EngineFault as fault:
        if not durable.record_intact():
            _lost_record(run_id)
        # not a stopping engine nor a cancel: the record and the code differ
        elif durable.is_launched() and not _cancelled(workflow_id):
            _unrunnable(run_id, f"the engine could not replay this run's record ({fault}); "
                                "was PlanBoard upgraded while it ran?")
        raise
    except Exception as exc:
        if not durable.record_intact():
            _lost_record(run_id)
            return "interrupted"
        logger.exception("run %s could not be executed", run_id)
        _unrunnable(run_id, str(exc) if isinstance(exc, PlanBoardError)
                    else f"{type(exc).__name__}: {exc}")
        return "failed"
    finally:
        detach(workflow_id)
        loan.ended.set()
        loan.notify()
        tracing.flush(wait=False)  # the run's spans leave now, not at the next batch


def _cancelled(workflow_id: str) -> bool:
    """Asked through the client: in workflow code DBOS would record the question."""
    found = durable.workflow_state(workflow_id)
    return found is not None and found[0] == "CANCELLED"


def _stopped_here(run_id: str, workflow_id: str) -> None:
    """The run stopped where it was because its process closes: an active run is recorded
    paused (``resume`` continues it), and its workflow cancelled before this thread
    ends (at exit, the interpreter leaves once the last such thread has ended)."""
    store = _store()
    record = store.get_run(run_id)
    if record.status in ("running", "waiting_confirmation"):
        store.set_status(run_id, "paused", event=RunEvent(
            kind="paused", plan_version=record.plan.version if record.plan else 1,
            data={"reason": "its process closed"}))
    durable.cancel_workflow(workflow_id)


def _execute(run_id: str, loaded: dict[str, Any], loan: Attached, queued: bool) -> DurableRun:
    store = _store()
    # the run's settings never change after it is created: reading them again is safe
    engine = loan.engine or _engine_for(store.get_run(run_id))
    options = RunOptions.model_validate(
        {k: v for k, v in loaded["options"].items() if k in RunOptions.model_fields}
        | {"run_id": run_id})
    approved = loaded["approved"]
    plan = Plan.model_validate(loaded["plan"])
    kind = DurableAnswer if answers_without_plan(loaded["options"], plan) else DurableRun
    run = kind(store=store, run_id=run_id, engine=engine, options=options, plan=plan,
               options_extra=dict(loaded["options"]),
               approved=Plan.model_validate(approved) if approved else None,
               worker=durable.worker_name(DBOS.executor_id), events_key=loaded["events_key"],
               status="running", on_event=loan.on_event, replanner=loan.replanner,
               changed=loan.changed, suspended=loan.suspended,
               mail=loan.mail, queued=queued)
    run.run()
    return run
