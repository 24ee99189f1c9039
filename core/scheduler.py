"""Runs a plan: ready steps in parallel up to a limit, replanning on failure, then the answer."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Literal

from pydantic import BaseModel, Field

from core.context import failure_note, fallback_answer
from core.engine import Engine
from core.events import EventKind, EventSink, RunEvent
from core.executor import StepOutcome, execute_step, is_synthesis
from core.plan import Plan, Step
from core.run_control import ControlWake, RunControl
from core.safe_eval import ExpressionError, evaluate_condition, is_expression_condition
from core.usage import Usage

__all__ = ["Replanner", "RunOptions", "RunOutcome", "RunStatus", "run_plan"]

logger = logging.getLogger(__name__)

RunStatus = Literal["completed", "failed", "cancelled", "paused"]
Replanner = Callable[[Plan, str, Engine], Plan]
_POLL_S = 0.5  # bounded wait, so that subclassed (store-backed) controls are re-read
_CANCELLED = "cancelled by a person"
_REJECTED = "rejected by a person"


class RunOptions(BaseModel):
    """How to run a plan."""

    max_parallel: int = Field(default=4, ge=1, le=64)
    max_replans: int = Field(default=2, ge=0, le=10)
    confirm_side_effects: bool = False
    run_id: str | None = None


class RunOutcome(BaseModel):
    """How a run ended: its status, the final plan, every plan version and the answer."""

    status: RunStatus
    plan: Plan
    versions: list[Plan]
    answer: str | None = None
    usage: Usage = Field(default_factory=Usage)
    warnings: list[str] = Field(default_factory=list)


class _Emitter:
    """Sends events to the sink one at a time, in order; a failing sink is logged, not fatal."""

    def __init__(self, sink: EventSink | None) -> None:
        self._sink = sink
        self._lock = threading.Lock()

    def __call__(self, kind: EventKind, plan: Plan, step_id: str | None = None,
                 **data: Any) -> None:
        if self._sink is None:
            return
        event = RunEvent(kind=kind, step_id=step_id, plan_version=plan.version, data=data)
        with self._lock:
            try:
                self._sink(event)
            except Exception:
                logger.exception("event sink failed on %s", kind)


class _Coordinator:
    """Runs one plan version as far as it can go; every plan change happens in this thread."""

    def __init__(self, plan: Plan, engine: Engine, options: RunOptions, control: RunControl,
                 emit: _Emitter) -> None:
        self.plan, self.engine, self.options = plan, engine, options
        self.control, self.emit = control, emit
        self.running: dict[Future[StepOutcome], Step] = {}
        self.confirming: dict[Future[bool], Step] = {}
        self.futures: list[Future[Any]] = []  # every future started, kept to the end
        self.confirmed: set[str] = set()
        self.cancel_announced = False

    def run(self, *, hold_synthesis: bool) -> Literal["done", "paused", "cancelled"]:
        wake = ControlWake()
        self.control.add_listener(wake.fire)
        workers = self.options.max_parallel + sum(self._needs_confirmation(s)
                                                  for s in self.plan.steps)
        try:
            with ThreadPoolExecutor(max_workers=workers,
                                    thread_name_prefix="planboard-step") as pool:
                while True:
                    if self.control.is_cancelled():
                        self._cancel_pending()
                    elif not self.control.is_paused():
                        self._launch(pool, hold_synthesis=hold_synthesis)
                    if not self.running and not self.confirming:
                        break
                    waiting = [*self.running, *self.confirming, wake.future]
                    done, _ = wait(waiting, timeout=_POLL_S, return_when=FIRST_COMPLETED)
                    wake.rearm()
                    for future in done:
                        if future in self.running:
                            self._apply(self.running.pop(future), future)
                        elif future in self.confirming:
                            self._confirmation_done(self.confirming.pop(future), future)
        finally:
            self.control.remove_listener(wake.fire)
        if self.control.is_cancelled():
            self._cancel_pending()
            return "cancelled"
        if self.control.is_paused() and any(s.status == "pending" for s in self.plan.steps):
            return "paused"
        return "done"

    # ---- launching ----------------------------------------------------------------------

    def _launch(self, pool: ThreadPoolExecutor, *, hold_synthesis: bool) -> None:
        progressed = True
        while progressed:
            progressed = False
            busy = {s.id for s in self.confirming.values()}
            for step in self.plan.ready_steps():
                if step.id in busy or not self._may_start(step, hold_synthesis):
                    continue
                if self._condition_false(step):
                    progressed = True
                    continue
                if self._needs_confirmation(step) and step.id not in self.confirmed:
                    progressed |= self._ask_confirmation(pool, step)
                    continue
                if len(self.running) >= self.options.max_parallel:
                    continue  # no free slot; later steps may still ask for confirmation
                self._start(pool, step)
                progressed = True

    def _may_start(self, step: Step, hold_synthesis: bool) -> bool:
        if not is_synthesis(self.plan, step):
            return True
        others = [s for s in self.plan.steps if s.id != step.id]
        if any(s.status in {"pending", "running"} for s in others):
            return False  # the synthesis always comes last
        return not (hold_synthesis and any(s.status == "failed" for s in others))

    def _condition_false(self, step: Step) -> bool:
        """Skip, without starting it, a step whose expression condition is already false."""
        if not step.condition or not is_expression_condition(step.condition):
            return False
        try:
            holds = evaluate_condition(step.condition, self.plan.results())
        except ExpressionError:
            return False  # the executor reports it as the step's failure
        if holds:
            return False
        self._finish(step, StepOutcome(status="skipped", mode="condition",
                                       error=f"condition not met: {step.condition}"))
        return True

    def _needs_confirmation(self, step: Step) -> bool:
        if not self.options.confirm_side_effects or step.tool is None:
            return False
        return step.tool in self.engine.registry and self.engine.registry.get(
            step.tool).side_effect

    def _ask_confirmation(self, pool: ThreadPoolExecutor, step: Step) -> bool:
        decision = self.control.decision(step.id)
        if decision is True:
            self.confirmed.add(step.id)
            self.emit("confirmed", self.plan, step.id)
            return True
        if decision is False:
            self._reject(step)
            return True
        self.emit("waiting_confirmation", self.plan, step.id, tool=step.tool,
                  args=step.args, description=step.description)
        future = pool.submit(self.control.wait_for_confirmation, step)
        self.futures.append(future)
        self.confirming[future] = step
        return False

    def _start(self, pool: ThreadPoolExecutor, step: Step) -> None:
        step.advance("running")
        self.emit("step_started", self.plan, step.id, tool=step.tool,
                  description=step.description)
        run_id = self.options.run_id or self.plan.id
        key = f"{run_id}:{step.id}:v{self.plan.version}"
        future = pool.submit(execute_step, self.plan, step, self.engine,
                             cancel=self.control.cancel_event, idempotency_key=key)
        self.futures.append(future)
        self.running[future] = step

    # ---- finishing ----------------------------------------------------------------------

    def _apply(self, step: Step, future: Future[StepOutcome]) -> None:
        try:
            outcome = future.result()
        except Exception as exc:  # execute_step never raises; this guards the guarantee
            logger.exception("step %s raised out of the executor", step.id)
            outcome = StepOutcome(status="failed", error=f"{type(exc).__name__}: {exc}")
        self._finish(step, outcome)

    def _finish(self, step: Step, outcome: StepOutcome) -> None:
        step.advance(outcome.status)
        step.result = outcome.result
        step.error = outcome.error
        if outcome.resolved_args is not None:
            step.resolved_args = outcome.resolved_args
        usage = outcome.usage
        step.add_usage(usage.llm_calls, usage.prompt_tokens, usage.completion_tokens)
        kind: EventKind = f"step_{outcome.status}"  # type: ignore[assignment]
        self.emit(kind, self.plan, step.id, result=outcome.result, error=outcome.error,
                  resolved_args=outcome.resolved_args, mode=outcome.mode,
                  usage=usage.model_dump(), notes=outcome.notes)

    def _confirmation_done(self, step: Step, future: Future[bool]) -> None:
        if step.status != "pending":
            return
        try:
            confirmed = future.result()
        except Exception:
            logger.exception("waiting for confirmation of %s failed", step.id)
            confirmed = False
        if confirmed:
            self.confirmed.add(step.id)
            self.emit("confirmed", self.plan, step.id)
        elif self.control.is_cancelled():
            self._cancel_pending()
        elif self.control.decision(step.id) is False or not self.control.is_paused():
            self._reject(step)
        # else: woken by a pause; the step stays pending and is asked again on resume

    def _reject(self, step: Step) -> None:
        self.emit("rejected", self.plan, step.id)
        self._finish(step, StepOutcome(status="skipped", error=_REJECTED, mode="direct"))

    def _cancel_pending(self) -> None:
        if not self.cancel_announced:
            self.cancel_announced = True
            self.emit("cancelled", self.plan)
        for step in self.plan.steps:
            if step.status == "pending":
                self._finish(step, StepOutcome(status="skipped", error=_CANCELLED))

    def skip_blocked(self) -> None:
        """End as skipped the pending steps that wait on a failed step, naming it."""
        failed = {s.id for s in self.plan.steps if s.status == "failed"}
        for step in self.plan.blocked_steps():
            culprits = [d for d in step.depends_on if d in failed] or step.depends_on
            error = f"skipped: depends on failed step {', '.join(culprits)}"
            self._finish(step, StepOutcome(status="skipped", error=error))
            failed.add(step.id)

    def skip_leftovers(self) -> None:
        """End as skipped any step that could never become ready (it should not happen)."""
        for step in self.plan.steps:
            if step.status == "pending":
                self._finish(step, StepOutcome(
                    status="skipped", error="skipped: its dependencies never finished"))


# ---- the run ------------------------------------------------------------------------------


def run_plan(
    plan: Plan,
    engine: Engine,
    *,
    options: RunOptions | None = None,
    control: RunControl | None = None,
    on_event: EventSink | None = None,
    replanner: Replanner | None = None,
) -> RunOutcome:
    """Run ``plan`` (in place) to the end, a pause or a cancellation, and compose the answer.

    A plan with finished steps may be passed again (after a pause or a crash): finished
    steps are not re-run. On failure, ``replanner(plan, failure, engine)`` makes the next
    version, at most ``options.max_replans`` times per call; past that the run finishes
    "failed" and the answer says what failed. Usage totals add up every step of every
    version (planning usage is the caller's to add).
    """
    options = options or RunOptions()
    control = control or RunControl()
    if replanner is None:
        from core.planner import replan as replanner
    emit = _Emitter(on_event)
    versions = [plan]
    warnings: list[str] = []
    emit("run_started", plan, goal=plan.goal, steps=len(plan.steps),
         resumed=any(s.status != "pending" for s in plan.steps))
    for step in plan.steps:
        if step.status == "running":  # left running by a process that died: run it again
            step.reset_after_crash()
            emit("step_reset", plan, step.id)
    replans = 0
    while True:
        coordinator = _Coordinator(plan, engine, options, control, emit)
        state = coordinator.run(hold_synthesis=replans < options.max_replans)
        if state != "done":
            return _stop(state, plan, versions, warnings, emit)
        failure = _failure_text(plan)
        if failure and replans < options.max_replans:
            new_plan = _replan(plan, failure, engine, replanner, warnings)
            if new_plan is not None:
                replans += 1
                _retire(plan, new_plan)
                emit("replanned", new_plan, from_version=plan.version,
                     to_version=new_plan.version, reason=failure)
                plan = new_plan
                versions.append(plan)
                continue
            replans = options.max_replans  # the replanner cannot help: finish what is left
        if failure:
            coordinator.skip_blocked()
            state = coordinator.run(hold_synthesis=False)
            if state != "done":
                return _stop(state, plan, versions, warnings, emit)
            coordinator.skip_blocked()
        coordinator.skip_leftovers()
        break
    return _finish_run(plan, versions, warnings, emit)


def _failure_text(plan: Plan) -> str:
    """What failed in this version (the synthesis step does not count: it has a fallback)."""
    return "; ".join(
        f"{s.id} ({s.tool or 'reasoning'}: {s.description}) failed: {s.error}"
        for s in plan.steps
        if s.status == "failed" and not is_synthesis(plan, s)
    )


def _replan(plan: Plan, failure: str, engine: Engine, replanner: Replanner,
            warnings: list[str]) -> Plan | None:
    try:
        new_plan = replanner(plan, failure, engine)
    except Exception as exc:  # includes a missing model; the run still finishes
        logger.warning("replanning failed: %s", exc)
        warnings.append(f"Replanning failed ({exc}); the run continued with plan v{plan.version}.")
        return None
    problems = new_plan.validate(engine.registry)
    if problems:
        warnings.append("The replanned plan was not usable: " + "; ".join(problems))
        return None
    return new_plan


def _retire(old: Plan, new: Plan) -> None:
    """End, silently, the old version's pending steps that the new version replaced."""
    carried = {id(s) for s in new.steps}
    for step in old.steps:
        if step.status == "pending" and id(step) not in carried:
            step.advance("skipped")
            step.error = f"replaced by plan version {new.version}"


def _stop(state: str, plan: Plan, versions: list[Plan], warnings: list[str],
          emit: _Emitter) -> RunOutcome:
    status: RunStatus = "paused" if state == "paused" else "cancelled"
    if status == "paused":
        emit("paused", plan)
    usage = _total_usage(versions)
    emit("run_finished", plan, status=status, answer=None)
    return RunOutcome(status=status, plan=plan, versions=versions, usage=usage,
                      warnings=warnings)


def _finish_run(plan: Plan, versions: list[Plan], warnings: list[str],
                emit: _Emitter) -> RunOutcome:
    synthesis = plan.synthesis_step()
    if synthesis is not None and synthesis.status == "completed":
        answer = str(synthesis.result)
    else:
        answer = fallback_answer(plan)
        if synthesis is not None and synthesis.status == "failed":
            warnings.append(
                f"The synthesis step failed ({synthesis.error}); the answer lists the "
                "completed steps' results instead."
            )
    failed = [s for s in plan.steps if s.status == "failed" and not is_synthesis(plan, s)]
    unmentioned = [s for s in failed if (s.error or s.id) not in answer]
    if unmentioned:  # the answer must say what failed
        answer = f"{answer}\n\n{failure_note(plan, unmentioned)}".strip()
    status: RunStatus = "failed" if failed else "completed"
    emit("run_finished", plan, status=status, answer=answer)
    return RunOutcome(status=status, plan=plan, versions=versions, answer=answer,
                      usage=_total_usage(versions), warnings=warnings)


def _total_usage(versions: list[Plan]) -> Usage:
    """Usage of every step of every version, each step id counted once (latest version)."""
    latest: dict[str, Step] = {}
    for version in versions:
        for step in version.steps:
            latest[step.id] = step
    total = Usage()
    for step in latest.values():
        total = total + Usage(llm_calls=step.llm_calls, prompt_tokens=step.prompt_tokens,
                              completion_tokens=step.completion_tokens)
    return total
