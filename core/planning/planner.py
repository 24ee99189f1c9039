"""The planner: request -> LLM -> parse -> validate -> (corrective retry | fallback), and replan.

The exchange itself (schema, corrective retry, soft problems) is core.planning.exchange.
Every check of a plan is in core.planning.checks, wired in its one list: each reply is
repaired first (the "repair" checks of the stage), then validated and judged (the
"problem" checks: sent back once, then warnings), and the plan the exchange settles on gets
the "final" repairs. A new plan is checked at the "draft" stage, a replan's at "replan";
the notes of repairs and the remaining problems become the plan's warnings, worded in the
request's language.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence

from core.base.copies import copied
from core.base.language import Language
from core.base.messages import Message, msg, render
from core.base.usage import Usage
from core.errors import ConfigError, PlanBoardError, PlanError, PlanValidationError
from core.llm.client import ChatModel
from core.llm.engine import Engine
from core.llm.providers import PromptStyle, weak_model_checks
from core.plan.approval import has_side_effect
from core.plan.implied_deps import steps_read
from core.plan.model import Plan, Step, references_in, step_number
from core.plan.parse import parse_plan
from core.plan.versions import renumber
from core.planning.checks import Pipeline, check_context
from core.planning.clarify import parse_questions
from core.planning.exchange import (
    ClarificationNeeded,
    PlanningResult,
    StepListener,
    catalogue,
    converse,
    described_lines,
    prompt_style,
    schema_for,
)
from core.planning.offline import tool_chain
from core.planning.periods import request_period, today
from core.planning.shortlist import Shortlist, shortlist
from core.planning.tool_match import relevance
from core.prompts.adaptive import CLARIFY_INSTRUCTION
from core.prompts.planning import (
    EMPTY_ARGUMENT_TEMPLATE,
    fallback_descriptions,
    planner_system_prompt,
    planner_user_prompt,
    replanner_system_prompt,
    replanner_user_prompt,
)
from core.prompts.variants import ANGLE_TEMPLATE, ANGLES, Angle
from core.tools.registry import Tool, ToolRegistry

__all__ = [
    "PlanningResult",
    "Replanner",
    "fallback_plan",
    "make_plan",
    "normalise_tool_names",
    "note_shortlist",
    "plan_request",
    "planned",
    "replan",
    "replan_request",
    "shortlist_explainer",
]

logger = logging.getLogger(__name__)

_NO_MODEL = (
    "No LLM is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for another provider) "
    "in the environment or .env, or use the offline planner (--offline)"
)
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


Replanner = Callable[[Plan, str, Engine], Plan | PlanningResult]
"""Makes the next version of a plan: ``(plan, reason, engine)`` → the new plan, or the
:class:`PlanningResult` that holds it and its cost (:func:`replan_request` is the default)."""


def planned(made: Plan | PlanningResult) -> tuple[Plan, Usage]:
    """A replanner's new plan and what making it cost; PlanError when it made none."""
    if not isinstance(made, PlanningResult):
        return made, Usage()
    if made.plan is None:
        raise PlanError("Replanning failed: " + "; ".join(made.errors))
    return made.plan, made.usage


# ---- planning -----------------------------------------------------------------------------


def _user_prompt(request: str, registry: ToolRegistry, language: Language,
                 angle: Angle | None = None) -> str:
    """The planner's user message: the request, today's date, the period it names, and the
    angle of a variant (last: the system prompt and the request, shared by every variant,
    stay a prefix a server's cache keeps)."""
    on = today()
    period = request_period(request, registry, on=on)
    if period is None:
        prompt = planner_user_prompt(request, today=on.isoformat())
    else:
        prompt = planner_user_prompt(request, today=on.isoformat(),
                                     period=period.describe(language),
                                     start=period.start.isoformat(),
                                     end=period.end.isoformat())
    if angle is None:
        return prompt
    return f"{prompt}\n\n{ANGLE_TEMPLATE.substitute(angle=ANGLES[angle])}"


