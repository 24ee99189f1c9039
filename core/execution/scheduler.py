"""Runs a plan: ready steps in parallel up to a limit, checkpoints, replanning, the answer.

Checkpoint policies (``RunOptions.checkpoint``, seed 003): ``rigid`` never replans;
``on_failure`` (the default) replans when a step fails fatally or misses its success
criteria; ``adaptive`` also runs a checkpoint after completed steps (one for the steps that
finished together), which may change the pending steps; ``every_step`` replans there. Failures are
classified (seed 004, pit 2): an "ignorable" one is recorded and the run goes on — the
steps that depend on it (by construction only the synthesis) still run, with its error
in their context — and a "fatal" one blocks its dependents and triggers a replan.

A plan with phases (core.plan.phases) runs a phase at a time where they depend on each
other: once nothing more can run, a phase whose steps all completed is checked against its
done-definition (core.execution.phase_check), a failure replans inside its phase
(core.planning.phase_replan), and every phase that became reachable and has no steps yet
is expanded into its steps (core.planning.expansion), each expansion a new version that
passes the version gate like any other. The run completes only when every phase did.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from pydantic import BaseModel, Field

from core.base.messages import Message, msg, render
from core.base.usage import Usage
from core.errors import PlanError
from core.execution.answer_notes import with_required_notes
from core.execution.context import fallback_answer
from core.execution.control import RunControl
from core.execution.coordinator import Coordinator, RunBook, warning
from core.execution.events import EventKind, EventSink, RunEvent
from core.execution.executor import is_synthesis
from core.execution.launcher import StepLauncher, ThreadPoolLauncher, paced_work
from core.execution.options import RunOptions
from core.execution.phase_check import check_key, check_phase, phases_to_check
from core.lifecycle import CRASH_RESET
from core.lifecycle import OutcomeStatus as RunStatus
from core.llm.budget import budgeted
from core.llm.engine import Engine
from core.llm.providers import weak_model_checks
from core.plan.model import FINISHED, Plan, Step
from core.plan.versions import retire
from core.planning.checkpoint import run_checkpoint
from core.planning.choices import CheckpointPolicy
from core.planning.expansion import expand, reachable_phases
from core.planning.phase_replan import replan_any
from core.planning.planner import PlanningResult, Replanner, planned

__all__ = ["RunOptions", "RunOutcome", "RunStatus", "run_plan"]

logger = logging.getLogger(__name__)

MAX_CHECKPOINT_VERSIONS = 12  # a replanner that always changes something cannot loop forever

Expander = Callable[[Plan, str, Engine], "Plan | PlanningResult"]
"""Expands a phase: ``(plan, phase id, engine)`` → the version with its steps, or the
:class:`PlanningResult` that holds it (:func:`core.planning.expansion.expand` by default)."""


class RunOutcome(BaseModel):
    """How a run ended: its status, the final plan, every plan version and the answer."""

    status: RunStatus
    plan: Plan
    versions: list[Plan]
    answer: str | None = None
    usage: Usage = Field(default_factory=Usage)
    warnings: list[str] = Field(default_factory=list)


class Emitter:
    """Sends events to the sink one at a time, in order; a failing sink is logged, not fatal."""

    def __init__(self, sink: EventSink | None) -> None:
        self._sink = sink
        self._lock = threading.Lock()

    def __call__(self, kind: EventKind, plan: Plan, step_id: str | None = None,
                 **data: Any) -> None:
        if self._sink is None:
            return
        event = RunEvent(kind=kind, step_id=step_id, plan_version=plan.version, data=data,
                         plan=plan)
        with self._lock:
            try:
                self._sink(event)
            except Exception:
                logger.exception("event sink failed on %s", kind)


# ---- the run ------------------------------------------------------------------------------


def run_plan(
    plan: Plan,
    engine: Engine,
    *,
    options: RunOptions | None = None,
    control: RunControl | None = None,
    on_event: EventSink | None = None,
    replanner: Replanner | None = None,
    launcher: StepLauncher | None = None,
    expander: Expander | None = None,
) -> RunOutcome:
    """Run ``plan`` (in place) to the end, a pause or a cancellation, and compose the answer.

    A plan with finished steps may be passed again (after a pause or a crash): finished
    steps are not re-run. ``plan`` is the approved boundary unless ``control`` already
    holds one: a later version's side-effecting steps beyond it pass the
    :class:`core.execution.version_gate.VersionGate` first. On a fatal failure (or a
    missed success criterion), unless the policy is rigid, ``replanner(plan, failure,
    engine)`` makes the next version, at most
    ``options.max_replans`` times per call; past that the run finishes "failed" and the
    answer says what failed. Checkpoint versions (adaptive / every_step) do not count
    against ``max_replans``. Usage totals add up every step of every version plus replans,
    checkpoints and success checks (planning usage is the caller's to add).

    Steps run through ``launcher`` (default: a pool of ``options.max_parallel`` threads,
    closed at the end; a launcher passed in is the caller's to close). A phase is expanded
    by ``expander`` (default :func:`core.planning.expansion.expand`: the model, or the
    packs' rules offline); an expansion is not a replan and does not count against
    ``max_replans``.

    Model calls spend ``options.max_model_calls`` (:mod:`core.llm.budget`), the calls of
    the finished steps counted in, unless ``engine`` is on a budget already (a run's
    workflow puts it on one that counts its planning too).
    """
    options = options or RunOptions()
    control = control or RunControl()
    engine = budgeted(engine, options.max_model_calls,
                      sum(step.llm_calls for step in plan.steps if step.status in FINISHED))
    with _launching(launcher, engine, control, options) as chosen:
        return _run_versions(plan, engine, options, control, on_event, replanner, chosen,
                             expander or expand)


def _launching(launcher: StepLauncher | None, engine: Engine, control: RunControl,
               options: RunOptions) -> AbstractContextManager[StepLauncher]:
    """The caller's launcher as is, or a thread pool that closes when the run ends."""
    if launcher is not None:
        return nullcontext(launcher)
    return ThreadPoolLauncher(paced_work(engine, control, options.step_delay_s,
                                         read_ahead=options.read_ahead),
                              options.max_parallel)


def _run_versions(plan: Plan, engine: Engine, options: RunOptions, control: RunControl,
                  on_event: EventSink | None, replanner: Replanner | None,
                  launcher: StepLauncher, expander: Expander) -> RunOutcome:
    """run_plan's body: version after version until the run ends, pauses or is cancelled."""
    replanning_offline = replanner is None and engine.offline
    replanner = replanner or replan_any
    emit = Emitter(on_event)
    control.set_approved(plan, only_if_unset=True)  # the caller approved what it passed
    book = RunBook(versions=[plan])
    _announce(plan, emit)
    limit = 0 if options.checkpoint == "rigid" else options.max_replans
    checkpoints = _checkpoints_for(options, engine, book,
                                   None if replanning_offline else replanner, launcher)
    replans = 0
    while True:
        coordinator = Coordinator(plan, engine, options, control, emit, book,
                                  checkpointer=checkpoints, launcher=launcher)
        state = coordinator.run(hold_synthesis=replans < limit)
        plan = coordinator.plan
        if state != "done":
            return _stop(state, plan, book, emit)
        failures = _failures(plan, book)
        judged = 0
        if not failures and plan.phases:
            judged = len(book.phase_checks)
            failures = _phase_misses(plan, engine, book, launcher)
            judged = len(book.phase_checks) - judged
        if not failures and plan.phases:
            expanded = _expand_reachable(plan, engine, expander, book, emit, launcher)
            if expanded is not None:
                plan = expanded
                continue
            if judged and any(s.status == "pending" for s in plan.steps):
                continue  # the phases their steps waited for are judged now
        if failures and replans < limit:
            if replanning_offline:
                book.warnings.append(warning(plan, "run.replan_needs_llm"))
            else:
                new_plan = _next_version(plan, failures, engine, replanner, book, emit,
                                         launcher)
                if new_plan is not None:
                    replans += 1
                    plan = new_plan
                    continue
            replans = limit  # the replanner cannot help: finish what is left
        if failures:
            coordinator.skip_blocked()
            state = coordinator.run(hold_synthesis=False)
            plan = coordinator.plan
            if state != "done":
                return _stop(state, plan, book, emit)
            coordinator.skip_blocked()
        coordinator.skip_leftovers()
        break
    return _finish_run(plan, book, emit, engine, options)


def _announce(plan: Plan, emit: Emitter) -> None:
    """Say the run (re)starts; steps left running by a dead process are run again."""
    emit("run_started", plan, goal=plan.goal, steps=len(plan.steps),
         resumed=any(s.status != "pending" for s in plan.steps))
    for step in plan.steps:
        if step.status == "running":
            step.advance("pending", reason=CRASH_RESET)
            emit("step_reset", plan, step.id)


def _checkpoints_for(options: RunOptions, engine: Engine, book: RunBook,
                     replanner: Replanner | None,
                     launcher: StepLauncher) -> _Checkpoints | None:
    """The after-step checkpoint of the policy, if it has one (every_step needs a model)."""
    if options.checkpoint == "adaptive" or (options.checkpoint == "every_step"
                                            and not engine.offline):
        return _Checkpoints(options.checkpoint, engine, book, replanner, launcher)
    return None


def _next_version(plan: Plan, failures: list[Message], engine: Engine, replanner: Replanner,
                  book: RunBook, emit: Emitter, launcher: StepLauncher) -> Plan | None:
    """Replan after ``failures``; adopt and announce the new version (None if unusable).

    The replanner reads the failures in English, as the planner's prompts are written; the
    version's reason keeps their codes, so that a reader sees them in their language."""
    failure = "; ".join(str(item) for item in failures)
    new_plan, usage = _replan(plan, failure, engine, replanner, book.warnings, launcher)
    book.usage += usage
    if new_plan is None:
        return None
    for step_id in book.misses:  # the new version answers them
        book.unmet.pop(step_id, None)
    book.misses.clear()
    retire(plan, new_plan)
    # a phase that could not reach its goal changed the phase plan itself
    source = "phases" if new_plan.phases_version != plan.phases_version else "failure"
    emit("replanned", new_plan, from_version=plan.version, to_version=new_plan.version,
         reason=failure, reason_message=msg("version.failures", failures=failures).model_dump(),
         source=source)
    book.versions.append(new_plan)
    return new_plan


# ---- phases -------------------------------------------------------------------------------


def _phase_misses(plan: Plan, engine: Engine, book: RunBook, launcher: StepLauncher
                  ) -> list[Message]:
    """The done-definitions of the phases that just completed, judged once each; what
    was missed, as failures to replan inside those phases (none when all were met)."""
    missed = []
    for phase_id in phases_to_check(plan, book.phase_checks) if plan.phases else []:
        book.phase_checks.add(check_key(plan, phase_id))
        phase = plan.phase(phase_id)
        try:
            verdict, usage = launcher.record(f"phase_check:{phase_id}:v{plan.version}",
                                             check_phase, plan, phase_id, engine)
        except Exception as exc:  # an unusable verdict never ends the run
            logger.warning("the done-definition of phase %s was not checked: %s", phase_id, exc)
            continue
        book.usage += usage
        if verdict.met:
            book.phase_misses.discard(phase_id)
        else:
            book.phase_misses.add(phase_id)
            missed.append(msg("phase.done_missed", phase=phase_id, title=phase.title,
                              done_when=phase.done_when, reason=verdict.reason))
    return missed


def _expand_reachable(plan: Plan, engine: Engine, expander: Expander, book: RunBook,
                      emit: Emitter, launcher: StepLauncher) -> Plan | None:
    """Expand every phase that became reachable, one version each; the last version made
    (None when no phase was expanded). A phase that cannot be expanded stays without steps
    (the run then fails, saying so) and is not tried again."""
    current = plan
    for phase in reachable_phases(plan):
        if phase.id in book.unexpandable:
            continue
        try:
            made = launcher.record(f"expand:{phase.id}:v{current.version}", expander, current,
                                   phase.id, engine)
            new_plan, usage = planned(made)
        except Exception as exc:  # a missing model, an unusable reply: the run still ends
            logger.warning("phase %s was not expanded: %s", phase.id, exc)
            book.unexpandable.add(phase.id)
            book.warnings.append(warning(current, "phase.no_steps", phase=phase.id,
                                         reason=render(exc, current.language)))
            continue
        book.usage += usage
        problems = new_plan.validate(engine.registry) or (
            [] if new_plan.steps_of(phase.id) else [msg("phase.expansion_empty")])
        if problems:
            book.unexpandable.add(phase.id)
            book.warnings.append(warning(current, "phase.no_steps", phase=phase.id,
                                         reason=problems))
            continue
        retire(current, new_plan)
        reason = msg("phase.expanded", phase=phase.id, title=phase.title,
                     count=len(new_plan.steps_of(phase.id)))
        emit("replanned", new_plan, from_version=current.version, to_version=new_plan.version,
             reason=str(reason), reason_message=reason.model_dump(), source="expansion",
             phase=phase.id)
        book.versions.append(new_plan)
        current = new_plan
    return current if current is not plan else None


class _Checkpoints:
    """The after-step checkpoint of a run: the new version to adopt (or None) and why.

    It runs in the coordinator's thread while no step runs. A new version is refused (with
    a warning) when it is invalid or touches a completed step: only pending steps change;
    and it may drop none of them while a step failed and awaits its replan.
    """

    def __init__(self, policy: CheckpointPolicy, engine: Engine, book: RunBook,
                 replanner: Replanner | None, launcher: StepLauncher) -> None:
        self.policy, self.engine, self.book, self.replanner = policy, engine, book, replanner
        self.launcher = launcher
        self.made = 0

    def __call__(self, plan: Plan, finished: list[Step]) -> tuple[Plan | None, Message | str]:
        if self.made >= MAX_CHECKPOINT_VERSIONS:
            return None, ""
        after = ", ".join(s.id for s in finished)
        try:
            result = self.launcher.record(
                f"checkpoint:{'+'.join(s.id for s in finished)}:v{plan.version}",
                run_checkpoint, self.policy, plan, finished, self.engine,
                replanner=self.replanner)
        except Exception as exc:  # a checkpoint is optional: never end the run
            logger.warning("checkpoint after %s failed: %s", after, exc)
            self.book.warnings.append(warning(plan, "run.checkpoint_failed", after=after,
                                              error=exc))
            return None, ""
        self.book.usage += result.usage
        self.book.warnings.extend(result.warnings)
        if result.plan is None:
            return None, ""
        outside = _in_phases(plan, result.plan, finished)
        if outside:
            self.book.warnings.append(warning(
                plan, "phase.outside", after=after, steps=", ".join(outside),
                phases=", ".join(dict.fromkeys(s.phase or "" for s in finished))))
            return None, ""
        problems = result.plan.validate(self.engine.registry) + _finished_changes(
            plan, result.plan)
        if problems:
            self.book.warnings.append(warning(plan, "run.checkpoint_unusable", after=after,
                                              problems=problems))
            return None, ""
        refusal = _drops_before_recovery(plan, result.plan, self.book)
        if refusal:
            self.book.warnings.append(warning(
                plan, "run.checkpoint_refused", after=after, failed=refusal[0],
                dropped=refusal[1], reason=result.reason))
            return None, ""
        if result.decision is not None and result.reason:
            self.book.notes.append(result.reason)
        self.made += 1
        if self.made == MAX_CHECKPOINT_VERSIONS:
            self.book.warnings.append(warning(plan, "run.checkpoints_spent", count=self.made))
        return result.plan, result.message or result.reason


def _in_phases(old: Plan, new: Plan, finished: list[Step]) -> list[str]:
    """In a plan with phases, a checkpoint works inside the phases of the steps that just
    finished: its new steps join the first of them (in place), and the steps of every other
    phase must stay as they were, but for waiting on other steps of those phases (the
    answer step waits on the new ones); the ids of those it changed or dropped (else
    empty)."""
    if not old.phases:
        return []
    phases = [s.phase for s in finished if s.phase]
    if not phases:
        return []
    known = set(old.ids())
    for step in new.steps:
        if step.id not in known and not step.phase:
            step.phase = phases[0]
    inside = {s.id for s in [*old.steps, *new.steps] if s.phase in phases}
    fields = ("description", "tool", "args", "condition", "phase")
    after = {s.id: s for s in new.steps}

    def changed(step: Step) -> bool:
        twin = after.get(step.id)
        if twin is None or any(getattr(step, f) != getattr(twin, f) for f in fields):
            return True
        return not set(step.depends_on) ^ set(twin.depends_on) <= inside

    return [s.id for s in old.steps if s.phase not in phases and changed(s)]


def _finished_changes(old: Plan, new: Plan) -> list[str]:
    """Problems when ``new`` changed or dropped a completed or running step of ``old``."""
    problems = []
    for step in old.steps:
        if step.status not in {"completed", "running"}:
            continue
        if step.id not in new.ids():
            problems.append(f"{step.id} ({step.status}) is missing")
            continue
        twin = new.step(step.id)
        if (twin.status, twin.result, twin.tool, twin.args) != (
                step.status, step.result, step.tool, step.args):
            problems.append(f"{step.id} ({step.status}) was changed; only pending steps may change")
    return problems


def _drops_before_recovery(old: Plan, new: Plan, book: RunBook) -> tuple[str, str] | None:
    """(failed steps, dropped steps) when ``new`` drops a pending or failed step of ``old``
    while a step of ``old`` failed fatally or missed its criteria; else None.

    A checkpoint sees only completed and pending steps: blind to the failure, a small model
    declared "the goal is already met" and its version dropped the lookup that answers
    (the replanner also drops failed steps, which ended the run "completed"). The failure
    replan, once nothing else can run, is what recovers a failure."""
    failed = [s.id for s in old.steps if (s.status == "failed" and s.id not in book.ignorable)
              or s.id in book.misses]
    dropped = [s.id for s in old.steps
               if s.status in {"pending", "failed"} and s.id not in new.ids()]
    return (", ".join(failed), ", ".join(dropped)) if failed and dropped else None


def _failures(plan: Plan, book: RunBook) -> list[Message]:
    """What failed fatally in this version (the answer step too), and which success
    criteria were missed; ignorable failures do not count."""
    failed = [
        msg("version.step_failed", step=s.id, tool=s.tool or msg("version.reasoning"),
            description=s.description, error=s.error_message or s.error)
        for s in plan.steps if s.status == "failed" and s.id not in book.ignorable
    ]
    missed = [why for step_id, why in book.misses.items() if step_id in plan.ids()]
    return [*failed, *missed]


def _replan(plan: Plan, failure: str, engine: Engine, replanner: Replanner,
            warnings: list[str], launcher: StepLauncher) -> tuple[Plan | None, Usage]:
    """The next version and what making it cost; None (with a warning) when it failed."""
    try:
        made = launcher.record(f"replan:v{plan.version}", replanner, plan, failure, engine)
    except Exception as exc:  # includes a missing model; the run still finishes
        logger.warning("replanning failed: %s", exc)
        warnings.append(warning(plan, "run.replan_failed", error=str(exc),
                                version=plan.version))
        return None, Usage()
    try:
        new_plan, usage = planned(made)
    except PlanError as exc:
        warnings.append(str(exc))
        return None, made.usage if isinstance(made, PlanningResult) else Usage()
    problems = new_plan.validate(engine.registry)
    if problems:
        warnings.append(warning(plan, "run.replan_unusable", problems=problems))
        return None, usage
    return new_plan, usage


def _end_phase_spans(book: RunBook) -> None:
    """End the spans of phases still open when this pass of the run stops (a phase
    replanned or not finished: its next pass opens a new one)."""
    for opened in book.phase_spans.values():
        opened.end()
    book.phase_spans.clear()


def _stop(state: str, plan: Plan, book: RunBook, emit: Emitter) -> RunOutcome:
    _end_phase_spans(book)
    status: RunStatus = "paused" if state == "paused" else "cancelled"
    if status == "paused":
        emit("paused", plan)
    emit("run_finished", plan, status=status, answer=None)
    return RunOutcome(status=status, plan=plan, versions=book.versions,
                      usage=_total_usage(book.versions) + book.usage, warnings=book.warnings)


def _finish_run(plan: Plan, book: RunBook, emit: Emitter, engine: Engine,
                options: RunOptions) -> RunOutcome:
    _end_phase_spans(book)
    warnings = book.warnings
    synthesis = plan.synthesis_step()
    if synthesis is not None and synthesis.status == "completed":
        answer = str(synthesis.result)
    else:
        answer = fallback_answer(plan, engine.registry)
        if synthesis is not None and synthesis.status == "failed":
            warnings.append(
                f"The synthesis step failed ({synthesis.error}); the answer lists the "
                "completed steps' results instead."
            )
    failed = [s for s in plan.steps if s.status == "failed" and not is_synthesis(plan, s)]
    spared = book.ignorable if _own_work_done(plan, options.earlier_steps) else set()
    fatal = [s for s in failed if s.id not in spared]
    unanswered = [synthesis] if synthesis is not None and synthesis.status == "failed" else []
    unmentioned = [s for s in [*fatal, *unanswered] if (s.error or s.id) not in answer]
    answer = with_required_notes(answer, plan, unmentioned=unmentioned, changes=book.notes,
                                 registry=engine.registry,
                                 weak_models=weak_model_checks(engine.model))
    warnings.extend(_ignored(plan, failed, spared, book))
    undone = _undone_phases(plan, book)
    warnings.extend(render(line, plan.language) for line in undone)
    if undone:  # the answer says which part of the work was not done
        answer = "\n\n".join([answer, *(f"⚠️ {render(line, plan.language)}" for line in undone)])
    # completed only when the answer step succeeded, nothing fatal stayed unrecovered and
    # every phase was done
    answered = synthesis is None or synthesis.status == "completed"
    status: RunStatus = "completed" if answered and not fatal and not undone else "failed"
    emit("run_finished", plan, status=status, answer=answer)
    return RunOutcome(status=status, plan=plan, versions=book.versions, answer=answer,
                      usage=_total_usage(book.versions) + book.usage, warnings=warnings)


def _own_work_done(plan: Plan, earlier: list[str]) -> bool:
    """Whether a step of this request (not the answer, not an earlier request's) completed.

    A lookup that found nothing is ignorable beside other results; when it is all the
    request asked for, its failure is the outcome, and the run is not completed.
    """
    synthesis = plan.synthesis_step()
    own = [s for s in plan.steps if s.id not in earlier and s is not synthesis]
    return not own or any(s.status == "completed" for s in own)


def _undone_phases(plan: Plan, book: RunBook) -> list[Message]:
    """A sentence for each phase that did not complete, or completed its steps but missed
    its done-definition (a dropped phase was replaced, and one whose steps were all skipped
    did nothing that failed)."""
    undone: list[Message] = []
    for phase_id, status in plan.phase_statuses().items():
        if status not in {"completed", "skipped"}:
            undone.append(msg("phase.not_completed", phase=phase_id,
                              title=plan.phase(phase_id).title,
                              status=msg(f"step_status.{status}")))
        elif phase_id in book.phase_misses:
            undone.append(msg("phase.done_missed", phase=phase_id,
                              title=plan.phase(phase_id).title,
                              done_when=plan.phase(phase_id).done_when, reason="—"))
    return undone


def _ignored(plan: Plan, failed: list[Step], spared: set[str], book: RunBook) -> list[str]:
    """Warnings for ignorable failures and for success criteria that stayed unmet."""
    lines = [warning(plan, "run.failed_ignorable", step=s.id, description=s.description,
                     error=s.error) for s in failed if s.id in spared]
    lines += [warning(plan, "run.criteria_unmet", step=step_id, detail=text)
              for step_id, text in book.unmet.items() if step_id in plan.ids()]
    return lines


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
