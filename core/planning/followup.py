"""Follow-up requests: extend a finished plan with new steps instead of starting again.

Seed 000, case 3 ("also check whether you have new earphones"): the completed steps and
their results are kept untouched, the new steps are appended with fresh ids, and a new
synthesis step answers the follow-up; the old synthesis step stays as history.
"""

from __future__ import annotations

import logging
from typing import Any

from core.base.copies import copied
from core.base.language import Language, detect_language
from core.base.messages import msg, render
from core.base.text import refuse_long_request
from core.base.usage import Usage
from core.errors import PlanError, PlanParseError, PlanValidationError
from core.llm.engine import Engine
from core.plan.model import Phase, Plan, Step, step_number
from core.plan.versions import renumber
from core.planning.checkpoint import steps_from_dicts
from core.planning.checks import Pipeline, check_context
from core.prompts.adaptive import (
    FOLLOWUP_CORRECTIVE,
    FOLLOWUP_RULES,
    FOLLOWUP_USER,
    decision_json,
    fold,
)

__all__ = ["extend_goal", "extend_plan_request"]

logger = logging.getLogger(__name__)

_ATTEMPTS = 2


def extend_goal(goal: str, follow_up: str, language: Language) -> str:
    """The goal with the follow-up added on its own line."""
    line = render(msg("followup.goal_line", text=follow_up.strip()), language)
    return f"{goal.rstrip()}\n{line}"


def extend_plan_request(plan: Plan, follow_up: str, engine: Engine) -> tuple[Plan, Usage]:
    """A new version (version + 1) of ``plan`` that also answers ``follow_up``.

    Every old step is copied untouched (results included); new steps get ids after the
    plan's; a new synthesis step ends the plan. Offline a pack's rules draft the new steps
    (none: UnservableRequestError says so); online one planner call does (retried once
    with the problems), and PlanError is raised when both answers are unusable. The checks
    of the "follow_up" stage run on the new version (core.planning.checks): its repairs,
    its problems as warnings for the person approving it, and its final repairs.

    The follow-up's language is decided here, as it enters: the new version, its new steps
    and the answer are in it.
    """
    text = follow_up.strip()
    if not text:
        raise PlanError("the follow-up is empty; say what else should be done")
    refuse_long_request(text)
    language = detect_language(text)
    checks = Pipeline(check_context(text, engine.registry, "follow_up", language=language,
                                    model=engine.model))
    if engine.model is None:
        new_steps, constraints = _offline_steps(plan, text, engine, language)
        extended, usage = checks.accept(_assemble(plan, text, new_steps, constraints,
                                                  language)), Usage()
    else:
        extended, usage = _llm_version(plan, text, engine, language, checks)
    checks.review(extended)
    return checks.settle(extended), usage


def _assemble(plan: Plan, follow_up: str, new_steps: list[Step], constraints: list[str],
              language: Language) -> Plan:
    old = [copied(s) for s in plan.steps]
    if not new_steps or new_steps[-1].tool is not None:
        previous = plan.synthesis_step()
        new_steps = [*new_steps, Step(
            id=_next_id(plan, new_steps), description=_synthesis(language),
            depends_on=[s.id for s in new_steps] + ([previous.id] if previous else []),
        )]
    extended = copied(
        plan,
        goal=extend_goal(plan.goal, follow_up, language),
        language=language,
        constraints=list(dict.fromkeys([*plan.constraints, *constraints])),
        version=plan.version + 1,
        steps=[*old, *new_steps],
    )
    return _in_new_phase(extended, follow_up, new_steps) if plan.phases else extended


def _in_new_phase(plan: Plan, follow_up: str, new_steps: list[Step]) -> Plan:
    """A plan with phases answers a follow-up in a phase of its own, after every other
    (the phase plan changes: ``phases_version + 1``)."""
    numbers = [int(p.id[1:]) for p in plan.phases if p.id[1:].isdigit()]
    phase = Phase(id=f"p{max(numbers, default=0) + 1}", title=" ".join(follow_up.split())[:80],
                  goal=follow_up, depends_on=[p.id for p in plan.phases if not p.dropped])
    added = {s.id for s in new_steps}
    for step in plan.steps:
        if step.id in added and step.phase not in {p.id for p in plan.phases}:
            step.phase = phase.id
    plan.phases.append(phase)
    plan.phases_version += 1
    return plan