def plan_request(
    request: str, engine: Engine, *, language: Language, lessons: Iterable[str] = (),
    allow_questions: bool = False, angle: Angle | None = None,
    on_steps: StepListener | None = None,
) -> PlanningResult:
    """Ask the planner model for a plan; retry once with the errors; else fall back.

    With ``allow_questions`` the model may ask clarifying questions instead: they come back
    in ``questions`` and ``plan`` stays None. ``angle`` asks for the plan of one variant (the
    most parallel, the fewest tools, the cheapest); it is checked like any other draft. LLM
    errors (authentication, connection ...) propagate: only unusable output falls back.
    ``on_steps`` hears the steps of each reply as they are written (a preview: the plan
    returned is the finished, checked one).
    """
    model = _require_model(engine)
    style = prompt_style(model)
    listed = shortlist(request, engine.registry)
    system = planner_system_prompt(
        catalogue(engine.registry, listed.described), language=language,
        lessons=list(lessons), style=style, every_name=listed.every_name,
        example_tool=_example_tool(request, engine.registry, listed)
        if style == "compact" and weak_model_checks(model) else None,
    )
    if allow_questions:
        system = f"{system}\n\n{CLARIFY_INSTRUCTION}"
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": _user_prompt(request, engine.registry, language, angle)},
    ]

    checks = Pipeline(check_context(request, engine.registry, "draft", language=language,
                                    model=model))

    def accept(text: str) -> Plan:
        if allow_questions:
            questions = parse_questions(text)
            if questions:
                raise ClarificationNeeded(questions)
        return checks.accept(normalise_tool_names(parse_plan(text, request, language),
                                                  engine.registry))

    schema = schema_for(engine.registry, questions=allow_questions, described=listed.described)
    result = converse(model, messages, accept, review=checks.review, schema=schema,
                      explain=shortlist_explainer(listed, engine.registry, style, model),
                      on_steps=on_steps)
    if result.questions:
        return result
    if result.plan is not None:
        checks.settle(result.plan)
    if result.plan is None:
        logger.warning("planner output unusable twice; using the fallback plan: %s", result.errors)
        result.plan = fallback_plan(request, result.errors, language)
        result.fallback = True
    note_shortlist(result.plan, listed, language)
    return result


def _example_tool(request: str, registry: ToolRegistry, listed: Shortlist) -> str | None:
    """The tool the compact prompt's example step calls, since a small model copies it: the
    one the packs' rules start the request with, else the described read-only tool most
    relevant to the request (an unrelated example, say ``calculate``, is copied into a step
    it does not fit)."""
    first_lookup = tool_chain(request, registry, limit=1)
    if first_lookup:
        return first_lookup[0].tool
    scored = [(relevance(tool, request), -number, tool.name)
              for number, tool in enumerate(listed.described) if not tool.side_effect]
    best = max(scored, default=None)
    return best[2] if best is not None and best[0] > 0 else None


def make_plan(request: str, engine: Engine, *, language: Language,
              lessons: Iterable[str] = ()) -> Plan:
    """The plan for ``request`` (see :func:`plan_request`; this drops the usage)."""
    plan = plan_request(request, engine, language=language, lessons=lessons).plan
    assert plan is not None  # plan_request always returns a plan
    return plan


def fallback_plan(request: str, errors: Sequence[str], language: Language) -> Plan:
    """A plan of one reasoning step and a synthesis step; ``errors`` become its warnings."""
    work, synthesis = fallback_descriptions(request, language)
    headline = render(msg("plan.fallback"), language)
    return Plan(
        goal=request,
        language=language,
        steps=[
            Step(id="s1", description=work),
            Step(id="s2", description=synthesis, depends_on=["s1"]),
        ],
        warnings=[headline, *errors],
    )


# ---- replanning ---------------------------------------------------------------------------


