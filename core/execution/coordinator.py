"""The scheduler's coordinator: starts ready steps, applies outcomes, runs checkpoints.

Every plan change happens in the coordinator's thread; a launcher
(:mod:`core.execution.launcher`) only runs steps. After a step completes, its success
criteria are checked; under the ``adaptive`` and ``every_step`` policies a checkpoint runs
once no step is running (new steps wait), so a new plan version is only adopted while
nothing runs. A step waiting for a person's confirmation (and a version waiting for
approval, in the gate) is plain state, looked at again on every turn of the loop; the loop
wakes when a step finishes or the run control changes, and holds no thread meanwhile.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.base import tracing
from core.base.expressions import ExpressionError
from core.base.messages import Message, msg, render
from core.base.usage import Usage
from core.execution.control import ControlWake, RunControl
from core.execution.events import EventKind
from core.execution.executor import StepOutcome, apply_outcome, is_synthesis
from core.execution.in_doubt import repeat_key
from core.execution.launcher import StepHandle, StepLauncher
from core.execution.options import RunOptions
from core.execution.readiness import (
    blocked_steps,
    condition_holds,
    ready_steps,
    waiting_on_phases,
)
from core.execution.success_check import check_success, classify_failure
from core.execution.version_gate import VersionGate
from core.lifecycle import CRASH_RESET
from core.llm.engine import Engine
from core.plan.approval import has_side_effect
from core.plan.model import Plan, Step
from core.plan.versions import retire

__all__ = ["Checkpointer", "Coordinator", "Emit", "RunBook", "warning"]

logger = logging.getLogger(__name__)

POLL_S = 0.5  # bounded wait, so that subclassed (store-backed) controls are re-read
Emit = Callable[..., None]  # (kind, plan, step_id=None, **data): sends one event
# the new version, and why: a code when PlanBoard worded it, else as written
Checkpointer = Callable[[Plan, list[Step]], tuple["Plan | None", "Message | str"]]


def warning(plan: Plan, code: str, **params: Any) -> str:
    """The run warning ``code`` worded in the plan's language (warnings are kept as text)."""
    return render(msg(code, **params), plan.language)


@dataclass
class RunBook:
    """What one run_plan call keeps across plan versions (shared by the coordinators)."""

    versions: list[Plan]
    warnings: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)  # replans and checkpoints (not steps)
    ignorable: set[str] = field(default_factory=set)  # failed steps classified ignorable
    misses: dict[str, Message] = field(default_factory=dict)  # step id → why it failed
    unmet: dict[str, str] = field(default_factory=dict)  # step id → missed criteria (all)
    notes: list[str] = field(default_factory=list)  # checkpoint reasons the answer needs
    phase_spans: dict[str, tracing.Span] = field(default_factory=dict)  # open phase spans
    phase_checks: set[str] = field(default_factory=set)  # phases whose done_when was judged
    phase_misses: set[str] = field(default_factory=set)  # phases whose last judgement missed
    unexpandable: set[str] = field(default_factory=set)  # phases whose expansion failed


