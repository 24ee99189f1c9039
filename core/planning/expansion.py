"""Planning in two levels, the second: a phase expanded into its steps when it is reached.

Rolling wave (seed 004's hierarchical planning): the phase plan is approved first, and a
phase gets its steps only once every phase it comes after has finished, with their
results in view, so a step is planned from what earlier phases found rather than from
guesses. A phase is *reachable* when it has no steps yet and the phases before it
completed (or were skipped). Each expansion is a new plan version (source "expansion")
that keeps every step as it was and adds the phase's steps, numbered on, in phase order:
the steps of a phase come after those of the phases before it, so the plan's last step
belongs to its last phase, whose expansion ends with the answer. A side effect an
expansion brings widens the approved plan and waits for approval like any new version
(core.execution.version_gate); read-only steps run on.

With a model, :func:`expand_phase` asks the planner for the phase's steps (its goal, the
phases, the earlier results); without one, :func:`expand_offline` asks the packs' rules
for the phase's goal. :func:`expand` picks by engine.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from core.base.copies import copied
from core.errors import ConfigError, PlanValidationError
from core.llm.engine import Engine
from core.plan.implied_deps import add_implied_dependencies
from core.plan.model import Phase, Plan, Step
from core.plan.parse import parse_plan
from core.plan.phases import phase_ancestors
from core.plan.versions import renumber
from core.planning.exchange import PlanningResult, catalogue, converse, prompt_style, schema_for
from core.planning.offline import offline_plan
from core.planning.phasing import phase_lines, results_before
from core.planning.planner import (
    normalise_tool_names,
    shortlist_explainer,
)
from core.planning.shortlist import Shortlist, shortlist
from core.prompts.phases import expand_rules, expand_user_prompt, results_lines
from core.prompts.planning import planner_system_prompt
from core.tools.registry import ToolRegistry

__all__ = ["expand", "expand_offline", "expand_phase", "is_last_phase", "phase_planner_prompt",
           "reachable_phases", "with_phase_steps"]

logger = logging.getLogger(__name__)


def reachable_phases(plan: Plan) -> list[Phase]:
    """The phases to expand now: no steps yet, and every phase before them finished well
    (completed or skipped), in phase order."""
    statuses = plan.phase_statuses()
    return [phase for phase in plan.unexpanded_phases()
            if all(statuses.get(dep) in {"completed", "skipped"} for dep in phase.depends_on)]


def is_last_phase(plan: Plan, phase_id: str) -> bool:
    """True for the phase that writes the answer: no phase comes after it, and it is the
    last of the phases that remain in phase order."""
    live = [p for p in plan.phases if not p.dropped]
    if any(phase_id in p.depends_on for p in live):
        return False
    order = [pid for pid in plan.phase_ids() if pid in {p.id for p in live}]
    return bool(order) and order[-1] == phase_id


def expand(plan: Plan, phase_id: str, engine: Engine) -> Plan | PlanningResult:
    """The next version of ``plan`` with phase ``phase_id``'s steps: by the model, or
    offline by the packs' rules (the scheduler's default expander)."""
    if engine.offline:
        return expand_offline(plan, phase_id, engine.registry)
    return expand_phase(plan, phase_id, engine)


def phase_planner_prompt(plan: Plan, phase_id: str, engine: Engine, lessons: Iterable[str],
                         *, about: str = "") -> tuple[str, Shortlist, str]:
    """The prompt style, the catalogue's shortlist and the system prompt for planning
    inside phase ``phase_id`` (its expansion or its replan; ``about`` adds to what the
    shortlist is chosen for, e.g. the failure being replanned)."""
    phase = plan.phase(phase_id)
    style = prompt_style(engine.model)
    listed = shortlist("\n".join(filter(None, [plan.goal, f"{phase.title}: {phase.goal}", about])),
                       engine.registry, keep=[step.tool for step in plan.steps if step.tool])
    system = planner_system_prompt(catalogue(engine.registry, listed.described),
                                   language=plan.language, lessons=list(lessons),
                                   style=style, every_name=listed.every_name)
    return style, listed, system


def expand_phase(plan: Plan, phase_id: str, engine: Engine, *, lessons: Iterable[str] = ()
                 ) -> PlanningResult:
    """Ask the planner for the steps of phase ``phase_id`` (one exchange, a corrective
    retry); ``result.plan`` is the new version, None when both replies were unusable.

    Over a large catalogue the prompt describes the shortlist for the phase's goal and the
    tools the plan uses already (:mod:`core.planning.shortlist`), as a draft's does; the
    draft's warnings said so once, so an expansion adds no note of its own."""
    if engine.model is None:
        raise ConfigError("Expanding a phase needs a model; offline, expand_offline does it.")
    model = engine.model
    phase = plan.phase(phase_id)
    before = phase_ancestors(plan.phases, phase_id)
    results = results_before(plan, before)
    next_id = plan.next_step_id()
    style, listed, system = phase_planner_prompt(plan, phase_id, engine, lessons)
    rules = expand_rules(phase=phase_id, title=phase.title, goal=phase.goal,
                         usable=list(results), next_id=next_id,
                         last=is_last_phase(plan, phase_id))
    messages = [
        {"role": "system", "content": f"{system}\n\n{rules}"},
        {"role": "user", "content": expand_user_prompt(
            request=plan.goal, phases=phase_lines(plan), phase=phase_id, title=phase.title,
            results=results_lines(results), next_id=next_id)},
    ]

    def accept(text: str) -> Plan:
        proposal = normalise_tool_names(parse_plan(text, plan.goal, plan.language),
                                        engine.registry)
        expanded = with_phase_steps(plan, phase_id, proposal.steps)
        problems = expanded.validate(engine.registry)
        if problems:
            raise PlanValidationError(problems)
        return expanded

    return converse(model, messages, accept, schema=schema_for(engine.registry),
                    explain=shortlist_explainer(listed, engine.registry, style, model))


def expand_offline(plan: Plan, phase_id: str, registry: ToolRegistry) -> Plan:
    """The next version of ``plan`` with the rules' steps for phase ``phase_id``'s goal
    (its answer step only when it is the last phase); UnservableRequestError when no rule
    serves it."""
    phase = plan.phase(phase_id)
    # strict: a phase no rule serves is not expanded (the run says so) rather than given a
    # step that cannot run offline
    draft = offline_plan(phase.goal or phase.title, registry, strict=True)
    steps = list(draft.steps)
    synthesis = draft.synthesis_step()
    if synthesis is not None and not is_last_phase(plan, phase_id) and len(steps) > 1:
        steps = [s for s in steps if s.id != synthesis.id]
    return with_phase_steps(plan, phase_id, steps)


def with_phase_steps(plan: Plan, phase_id: str, steps: list[Step]) -> Plan:
    """A new version of ``plan`` with ``steps`` added to phase ``phase_id``: numbered on from
    the plan's next id (references renamed with them), in phase order after the steps of
    the phases before; a dependency on an id the reply never defined is left for
    validation to name."""
    number = int(plan.next_step_id()[1:])
    mapping: dict[str, str] = {}
    for step in steps:
        mapping[step.id] = f"s{number}"
        number += 1
    fresh = []
    for step in steps:  # a reply's or a draft's steps: pending, as parsed
        renamed = renumber(step, mapping)
        renamed.phase = phase_id
        fresh.append(renamed)
    new = copied(plan, version=plan.version + 1)
    order = {pid: index for index, pid in enumerate(new.phase_ids())}
    new.steps = sorted([*new.steps, *fresh], key=lambda s: order.get(s.phase or "", len(order)))
    add_implied_dependencies(new)
    return new