def replan_request(
    plan: Plan, failure: str, engine: Engine, *, lessons: Iterable[str] = ()
) -> PlanningResult:
    """Ask for the remaining steps of ``plan`` after ``failure``; ``plan`` stays unchanged.

    The new version keeps the completed steps (and skipped ones whose dependencies are
    kept) with their results, numbers new steps from ``plan.next_step_id()`` and has
    ``version + 1``. ``result.plan`` is None when both attempts gave unusable output.
    """
    model = _require_model(engine)
    language = plan.language
    kept = _kept_steps(plan)
    next_id = plan.next_step_id()
    style = prompt_style(model)
    listed = shortlist(f"{plan.goal}\n{failure}", engine.registry,
                       keep=[step.tool for step in plan.steps if step.tool])
    messages = [
        {
            "role": "system",
            "content": replanner_system_prompt(
                catalogue(engine.registry, listed.described), next_id=next_id,
                language=language, lessons=list(lessons), style=style,
                every_name=listed.every_name,
            ),
        },
        {
            "role": "user",
            "content": replanner_user_prompt(
                goal=plan.goal,
                summary=plan.summary(),
                results={s.id: s.result for s in kept if s.status == "completed"},
                failure=failure,
                next_id=next_id,
                unneeded=_unneeded_failures(plan, engine.registry),
            ),
        },
    ]

    # ids the failure names were shown, not invented
    checks = Pipeline(check_context(plan.goal, engine.registry, "replan", language=language,
                                    known=[failure], before=plan, model=model),
                      validate=lambda merged: _reads_dropped(merged, plan, kept))

    def accept(text: str) -> Plan:
        proposal = normalise_tool_names(parse_plan(text, plan.goal, language), engine.registry)
        return checks.accept(_merge(plan, kept, proposal))

    result = converse(model, messages, accept, review=checks.review,
                      schema=schema_for(engine.registry, described=listed.described),
                      explain=shortlist_explainer(listed, engine.registry, style, model))
    if result.plan is not None:
        checks.settle(result.plan)
        if listed.cut and not any(line == listed.note(language) for line in plan.warnings):
            note_shortlist(result.plan, listed, language)
    return result


def replan(
    plan: Plan, failure: str, engine: Engine, *, lessons: Iterable[str] = ()
) -> Plan:
    """The next version of ``plan`` after ``failure``; PlanError when replanning failed."""
    result = replan_request(plan, failure, engine, lessons=lessons)
    if result.plan is None:
        raise PlanError(
            "Replanning failed: the model's new steps could not be used ("
            + "; ".join(result.errors)
            + "); finish with the results so far or edit the plan by hand"
        )
    return result.plan


def _unneeded_failures(plan: Plan, registry: ToolRegistry) -> list[str]:
    """Ids of the failed read-only steps no step but the answer waits for (a failed side
    effect is never the replanner's to leave out)."""
    waited = plan.depended_on(besides=plan.synthesis_step())
    return [step.id for step in plan.steps
            if step.status == "failed" and step.tool and step.id not in waited
            and not has_side_effect(step, registry)]


def _kept_steps(plan: Plan) -> list[Step]:
    """Copies of the completed steps, and of skipped steps whose dependencies are all kept."""
    try:
        ordered = plan.topological_order()
    except PlanValidationError:
        ordered = list(plan.steps)
    kept_ids: set[str] = set()
    for step in ordered:
        if step.status == "completed" or (
            step.status == "skipped" and all(dep in kept_ids for dep in step.depends_on)
        ):
            kept_ids.add(step.id)
    kept = []
    for step in plan.steps:
        if step.id in kept_ids:
            copy = copied(step)
            copy.depends_on = [dep for dep in copy.depends_on if dep in kept_ids]
            kept.append(copy)
    return kept


