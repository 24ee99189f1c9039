"""The scheduler's coordinator: starts ready steps, applies outcomes, runs checkpoints.

Every plan change happens in the coordinator's thread; workers only run steps. After a
step completes, its success criteria are checked; under the ``adaptive`` and
``every_step`` policies a checkpoint runs once no step is running (new steps wait), so a
new plan version is only adopted while nothing runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Literal

from core.base.expressions import ExpressionError
from core.base.language import detect_language, pick
from core.base.usage import Usage
from core.execution.control import ControlWake, RunControl
from core.execution.events import EventKind
from core.execution.executor import StepOutcome, apply_outcome, execute_step, is_synthesis
from core.execution.options import RunOptions
from core.execution.readiness import blocked_steps, condition_holds, ready_steps
from core.execution.success_check import check_success, classify_failure
from core.execution.version_gate import REJECTED, VersionGate
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.plan.versions import retire

__all__ = ["Checkpointer", "Coordinator", "Emit", "RunBook", "tr"]

logger = logging.getLogger(__name__)

POLL_S = 0.5  # bounded wait, so that subclassed (store-backed) controls are re-read
Emit = Callable[..., None]  # (kind, plan, step_id=None, **data): sends one event
Checkpointer = Callable[[Plan, Step], tuple["Plan | None", str]]  # new version or None, why
_CANCELLED = "cancelled by a person"


def tr(plan: Plan, zh: str, en: str) -> str:
    """``zh`` or ``en``, following the language of the plan's goal."""
    return pick(detect_language(plan.goal), zh, en)


@dataclass
class RunBook:
    """What one run_plan call keeps across plan versions (shared by the coordinators)."""

    versions: list[Plan]
    warnings: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)  # replans and checkpoints (not steps)
    ignorable: set[str] = field(default_factory=set)  # failed steps classified ignorable
    misses: dict[str, str] = field(default_factory=dict)  # step id → failure text
    unmet: dict[str, str] = field(default_factory=dict)  # step id → missed criteria (all)
    notes: list[str] = field(default_factory=list)  # checkpoint reasons the answer needs


