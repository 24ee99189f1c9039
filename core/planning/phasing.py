"""Planning in two levels, the first: the phase plan, and its change when a phase cannot be done.

Seed 004's hierarchical planning: goal → phases (design → build → test → ship) → the steps
of each phase, where the high-level plan stays stable while the low level adapts.
:func:`plan_phases` asks the model for the phases only (one small call, no steps): a person
approves the shape of the work before its details exist, and each phase is expanded into
steps when it is reached (:mod:`core.planning.expansion`). Without a model the packs' rules
draft the whole phased plan at once (:func:`offline_phased_plan`). :func:`revise_phases`
makes a new phase plan when a phase reports that its goal cannot be reached: the phases
that began are kept, the phase that cannot be done is dropped (the steps it ran stay), and
new phases take the place of it and of the phases not started yet.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from core.base.copies import copied
from core.base.language import Language
from core.base.messages import msg, render
from core.errors import ConfigError, PlanValidationError
from core.llm.client import ChatModel
from core.llm.engine import Engine
from core.plan.model import Phase, Plan
from core.plan.parse import parse_plan
from core.plan.phases import PHASE_ID
from core.planning.checks import check_context
from core.planning.exchange import PlanningResult, converse
from core.planning.offline import offline_plan
from core.planning.packs import packs
from core.prompts.adaptive import language_name
from core.prompts.phases import (
    phases_system_prompt,
    phases_user_prompt,
    results_lines,
    revise_phases_user_prompt,
)
from core.prompts.planning import lessons_block
from core.tools.registry import ToolRegistry

__all__ = [
    "MIN_PHASES",
    "offline_phased_plan",
    "one_phase",
    "phase_lines",
    "plan_phases",
    "results_before",
    "revise_phases",
]

logger = logging.getLogger(__name__)

MIN_PHASES = 2  # fewer is a flat plan: the phase planner is asked again


def plan_phases(request: str, engine: Engine, *, language: Language,
                lessons: Iterable[str] = ()) -> PlanningResult:
    """The phase plan of ``request`` in its ``language``: phases, no steps (one call, a
    corrective retry).

    Unusable twice: one phase holding the whole request, expanded like any other.
    """
    model = _model(engine)
    context = check_context(request, engine.registry, "draft", language=language, model=model)
    system = phases_system_prompt(engine.registry.names(), language_name(context.language))
    if advice := lessons_block(lessons):
        system = f"{system}\n\n{advice}"
    messages = [{"role": "system", "content": system},
                {"role": "user", "content": phases_user_prompt(request)}]

    def accept(text: str) -> Plan:
        plan = parse_plan(text, request, language)
        plan.steps = []  # steps come phase by phase, when each phase is reached
        problems = plan.validate(engine.registry)
        if len(plan.phases) < MIN_PHASES:
            problems.append(msg("phase.too_few", count=len(plan.phases), least=MIN_PHASES))
        if problems:
            raise PlanValidationError(problems)
        return plan

    result = converse(model, messages, accept)
    if result.plan is None:
        logger.warning("phase planner output unusable twice: %s", result.errors)
        result.plan = one_phase(Plan(goal=request, language=language),
                                render(msg("phase.fallback"), language))
        result.plan.warnings.extend(result.errors)
        result.fallback = True
    return result


def offline_phased_plan(request: str, registry: ToolRegistry, *, strict: bool = False) -> Plan:
    """The rules' plan for ``request`` in phases: the first pack's that drafts in phases,
    else the flat draft as one phase, with a warning that says so."""
    for pack in packs(registry):
        if pack.phased is not None:
            return pack.phased(request, registry, strict)
    plan = offline_plan(request, registry, strict=strict)
    return one_phase(plan, render(msg("phase.one_offline"), plan.language))


def one_phase(plan: Plan, warning: str) -> Plan:
    """``plan`` with every step in one phase ``p1`` holding its goal, and ``warning``."""
    phase = Phase(id="p1", title=plan.goal[:80] or "p1", goal=plan.goal,
                  done_when=plan.definition_of_done or None)
    steps = [step.model_copy(update={"phase": "p1"}) for step in plan.steps]
    return plan.model_copy(update={"phases": [phase], "steps": steps,
                                   "warnings": [*plan.warnings, warning]})


def phase_lines(plan: Plan) -> str:
    """The phases as a prompt lists them: status, id, title, goal, the phases before."""
    statuses = plan.phase_statuses()
    lines = []
    for phase in plan.phases:
        after = f" (after {', '.join(phase.depends_on)})" if phase.depends_on else ""
        dropped = f" [dropped: {phase.dropped}]" if phase.dropped else ""
        lines.append(f"- {phase.id} [{statuses.get(phase.id, 'pending')}]{dropped}: "
                     f"{phase.title} — {phase.goal or phase.title}{after}")
    return "\n".join(lines)


def results_before(plan: Plan, phase_ids: Iterable[str]) -> dict[str, object]:
    """The results of the completed steps of ``phase_ids``, by step id, in plan order."""
    wanted = set(phase_ids)
    return {s.id: s.result for s in plan.steps if s.phase in wanted and s.status == "completed"}


def revise_phases(plan: Plan, phase_id: str, reason: str, engine: Engine) -> PlanningResult:
    """A new phase plan after phase ``phase_id`` reported that its goal cannot be reached.

    Completed phases and every step that ran are kept; the phase is kept as dropped (its
    unfinished steps go); the phases not started yet are replaced by the reply's new
    phases. The new version has ``phases_version + 1``; ``plan`` is unchanged.
    """
    model = _model(engine)
    context = check_context(plan.goal, engine.registry, "replan", language=plan.language,
                            model=model)
    statuses = plan.phase_statuses()
    kept_ids = {pid for pid, status in statuses.items()  # every phase that began, and ended
                if status != "pending" and pid != phase_id}
    next_id = _next_phase_id(plan)
    messages = [
        {"role": "system", "content": phases_system_prompt(
            engine.registry.names(), language_name(context.language))},
        {"role": "user", "content": revise_phases_user_prompt(
            request=plan.goal, phases=phase_lines(plan), phase=phase_id, reason=reason,
            results=results_lines(results_before(plan, kept_ids | {phase_id})),
            next_id=next_id)},
    ]

    def accept(text: str) -> Plan:
        reply = parse_plan(text, plan.goal, plan.language)
        revised = _revised(plan, phase_id, reason, kept_ids, reply.phases)
        problems = revised.validate(engine.registry)
        if problems:
            raise PlanValidationError(problems)
        return revised

    return converse(model, messages, accept)


def _revised(plan: Plan, phase_id: str, reason: str, kept_ids: set[str],
             proposed: list[Phase]) -> Plan:
    """``plan`` with phase ``phase_id`` dropped and the phases not started replaced."""
    keep = kept_ids | {p.id for p in plan.phases if p.dropped}
    number = int(_next_phase_id(plan)[1:])
    renamed: dict[str, str] = {}
    fresh: list[Phase] = []
    for phase in proposed:
        if phase.id in keep:
            continue  # the reply repeated a phase that is kept as it is
        renamed[phase.id] = f"p{number}"
        number += 1
        fresh.append(phase)
    dropped = plan.phase(phase_id).model_copy(update={"dropped": reason or "unreachable"})
    phases = [p for p in plan.phases if p.id in keep] + [dropped]
    for phase in fresh:
        after = [renamed.get(dep, dep) for dep in phase.depends_on]
        phases.append(phase.model_copy(update={
            "id": renamed[phase.id],
            "depends_on": [dep for dep in dict.fromkeys(after) if dep != phase_id]}))
    steps = [copied(s) for s in plan.steps
             if s.phase in keep or (s.phase == phase_id and s.status in {"completed",
                                                                          "skipped"})]
    return copied(
        plan,
        phases=phases, steps=steps, version=plan.version + 1,
        phases_version=plan.phases_version + 1)


def _next_phase_id(plan: Plan) -> str:
    numbers = [int(p.id[1:]) for p in plan.phases if PHASE_ID.match(p.id)]
    return f"p{max(numbers, default=0) + 1}"


def _model(engine: Engine) -> ChatModel:
    if engine.model is None:
        raise ConfigError(msg("config.no_llm"))
    return engine.model