def _merge(plan: Plan, kept: list[Step], proposal: Plan) -> Plan:
    """Kept steps plus the proposal's new steps renumbered from ``plan.next_step_id()``."""
    kept_by_id = {s.id: s for s in kept}
    next_number = int(plan.next_step_id()[1:])
    fresh_numbering = all(
        (n := step_number(s.id)) is not None and n >= next_number
        for s in proposal.steps
    )
    mapping: dict[str, str] = {}
    fresh: list[Step] = []
    for step in proposal.steps:
        echo = kept_by_id.get(step.id)
        if echo is not None and not fresh_numbering and echo.tool == step.tool:
            mapping[step.id] = step.id  # the model repeated a kept step: use the kept one
            continue
        mapping[step.id] = f"s{next_number}"
        next_number += 1
        fresh.append(step)
    renamed = [renumber(step, mapping) for step in fresh]
    dropped = _dropped(plan, kept)
    for step in renamed:
        if step.tool is None:  # reasoning reads what is there: not a dropped (failed) step
            _forget_steps(step, dropped)
        else:
            _forget_waits(step, dropped)
    if renamed and renamed[-1].tool is None:
        completed = [s.id for s in kept if s.status == "completed"]
        renamed[-1].depends_on = list(dict.fromkeys([*completed, *renamed[-1].depends_on]))
    return Plan(
        id=plan.id,
        goal=plan.goal,
        language=plan.language,
        definition_of_done=plan.definition_of_done or proposal.definition_of_done,
        constraints=list(plan.constraints or proposal.constraints),
        version=plan.version + 1,
        steps=[*kept, *renamed],
        warnings=[*plan.warnings, *proposal.warnings],
        check_notes=list(plan.check_notes),
    )


def _dropped(plan: Plan, kept: list[Step]) -> set[str]:
    """The ids of ``plan``'s steps a replan does not keep (failed, or after a failure)."""
    return {s.id for s in plan.steps} - {s.id for s in kept}


def _reads_dropped(merged: Plan, plan: Plan, kept: list[Step]) -> list[Message]:
    """What the new steps of ``merged`` wait for or read of the steps the replan dropped
    (the failed ones): said so, with the completed steps to read instead, since "depends on
    unknown step" alone leads a model to repeat the reference."""
    dropped = _dropped(plan, kept)
    completed = ", ".join(s.id for s in kept if s.status == "completed") or "—"
    problems = []
    for step in merged.steps[len(kept):]:
        for step_id in sorted((set(step.depends_on) | steps_read(step)) & dropped):
            problems.append(msg("plan.reads_dropped_step", step=step.id, dependency=step_id,
                                completed=completed))
    return problems


def _forget_steps(step: Step, dropped: set[str]) -> None:
    """Drop ``step``'s dependencies on the ``dropped`` steps, and the arguments that read
    them: a replan's reasoning step often still names the step that failed, which the new
    version no longer holds."""
    step.depends_on = [dep for dep in step.depends_on if dep not in dropped]
    if step.args:
        step.args = {name: value for name, value in step.args.items()
                     if not references_in(value) & dropped}


def _forget_waits(step: Step, dropped: set[str]) -> None:
    """Drop ``step``'s dependencies on the ``dropped`` steps it reads nothing of: it cannot
    wait for a step the new version no longer holds, and needs nothing from it. A step that
    reads one is told what to read instead (``_reads_dropped``)."""
    read = steps_read(step)
    step.depends_on = [dep for dep in step.depends_on if dep not in dropped or dep in read]


# ---- tool names ---------------------------------------------------------------------------


def normalise_tool_names(plan: Plan, registry: ToolRegistry) -> Plan:
    """A copy of ``plan`` whose unregistered tool names are mapped to a registered one.

    ``lookUpTicket``, ``Look-Up-Ticket``, ``functions.look_up_ticket`` all become ``look_up_ticket``
    when that is registered (and the match is unique); other names are left for
    validation to report.
    """
    names = registry.names()
    copy = copied(plan)
    for step in copy.steps:
        if step.tool is None or step.tool in registry:
            continue
        match = _match_tool(step.tool, names)
        if match:
            logger.debug("%s: tool %r read as %r", step.id, step.tool, match)
            step.tool = match
    return copy


