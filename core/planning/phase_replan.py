"""Replanning at the right level: a failure replans inside its phase, never the whole plan.

In a plan with phases, a failed step (or a missed success criterion, or a phase that did not
meet its done-definition) replans only the phase it belongs to: the phase's goal and every
other phase stay as they are, its completed steps are kept with their results, and the new
steps take its unfinished ones' place; the phase plan's version does not change. Only when
the model answers that the phase's goal cannot be reached at all does the phase plan change
(:func:`core.planning.phasing.revise_phases`), as a new version whose diff shows the
phase-level change. A plan without phases is replanned as before
(:func:`core.planning.planner.replan_request`); :func:`replan_any` picks.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable

from core.base.copies import copied
from core.base.text import preview
from core.errors import ConfigError, PlanError, PlanParseError, PlanValidationError
from core.llm.engine import Engine
from core.plan.model import STATUS_ICONS, STEP_NAME, Plan, Step, references_in
from core.plan.parse import parse_plan
from core.plan.phases import phase_ancestors
from core.plan.reply_json import extract_json
from core.planning.exchange import PlanningResult, converse, schema_for
from core.planning.expansion import is_last_phase, phase_planner_prompt, with_phase_steps
from core.planning.phasing import results_before, revise_phases
from core.planning.planner import normalise_tool_names, replan_request, shortlist_explainer
from core.prompts.phases import phase_replan_rules, phase_replan_user_prompt, results_lines

__all__ = ["failed_phase", "replan_any", "replan_phase"]

logger = logging.getLogger(__name__)

_PHASE_NAMED = re.compile(r"\bphase (p\d+)\b")
_STEP_NAMED = re.compile(r"(?:^|;\s*)(s\d+) \(")


def replan_any(plan: Plan, failure: str, engine: Engine, *, lessons: Iterable[str] = ()
               ) -> PlanningResult:
    """The next version after ``failure``: inside its phase in a plan with phases, else as
    :func:`core.planning.planner.replan_request` does."""
    if plan.phases:
        return replan_phase(plan, failure, engine, lessons=lessons)
    return replan_request(plan, failure, engine, lessons=lessons)


def failed_phase(plan: Plan, failure: str) -> str | None:
    """The phase a failure belongs to: that of the first failed step, else the phase or
    the step the failure text names first."""
    phase_of = {s.id: s.phase for s in plan.steps}
    for step in plan.steps:
        if step.status == "failed" and step.phase:
            return step.phase
    named = _PHASE_NAMED.search(failure)
    if named and named.group(1) in {p.id for p in plan.phases}:
        return named.group(1)
    for step_id in _STEP_NAMED.findall(failure):
        if phase_of.get(step_id):
            return phase_of[step_id]
    return None


def replan_phase(plan: Plan, failure: str, engine: Engine, *, lessons: Iterable[str] = ()
                 ) -> PlanningResult:
    """Replan only the phase ``failure`` belongs to (see the module docstring); ``plan``
    stays unchanged, ``result.plan`` is None when both replies were unusable."""
    if engine.model is None:
        raise ConfigError("Replanning a phase needs a model.")
    model = engine.model
    phase_id = failed_phase(plan, failure)
    if phase_id is None:
        raise PlanError(f"Replanning failed: no phase of the plan is named by {failure!r}")
    phase = plan.phase(phase_id)
    base = _without_unfinished(plan, phase_id)
    usable = results_before(plan, phase_ancestors(plan.phases, phase_id) | {phase_id})
    next_id = plan.next_step_id()
    style, listed, system = phase_planner_prompt(plan, phase_id, engine, lessons,
                                                 about=failure)
    rules = phase_replan_rules(phase=phase_id, title=phase.title, goal=phase.goal,
                               next_id=next_id, last=is_last_phase(plan, phase_id))
    summary = "\n".join(_line(step) for step in plan.steps_of(phase_id))
    messages = [
        {"role": "system", "content": f"{system}\n\n{rules}"},
        {"role": "user", "content": phase_replan_user_prompt(
            request=plan.goal, phase=phase_id, title=phase.title, summary=summary,
            results=results_lines(usable), failure=failure, next_id=next_id)},
    ]
    unreachable: list[str] = []

    def accept(text: str) -> Plan:
        reason = _unreachable(text)
        if reason is not None:
            unreachable.append(reason)
            return plan  # not adopted: the phase plan changes instead (below)
        proposal = normalise_tool_names(parse_plan(text, plan.goal, plan.language),
                                        engine.registry)
        replanned = with_phase_steps(base, phase_id, proposal.steps)
        _repoint(replanned, phase_id, set(plan.ids()) - set(base.ids()))
        problems = replanned.validate(engine.registry)
        if problems:
            raise PlanValidationError(problems)
        return replanned

    result = converse(model, messages, accept, schema=schema_for(engine.registry),
                      explain=shortlist_explainer(listed, engine.registry, style, model))
    if not unreachable:
        return result
    logger.info("phase %s reported its goal unreachable: %s", phase_id, unreachable[-1])
    revised = revise_phases(plan, phase_id, unreachable[-1], engine)
    revised.usage = result.usage + revised.usage
    revised.errors = [*result.errors, *revised.errors]
    return revised


def _without_unfinished(plan: Plan, phase_id: str) -> Plan:
    """``plan`` (same version) without the steps of ``phase_id`` that did not complete
    (a skipped step stays when everything it depends on stays)."""
    kept: set[str] = set()
    for step in plan.steps:  # plan order: a step comes after what it depends on
        if step.phase != phase_id or step.status == "completed" or (
                step.status == "skipped" and all(dep in kept for dep in step.depends_on)):
            kept.add(step.id)
    return copied(
        plan,
        steps=[copied(s) for s in plan.steps if s.id in kept])


def _repoint(plan: Plan, phase_id: str, removed: set[str]) -> None:
    """Steps of later phases that waited on a replaced step of ``phase_id`` wait on the
    phase's new last steps instead (those no step of the phase depends on); a step that
    reads a replaced step's result in its arguments or condition keeps the dependency, for
    validation to name."""
    own = plan.steps_of(phase_id)
    exits = [s.id for s in own if not any(s.id in other.depends_on for other in own)]
    for step in plan.steps:
        if step.phase == phase_id or step.status != "pending":
            continue
        reads = references_in(step.args or {}) | set(STEP_NAME.findall(step.condition or ""))
        gone = [dep for dep in step.depends_on if dep in removed and dep not in reads]
        if gone:
            kept = [dep for dep in step.depends_on if dep not in gone]
            step.depends_on = list(dict.fromkeys([*kept, *exits]))


def _line(step: Step) -> str:
    """A step as the replan prompt shows it: status icon, id, description, its error."""
    line = f"{STATUS_ICONS[step.status]} {step.id}: {step.description}"
    return f"{line} → {preview(step.error, 200)}" if step.error else line


def _unreachable(text: str) -> str | None:
    """The reason of a reply saying that the phase's goal cannot be reached, else None."""
    try:
        data = extract_json(text)
    except PlanParseError:  # not JSON at all: parse_plan reports it
        return None
    if isinstance(data, dict) and data.get("phase_unreachable") is True:
        reason = data.get("reason")
        return reason if isinstance(reason, str) else json.dumps(reason, ensure_ascii=False)
    return None