class Coordinator:
    """Runs the current plan version as far as it can go (``self.plan`` may be replaced)."""

    def __init__(self, plan: Plan, engine: Engine, options: RunOptions, control: RunControl,
                 emit: Emit, book: RunBook, checkpointer: Checkpointer | None = None) -> None:
        self.plan, self.engine, self.options = plan, engine, options
        self.control, self.emit, self.book = control, emit, book
        self.checkpointer = checkpointer  # adaptive / every_step only
        self.running: dict[Future[StepOutcome], Step] = {}
        self.confirming: dict[Future[bool], Step] = {}
        self.futures: list[Future[Any]] = []  # every future started, kept to the end
        self.confirmed: set[str] = set()
        self.checks: list[str] = []  # completed steps waiting for their checkpoint
        self.abandoned: set[str] = set()  # confirmations of steps a new version dropped
        self.cancel_announced = False
        self.hold = False
        self.gate = VersionGate(control, options, engine.registry, emit, self._finish,
                                self.confirmed)  # versions beyond the approved plan

    def run(self, *, hold_synthesis: bool) -> Literal["done", "paused", "cancelled"]:
        self.hold = hold_synthesis
        wake = ControlWake()
        self.control.add_listener(wake.fire)
        workers = self.options.max_parallel + 64  # threads start lazily; waiters need room
        try:
            with ThreadPoolExecutor(max_workers=workers,
                                    thread_name_prefix="planboard-step") as pool:
                while True:
                    if self.control.is_cancelled():
                        self.checks.clear()
                        self._cancel_pending()
                    else:
                        if self.checks and not self.running:
                            self._run_checks()
                        if not self.control.is_paused() and not self.checks:
                            self._launch(pool)
                    if not (self.running or self.confirming or self.gate.asking or self.checks):
                        break
                    waiting = [*self.running, *self.confirming, *self.gate.asking, wake.future]
                    done, _ = wait(waiting, timeout=POLL_S, return_when=FIRST_COMPLETED)
                    wake.rearm()
                    for future in done:
                        if future in self.running:
                            self._apply(self.running.pop(future), future)
                        elif future in self.confirming:
                            self._confirmation_done(self.confirming.pop(future), future)
                        else:  # a version's decision: the next launch acts on it
                            self.gate.asking.pop(future, None)
        finally:
            self.abandoned.update(s.id for s in self.confirming.values())
            self.control.remove_listener(wake.fire)
        if self.control.is_cancelled():
            self._cancel_pending()
            return "cancelled"
        if self.control.is_paused() and any(s.status == "pending" for s in self.plan.steps):
            return "paused"
        return "done"

    # ---- launching ----------------------------------------------------------------------

    def _ready(self) -> list[Step]:
        """Ready steps; while replans remain, dependents of a step that missed its criteria
        wait for the replan (like dependents of a failed step)."""
        held = self.book.misses if self.hold else ()
        return ready_steps(self.plan, ignorable=self.book.ignorable, held=held)

    def _launch(self, pool: ThreadPoolExecutor) -> None:
        progressed = True
        while progressed:
            progressed = False
            busy = {s.id for s in self.confirming.values()}
            held = self.gate.held(self.plan)
            for step in self._ready():
                if step.id in busy or not self._may_start(step):
                    continue
                if self._condition_false(step):
                    progressed = True
                    continue
                if step.id in held:  # beyond the approved plan: approved first, or not run
                    if self.gate.admit(pool, self.plan, step, held, self.futures):
                        progressed = True
                        break  # the decision changed what is held
                    continue
                if self._needs_confirmation(step) and step.id not in self.confirmed:
                    progressed |= self._ask_confirmation(pool, step)
                    continue
                if len(self.running) >= self.options.max_parallel:
                    continue  # no free slot; later steps may still ask for confirmation
                self._start(pool, step)
                progressed = True

    def _may_start(self, step: Step) -> bool:
        if not is_synthesis(self.plan, step):
            return True
        others = [s for s in self.plan.steps if s.id != step.id]
        if any(s.status in {"pending", "running"} for s in others):
            return False  # the synthesis always comes last
        fatal = any(s.status == "failed" and s.id not in self.book.ignorable for s in others)
        return not (self.hold and (fatal or self.book.misses))

    def _condition_false(self, step: Step) -> bool:
        """Skip, without starting it, a step whose expression condition is already false."""
        try:
            holds = condition_holds(self.plan, step)
        except ExpressionError:
            return False  # the executor reports it as the step's failure
        if holds is not False:
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
        future = pool.submit(self._await_confirmation, step)
        self.futures.append(future)
        self.confirming[future] = step
        return False

    def _await_confirmation(self, step: Step) -> bool:
        """Worker: wait for a person, giving up when a new plan version dropped the step."""
        while True:
            confirmed = self.control.wait_for_confirmation(step, timeout=POLL_S)
            if (confirmed or step.id in self.abandoned or self.control.is_paused()
                    or self.control.is_cancelled() or self.control.decision(step.id) is not None):
                return confirmed

    def _start(self, pool: ThreadPoolExecutor, step: Step) -> None:
        """Start ``step``: it shows as running at once, also while a demo pace delays it."""
        step.advance("running")
        self.emit("step_started", self.plan, step.id, tool=step.tool,
                  description=step.description)
        run_id = self.options.run_id or self.plan.id
        key = f"{run_id}:{step.id}:v{self.plan.version}"
        future = pool.submit(self._paced, self.plan, step, key)
        self.futures.append(future)
        self.running[future] = step

    def _paced(self, plan: Plan, step: Step, key: str) -> StepOutcome:
        """Run ``step`` in a worker, after the demo pace (parallel steps wait side by side)."""
        if self.options.step_delay_s:
            self.control.pace(self.options.step_delay_s)
        return execute_step(plan, step, self.engine, cancel=self.control.cancel_event,
                            idempotency_key=key)

    # ---- finishing ----------------------------------------------------------------------

    def _current(self, step: Step) -> Step:
        """The step object of the current version with ``step``'s id (``step`` if none)."""
        if any(s is step for s in self.plan.steps) or step.id not in self.plan.ids():
            return step
        return self.plan.step(step.id)

    def _apply(self, step: Step, future: Future[StepOutcome]) -> None:
        try:
            outcome = future.result()
        except Exception as exc:  # execute_step never raises; this guards the guarantee
            logger.exception("step %s raised out of the executor", step.id)
            outcome = StepOutcome(status="failed", error=f"{type(exc).__name__}: {exc}")
        current = self._current(step)
        if current is not step and step.status == "running":  # an older version's copy
            apply_outcome(step, outcome)
        if current.status == "running":
            self._finish(current, outcome)

    def _finish(self, step: Step, outcome: StepOutcome) -> None:
        apply_outcome(step, outcome)
        usage = outcome.usage
        extra: dict[str, Any] = {}
        if outcome.status == "completed" and step.success_criteria:
            extra["success"], check_usage = self._check(step)
            step.add_usage(check_usage.llm_calls, check_usage.prompt_tokens,
                           check_usage.completion_tokens)
            usage = usage + check_usage
        elif outcome.status == "failed" and not is_synthesis(self.plan, step):
            extra["failure_class"] = self._classify(step)
        kind: EventKind = f"step_{outcome.status}"  # type: ignore[assignment]
        self.emit(kind, self.plan, step.id, result=outcome.result, error=outcome.error,
                  resolved_args=outcome.resolved_args, mode=outcome.mode,
                  usage=usage.model_dump(), notes=outcome.notes, **extra)
        if (outcome.status == "completed" and self.checkpointer is not None
                and step.id not in self.book.misses and not is_synthesis(self.plan, step)):
            self.checks.append(step.id)

    def _check(self, step: Step) -> tuple[dict[str, Any], Usage]:
        """Check the success criteria; a miss (unless rigid) becomes a failure to replan."""
        try:
            verdict, usage = check_success(step, self.engine,
                                           language=detect_language(self.plan.goal))
        except Exception as exc:  # an unusable verdict never ends the run
            logger.warning("success check of %s failed: %s", step.id, exc)
            self.book.warnings.append(tr(self.plan, f"{step.id} 的成功检查没有完成：{exc}",
                                         f"the success check of {step.id} failed: {exc}"))
            return {"met": True, "reason": str(exc), "how": "skipped"}, Usage()
        if not verdict.met:
            self.book.unmet[step.id] = f"{step.success_criteria} ({verdict.reason})"
            if self.options.checkpoint != "rigid" and not is_synthesis(self.plan, step):
                self.book.misses[step.id] = (
                    f"{step.id} ({step.tool or 'reasoning'}: {step.description}) completed but "
                    f"missed its success criteria \"{step.success_criteria}\": {verdict.reason}")
        return verdict.model_dump(), usage

    def _classify(self, step: Step) -> str:
        if self.options.checkpoint == "rigid":
            return "fatal"  # rigid never replans: every failure counts
        kind = classify_failure(step, step.error, plan=self.plan, registry=self.engine.registry)
        if kind == "ignorable":
            self.book.ignorable.add(step.id)
        return kind

    def _confirmation_done(self, step: Step, future: Future[bool]) -> None:
        if step.id in self.abandoned:
            return
        step = self._current(step)
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
        self._finish(step, StepOutcome(status="skipped", error=REJECTED, mode="direct"))

    def _cancel_pending(self) -> None:
        if not self.cancel_announced:
            self.cancel_announced = True
            self.emit("cancelled", self.plan)
        for step in self.plan.steps:
            if step.status == "pending":
                self._finish(step, StepOutcome(status="skipped", error=_CANCELLED))

    def skip_blocked(self) -> None:
        """End as skipped the pending steps that wait on a fatally failed step, naming it."""
        for step, culprits in blocked_steps(self.plan, ignorable=self.book.ignorable):
            error = f"skipped: depends on failed step {', '.join(culprits)}"
            self._finish(step, StepOutcome(status="skipped", error=error))

    def skip_leftovers(self) -> None:
        """End as skipped any step that could never become ready (it should not happen)."""
        for step in self.plan.steps:
            if step.status == "pending":
                self._finish(step, StepOutcome(
                    status="skipped", error="skipped: its dependencies never finished"))

    # ---- checkpoints --------------------------------------------------------------------

    def _run_checks(self) -> None:
        """Run the queued checkpoints (no step is running), adopting any new version."""
        while self.checks:
            step_id = self.checks.pop(0)
            if self.checkpointer is None or step_id not in self.plan.ids():
                continue
            new_plan, reason = self.checkpointer(self.plan, self.plan.step(step_id))
            if new_plan is not None:
                self._adopt(new_plan, reason)

    def _adopt(self, new_plan: Plan, reason: str) -> None:
        """Make ``new_plan`` the current version (called only while no step is running)."""
        old = self.plan
        if new_plan.version <= old.version:
            new_plan.version = old.version + 1
        pending = {s.id for s in new_plan.steps if s.status == "pending"}
        self.abandoned.update(s.id for s in self.confirming.values() if s.id not in pending)
        retire(old, new_plan)
        self.emit("replanned", new_plan, from_version=old.version,
                  to_version=new_plan.version, reason=reason, source="checkpoint")
        self.plan = new_plan
        self.gate.version = new_plan.version  # a wait for the old version's approval ends
        self.book.versions.append(new_plan)