def _match_tool(name: str, names: list[str]) -> str | None:
    candidate = name.strip().removeprefix("functions.").strip()
    snake = _CAMEL_BOUNDARY.sub("_", candidate).replace("-", "_").replace(" ", "_").lower()
    if snake in names:
        return snake
    squashed = snake.replace("_", "")
    found = [n for n in names if n.replace("_", "").lower() == squashed]
    return found[0] if len(found) == 1 else None


# ---- the shortlist --------------------------------------------------------------------------


def note_shortlist(plan: Plan | None, listed: Shortlist, language: Language) -> None:
    """Say in the plan's warnings that the prompt described only a shortlist."""
    note = listed.note(language)
    if plan is not None and note is not None:
        plan.warnings.append(note)


def shortlist_explainer(listed: Shortlist, registry: ToolRegistry, style: PromptStyle,
                        model: ChatModel | None) -> Callable[[str], str]:
    """What a corrective turn adds: the tools a reply names that the prompt only named, and,
    for a weak model (core.llm.providers.weak_model_checks), for a step that leaves a
    required argument empty, the tool that fits it without one."""
    described = {tool.name for tool in listed.described}
    weak = weak_model_checks(model)

    def explain(reply: str) -> str:
        named = [tool for tool in registry
                 if tool.name not in described and f'"{tool.name}"' in reply]
        tools = described_lines(catalogue(registry, named), style) if named else ""
        empty = _without_values(reply, registry) if weak else []
        return "\n".join(part for part in (tools, *empty) if part)

    return explain


def _without_values(reply: str, registry: ToolRegistry) -> list[str]:
    """A line per step of ``reply`` that gives a required argument null: the model does not
    know the value, so another tool may fit the step. Named is the one that does not need
    that argument and takes a value the step gave (a time zone), as a required parameter
    if one does, else the best ranked; the line asks for that value: a parameter's default
    must not answer for it (a small model told to use a clock tool gave it no arguments,
    and the clock's default zone was not Tokyo)."""
    try:
        plan = parse_plan(reply, "")
    except PlanBoardError:
        return []
    lines = []
    for step in plan.steps:
        if step.tool not in registry or not step.args:
            continue
        chosen = registry.get(step.tool or "")
        empty = [name for name in chosen.required if name in step.args
                 and step.args[name] is None]
        if not empty:
            continue
        given = _name_parts(name for name, value in step.args.items() if value is not None)
        others = [tool for tool in registry if tool.name != chosen.name
                  and not set(empty) & set(tool.required)]
        better = max(others, default=None, key=lambda tool: (
            bool(_taking(tool, given)), len(set(_taking(tool, given)) & set(tool.required)),
            relevance(tool, step.description)))
        if better is None or relevance(better, step.description) == 0:
            continue
        taking = _taking(better, given)
        lines.append(EMPTY_ARGUMENT_TEMPLATE.substitute(
            step=step.id, tool=chosen.name, arguments=", ".join(empty),
            description=step.description, better=better.name)
            + (f" Give it its {', '.join(taking)} from the request." if taking else ""))
    return lines


def _name_parts(names: Iterable[str]) -> set[str]:
    return {part for name in names for part in name.lower().split("_") if len(part) > 2}


def _taking(tool: Tool, parts: set[str]) -> list[str]:
    """The parameters of ``tool`` whose names share a part with ``parts`` (a value the step
    gave another tool that this one takes too: its default must not stand in for it)."""
    properties = tool.parameters.get("properties") or {}
    return [name for name in properties if _name_parts([name]) & parts]


# ---- shared machinery ---------------------------------------------------------------------


def _require_model(engine: Engine) -> ChatModel:
    if engine.model is None:
        raise ConfigError(_NO_MODEL)
    return engine.model