def _next_id(plan: Plan, new_steps: list[Step]) -> str:
    numbers = [int(s.id[1:]) for s in [*plan.steps, *new_steps] if s.id[1:].isdigit()]
    return f"s{max(numbers, default=0) + 1}"


def _synthesis(language: Language) -> str:
    return render(msg("followup.synthesis"), language)


def _offline_steps(plan: Plan, follow_up: str, engine: Engine, language: Language
                   ) -> tuple[list[Step], list[str]]:
    from core.planning.offline import offline_plan

    draft = offline_plan(follow_up, engine.registry)  # no pack drafts: a clear error
    synthesis = draft.synthesis_step()
    work = [s for s in draft.steps if synthesis is None or s.id != synthesis.id]
    start = int(plan.next_step_id()[1:])
    mapping = {s.id: f"s{start + n}" for n, s in enumerate(work)}
    renamed = [renumber(s, mapping) for s in work]
    previous = plan.synthesis_step()
    final = Step(
        id=f"s{start + len(work)}", description=_synthesis(language),
        depends_on=[s.id for s in renamed] + ([previous.id] if previous else []),
    )
    return [*renamed, final], list(draft.constraints)


def _llm_version(plan: Plan, follow_up: str, engine: Engine, language: Language,
                 checks: Pipeline) -> tuple[Plan, Usage]:
    """The new version the model's steps make, each reply through the stage's repairs and
    validation (``checks``); asked once more with the problems of an unusable reply."""
    from core.planning.exchange import catalogue, schema_for
    from core.planning.shortlist import shortlist
    from core.prompts.planning import planner_system_prompt

    assert engine.model is not None
    next_id = plan.next_step_id()
    listed = shortlist(follow_up, engine.registry,
                       keep=[step.tool for step in plan.steps if step.tool])
    system = planner_system_prompt(catalogue(engine.registry, listed.described),
                                   language=language, every_name=listed.every_name)
    system += "\n\n" + FOLLOWUP_RULES.substitute(next_id=next_id)
    results = "\n".join(f"- {s.id}: {fold(s.result, 800)}" for s in plan.steps
                        if s.status == "completed") or "(none)"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": FOLLOWUP_USER.substitute(
            summary=plan.summary(), results=results, follow_up=follow_up, next_id=next_id)},
    ]
    usage = Usage()
    problems: list[str] = []
    schema = schema_for(engine.registry, described=listed.described, steps_only=True)
    for attempt in range(1, _ATTEMPTS + 1):
        reply = engine.model.chat(messages, role="planner", tools=None, json_mode=True,
                                  json_schema=schema)
        usage = usage + reply.usage
        text = reply.content or ""
        try:
            steps = _read_steps(plan, text)
            return checks.accept(_assemble(plan, follow_up, steps, [], language)), usage
        except PlanParseError as exc:
            problems = [str(exc)]
        except PlanValidationError as exc:
            problems = [str(problem) for problem in exc.problems]  # a model reads English
        logger.info("follow-up planning attempt %d unusable: %s", attempt, problems)
        messages = [*messages, {"role": "assistant", "content": text or "(empty reply)"},
                    {"role": "user", "content": FOLLOWUP_CORRECTIVE.substitute(
                        problems="\n".join(f"- {p}" for p in problems))}]
    raise PlanError("Extending the plan failed: the model's new steps could not be used ("
                    + "; ".join(problems) + "); try again or write the steps by hand")


def _read_steps(plan: Plan, text: str) -> list[Step]:
    data = decision_json(text, ["steps"], what="follow-up plan")
    items = data.get("steps")
    if not isinstance(items, list) or not items:
        raise PlanParseError('the follow-up plan has no steps; list them in "steps"', raw=text)
    objects = [i for i in items if isinstance(i, dict)]
    next_number = int(plan.next_step_id()[1:])
    numbers = [step_number(str(i.get("id", ""))) for i in objects]
    fresh = all(n is not None and n >= next_number for n in numbers)
    reuse = {str(i.get("id")) for i in objects} if fresh else set()
    steps = steps_from_dicts(objects, plan, reuse=reuse)
    old_ids = set(plan.ids())
    for step in steps:  # new steps may read old results, never the other way round
        if step.id in old_ids:
            raise PlanParseError(f"new step {step.id} reuses an old id; number new steps from "
                                 f"{plan.next_step_id()}", raw=text)
    return steps