class Coordinator:
    """Runs the current plan version as far as it can go (``self.plan`` may be replaced)."""

    def __init__(self, plan: Plan, engine: Engine, options: RunOptions, control: RunControl,
                 emit: Emit, book: RunBook, checkpointer: Checkpointer | None = None, *,
                 launcher: StepLauncher) -> None:
        self.plan, self.engine, self.options = plan, engine, options
        self.control, self.emit, self.book = control, emit, book
        self.checkpointer = checkpointer  # adaptive / every_step only
        self.launcher = launcher
        self.running: dict[StepHandle, Step] = {}
        self.awaiting: dict[str, Step] = {}  # side-effecting steps a person was asked about
        self.confirmed: set[str] = set()
        self.doubts: dict[str, int] = {}  # steps whose call may have happened: times found
        self.checks: list[str] = []  # completed steps waiting for their checkpoint
        self.cancel_announced = False
        self.hold = False
        self.gate = VersionGate(control, options, engine.registry, emit, self._finish,
                                self.confirmed)  # versions beyond the approved plan

    def run(self, *, hold_synthesis: bool) -> Literal["done", "paused", "cancelled"]:
        self.hold = hold_synthesis
        wake = ControlWake()
        self.control.add_listener(wake.fire)
        try:
            while True:
                if self.control.is_cancelled():
                    self.checks.clear()
                    self.awaiting.clear()
                    self.gate.asking.clear()
                    self._cancel_pending()
                else:
                    self._review_confirmations()
                    self.gate.review(self.plan)
                    if self.checks and not self.running:
                        self._run_checks()
                    self.launcher.catch_up()  # what a person said while a model decided
                    if not self.control.is_paused() and not self.checks:
                        self._launch()
                if not (self.running or self.awaiting or self.gate.asking or self.checks):
                    break
                finished = self.launcher.next_done(POLL_S, wake)
                wake.rearm()  # before the control is read again: no change goes unseen
                for handle, outcome in finished:
                    self._apply(self.running.pop(handle), outcome)
        finally:
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
        wait for the replan (like dependents of a failed step); in a plan with phases, the
        steps of a phase wait for the phases it comes after to be done."""
        held = set(self.book.misses) if self.hold else set()
        gated = waiting_on_phases(self.plan, self.book.phase_checks)
        return [step for step in ready_steps(self.plan, ignorable=self.book.ignorable,
                                             held=held) if step.id not in gated]

    def _launch(self) -> None:
        progressed = True
        while progressed:
            progressed = False
            # only a side effect can lie beyond the approved plan: the plan is compared with
            # it once a ready step has one, not at every pass (a read-only step's pass then
            # costs the same in a plan of 10 steps and of 1,000)
            held: list[str] | None = None
            for step in self._ready():
                if step.id in self.awaiting or not self._may_start(step):
                    continue
                if self._condition_false(step):
                    progressed = True
                    continue
                if held is None and has_side_effect(step, self.engine.registry):
                    held = self.gate.held(self.plan)
                if held and step.id in held:  # beyond the approved plan: approved first
                    if self.gate.admit(self.plan, step, held):
                        progressed = True
                        break  # the decision changed what is held
                    continue
                if ((step.id in self.doubts or self._needs_confirmation(step))
                        and step.id not in self.confirmed):
                    progressed |= self._ask_confirmation(step)
                    continue
                if len(self.running) >= self.options.max_parallel:
                    continue  # no free slot; later steps may still ask for confirmation
                self._start(step)
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
        self._finish(step, StepOutcome.skipped(
            msg("step.condition_not_met", condition=step.condition), mode="condition"))
        return True

    def _needs_confirmation(self, step: Step) -> bool:
        if not self.options.confirm_side_effects or step.tool is None:
            return False
        return has_side_effect(step, self.engine.registry)

    def _ask_confirmation(self, step: Step) -> bool:
        """Apply a decision already taken, or ask a person (True when decided)."""
        decision = self.control.decision(step.id)
        if decision is not None:
            self._decided(step, decision)
            return True
        doubt = {"in_doubt": True} if step.id in self.doubts else {}
        self.emit("waiting_confirmation", self.plan, step.id, tool=step.tool,
                  args=step.args, description=step.description, **doubt)
        self.awaiting[step.id] = step
        return False

    def _review_confirmations(self) -> None:
        """Apply the decisions taken since the last turn. A step a new version dropped (or
        ended) is no longer awaited; on a pause it stays pending and is asked again later."""
        for step_id, step in list(self.awaiting.items()):
            step = self._current(step)
            decision = self.control.decision(step_id)
            if step.status != "pending":
                del self.awaiting[step_id]
            elif decision is not None:
                del self.awaiting[step_id]
                self._decided(step, decision)
            elif self.control.is_paused():
                del self.awaiting[step_id]

    def _decided(self, step: Step, confirmed: bool) -> None:
        if confirmed:
            self.confirmed.add(step.id)
            self.emit("confirmed", self.plan, step.id)
        else:
            self._reject(step)

    def _start(self, step: Step) -> None:
        """Start ``step``: it shows as running at once, also while a demo pace delays it.

        Launched before its event is written: the steps started together begin their work
        together, not one event write apart (the work only reads the plan).
        """
        step.advance("running")
        run_id = self.options.run_id or self.plan.id
        key = repeat_key(f"{run_id}:{step.id}:v{self.plan.version}", self.doubts.get(step.id, 0))
        with self._phase_span(step).current():  # the step's span is the phase's child
            self.running[self.launcher.start(self.plan, step, key)] = step
        self.emit("step_started", self.plan, step.id, tool=step.tool,
                  description=step.description)

    # ---- finishing ----------------------------------------------------------------------

    def _current(self, step: Step) -> Step:
        """The step object of the current version with ``step``'s id (``step`` if none)."""
        if any(s is step for s in self.plan.steps) or step.id not in self.plan.ids():
            return step
        return self.plan.step(step.id)

    def _apply(self, step: Step, outcome: StepOutcome) -> None:
        current = self._current(step)
        if outcome.in_doubt and current.status == "running":
            self._doubt(current, outcome)
            return
        if current is not step and step.status == "running":  # an older version's copy
            apply_outcome(step, outcome)
        if current.status == "running":
            self._finish(current, outcome)

    def _doubt(self, step: Step, outcome: StepOutcome) -> None:
        """The step's call began before its process died and may have happened: back to
        pending, and a person decides whether it runs again (core.execution.in_doubt)."""
        step.advance("pending", reason=CRASH_RESET)
        self.doubts[step.id] = self.doubts.get(step.id, 0) + 1
        self.confirmed.discard(step.id)
        self.control.forget(step.id)  # a confirmation given before the crash answers nothing
        self.emit("step_reset", self.plan, step.id, reason=outcome.error,
                  reason_message=outcome.error_message.model_dump() if outcome.error_message
                  else None, in_doubt=True)

    def _phase_span(self, step: Step) -> tracing.Span:
        """The span of ``step``'s phase: opened when the phase launches its first step (a
        do-nothing span for a step without a phase, or with tracing off)."""
        if not step.phase:
            return tracing.Span()
        opened = self.book.phase_spans.get(step.phase)
        if opened is None:
            opened = self.book.phase_spans[step.phase] = tracing.start_span(
                f"phase {step.phase}", {"planboard.phase.id": step.phase,
                                        "planboard.plan.version": self.plan.version})
        return opened

    def _close_phase(self, step: Step) -> None:
        """End the span of ``step``'s phase once every step of it has finished."""
        opened = self.book.phase_spans.get(step.phase or "")
        if opened is None or not step.phase:
            return
        status = self.plan.phase_status(step.phase)
        if status in {"completed", "failed", "skipped"}:
            opened.set({"planboard.phase.status": status,
                        "planboard.phase.steps": len(self.plan.steps_of(step.phase))})
            if status == "failed":
                opened.fail("phase_failed")
            opened.end()
            del self.book.phase_spans[step.phase]

    def _finish(self, step: Step, outcome: StepOutcome) -> None:
        apply_outcome(step, outcome)
        self._close_phase(step)
        usage = outcome.usage
        extra: dict[str, Any] = {"read_ahead": True} if outcome.read_ahead else {}
        if outcome.status == "completed" and step.success_criteria:
            checking = time.perf_counter()
            extra["success"], check_usage = self._check(step)
            extra["check_s"] = round(time.perf_counter() - checking, 4)
            step.add_usage(check_usage.llm_calls, check_usage.prompt_tokens,
                           check_usage.completion_tokens)
            usage = usage + check_usage
        elif outcome.status == "failed" and not is_synthesis(self.plan, step):
            extra["failure_class"] = self._classify(step)
        kind: EventKind = f"step_{outcome.status}"  # type: ignore[assignment]
        self.emit(kind, self.plan, step.id, result=outcome.result, error=outcome.error,
                  error_message=outcome.error_message.model_dump() if outcome.error_message
                  else None, resolved_args=outcome.resolved_args, mode=outcome.mode,
                  usage=usage.model_dump(), notes=outcome.notes, work_s=outcome.work_s,
                  tool_s=outcome.tool_s, **extra)
        if (outcome.status == "completed" and self.checkpointer is not None
                and step.id not in self.book.misses and not is_synthesis(self.plan, step)):
            self.checks.append(step.id)

    def _check(self, step: Step) -> tuple[dict[str, Any], Usage]:
        """Check the success criteria; a miss (unless rigid) becomes a failure to replan."""
        try:
            verdict, usage = self.launcher.record(
                f"check:{step.id}:v{self.plan.version}", check_success, step, self.engine,
                language=self.plan.language)
        except Exception as exc:  # an unusable verdict never ends the run
            logger.warning("success check of %s failed: %s", step.id, exc)
            self.book.warnings.append(warning(self.plan, "run.check_failed", step=step.id,
                                              error=exc))
            return {"met": True, "reason": str(exc), "how": "skipped"}, Usage()
        if not verdict.met:
            self.book.unmet[step.id] = f"{step.success_criteria} ({verdict.reason})"
            if self.options.checkpoint != "rigid" and not is_synthesis(self.plan, step):
                self.book.misses[step.id] = msg(
                    "version.step_missed", step=step.id, tool=step.tool or msg("version.reasoning"),
                    description=step.description, criteria=step.success_criteria,
                    reason=verdict.message or verdict.reason)
        return verdict.model_dump(), usage

    def _classify(self, step: Step) -> str:
        if self.options.checkpoint == "rigid":
            return "fatal"  # rigid never replans: every failure counts
        kind = classify_failure(step, step.error, plan=self.plan, registry=self.engine.registry)
        if kind == "ignorable":
            self.book.ignorable.add(step.id)
        return kind

    def _reject(self, step: Step) -> None:
        self.emit("rejected", self.plan, step.id)
        if step.id in self.doubts:  # its call may have happened once: not run again
            self._finish(step, StepOutcome.skipped(
                msg("step.in_doubt_not_repeated", step=step.id, tool=step.tool)))
            return
        self._finish(step, StepOutcome.skipped(msg("step.rejected")))

    def _cancel_pending(self) -> None:
        if not self.cancel_announced:
            self.cancel_announced = True
            self.emit("cancelled", self.plan)
        for step in self.plan.steps:
            if step.status == "pending":
                self._finish(step, StepOutcome.skipped(msg("step.cancelled")))

    def skip_blocked(self) -> None:
        """End as skipped the pending steps that wait on a fatally failed step, naming it."""
        for step, culprits in blocked_steps(self.plan, ignorable=self.book.ignorable):
            self._finish(step, StepOutcome.skipped(
                msg("step.blocked", steps=", ".join(culprits))))

    def skip_leftovers(self) -> None:
        """End as skipped any step that could never become ready (it should not happen)."""
        for step in self.plan.steps:
            if step.status == "pending":
                self._finish(step, StepOutcome.skipped(msg("step.never_ready")))

    # ---- checkpoints --------------------------------------------------------------------

    def _run_checks(self) -> None:
        """One checkpoint for all the steps that finished since the last one (no step is
        running then): a call per step of a parallel batch would judge nearly the same
        state again, at a model call each."""
        finished = [step_id for step_id in self.checks if step_id in self.plan.ids()]
        self.checks.clear()
        if self.checkpointer is None or not finished:
            return
        new_plan, why = self.checkpointer(
            self.plan, [self.plan.step(step_id) for step_id in finished])
        if new_plan is not None:
            self._adopt(new_plan, why)

    def _adopt(self, new_plan: Plan, why: Message | str) -> None:
        """Make ``new_plan`` the current version (called only while no step is running)."""
        old = self.plan
        if new_plan.version <= old.version:
            new_plan.version = old.version + 1
        retire(old, new_plan)  # an awaited step it dropped ends skipped, no longer awaited
        coded = why.model_dump() if isinstance(why, Message) else None
        self.emit("replanned", new_plan, from_version=old.version,
                  to_version=new_plan.version, reason=render(why, old.language),
                  reason_message=coded, source="checkpoint")
        self.plan = new_plan
        self.book.versions.append(new_plan)
