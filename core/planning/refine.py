"""Refining a plan with a sentence: the planner revises the current plan, the code keeps it.

The model answers with the whole revised plan; :func:`merge_revision` then builds the new
version from the *current* plan, not from the model's copy of it. A step the revision keeps
(the same id and the same tool) keeps every field the sentence does not point at, so a
value a person edited by hand survives a model that dropped it or copied the draft's. A
kept step changes only when the sentence points at it: it names the step's id, its tool
(or a part of the tool's name), one of its argument names or values, or shares a term
with its description. Even then an argument the model left out stays unless the sentence
names that argument. A step with a new id, or a known id with another tool, is taken as
the model wrote it; a step the revision leaves out is removed. New steps are numbered
after the current plan's, and the result is the current version + 1, repaired, validated
and judged by the "draft" checks like any drafted plan.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from core.base.copies import copied
from core.base.language import terms
from core.base.messages import msg
from core.base.usage import Usage
from core.errors import ConfigError, PlanError
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.plan.parse import parse_plan
from core.plan.versions import renumber
from core.planning.checks import Pipeline, check_context
from core.planning.exchange import catalogue, converse, prompt_style, schema_for
from core.planning.planner import normalise_tool_names
from core.planning.shortlist import shortlist
from core.prompts.planning import planner_system_prompt
from core.prompts.refining import REFINE_RULES, REFINE_USER_TEMPLATE

__all__ = ["merge_revision", "refine_plan"]

_TEXT_FIELDS = ("description", "success_criteria")
_MIN_LATIN_TERM = 5  # shorter English words ("the", "with", "from") point at every step


def refine_plan(plan: Plan, sentence: str, engine: Engine) -> tuple[Plan, Usage]:
    """The next version of ``plan`` revised as ``sentence`` asks, and what asking cost
    (``plan`` stays unchanged).

    ConfigError (one line) for an empty sentence or without a model: refining is the
    planner model's work. PlanError when both of the model's answers were unusable.
    """
    text = sentence.strip()
    if not text:
        raise ConfigError(msg("refine.empty"))
    if engine.model is None:
        raise ConfigError(msg("refine.needs_model"))
    # the sentence and the plan a person reviewed give values: they are not invented
    checks = Pipeline(check_context(
        plan.goal, engine.registry, "draft", language=plan.language,
        known=[text, *(step.args for step in plan.steps if step.args)], model=engine.model))
    listed = shortlist(f"{plan.goal}\n{text}", engine.registry,
                       keep=[step.tool for step in plan.steps if step.tool])
    next_id = plan.next_step_id()
    system = planner_system_prompt(catalogue(engine.registry, listed.described),
                                   language=plan.language, style=prompt_style(engine.model),
                                   every_name=listed.every_name)
    messages = [
        {"role": "system", "content": f"{system}\n\n{REFINE_RULES.substitute(next_id=next_id)}"},
        {"role": "user", "content": REFINE_USER_TEMPLATE.substitute(
            plan=json.dumps(plan.canonical(), ensure_ascii=False, indent=1), sentence=text)},
    ]

    def accept(reply: str) -> Plan:
        revision = normalise_tool_names(parse_plan(reply, plan.goal, plan.language),
                                       engine.registry)
        return checks.accept(merge_revision(plan, revision, text))

    result = converse(engine.model, messages, accept, review=checks.review,
                      schema=schema_for(engine.registry))
    if result.plan is None:
        raise PlanError(msg("refine.unusable", errors="; ".join(result.errors)))
    return checks.settle(result.plan), result.usage


def merge_revision(current: Plan, revision: Plan, sentence: str) -> Plan:
    """The version after ``current``: the revision's steps, in its order, with every kept
    step rebuilt from ``current`` and changed only where ``sentence`` points at it."""
    before = {step.id: step for step in current.steps}
    mapping = _revision_ids(current, revision)
    kept_ids = {mapping[step.id] for step in revision.steps if _keeps(before, step, mapping)}
    renamed = [renumber(step, mapping) for step in revision.steps]
    ids = {step.id for step in renamed}
    steps = [_kept_step(before[step.id], step, sentence, ids) if step.id in kept_ids else step
             for step in renamed]
    return copied(
        current,
        definition_of_done=revision.definition_of_done or current.definition_of_done,
        constraints=list(revision.constraints or current.constraints),
        version=current.version + 1,
        steps=steps,
        warnings=[],
        check_notes=[],
    )


def _keeps(before: dict[str, Step], proposed: Step, mapping: dict[str, str]) -> bool:
    kept = before.get(mapping[proposed.id])
    return kept is not None and kept.tool == proposed.tool


def _revision_ids(current: Plan, revision: Plan) -> dict[str, str]:
    """Each revision step's id in the new version: a step the revision keeps gets its id in
    ``current`` back, even when the model renumbered it (the same tool with the same
    arguments, or a step without a tool with the same description); a step written in the
    place of one the revision dropped keeps that id, and any other new step is numbered after
    the current plan's."""
    before = {step.id: step for step in current.steps}
    mapping: dict[str, str] = {}
    for step in revision.steps:  # first the same id for the same step
        kept = before.get(step.id)
        if kept is not None and kept.tool == step.tool and _same(kept, step):
            mapping[step.id] = step.id
    for step in revision.steps:  # then the same step under another id
        taken = set(mapping.values())
        moved = [kept for kept in current.steps if kept.id not in taken and _same(kept, step)]
        if step.id not in mapping and moved:
            mapping[step.id] = moved[0].id
    for step in revision.steps:  # then the same id with the same tool (its arguments changed)
        kept = before.get(step.id)
        if (step.id not in mapping and step.id not in mapping.values() and kept is not None
                and kept.tool == step.tool):
            mapping[step.id] = step.id
    next_number = int(current.next_step_id()[1:])
    for step in revision.steps:
        if step.id not in mapping:
            if step.id in before and step.id not in mapping.values():
                mapping[step.id] = step.id  # another step written where this one was
            else:
                mapping[step.id] = f"s{next_number}"
                next_number += 1
    return mapping


def _same(kept: Step, proposed: Step) -> bool:
    """The same step, by what it does rather than by its number."""
    if kept.tool != proposed.tool:
        return False
    if kept.tool is None or not (kept.args or proposed.args):
        return kept.description.strip() == proposed.description.strip()
    return (kept.args or {}) == (proposed.args or {})


def _kept_step(current: Step, proposed: Step, sentence: str, ids: set[str]) -> Step:
    """``current`` with the changes of ``proposed`` that ``sentence`` asks for."""
    step = copied(current)
    kept_deps = [dep for dep in current.depends_on if dep in ids]
    new_deps = [dep for dep in proposed.depends_on if dep in ids]
    if not _points_at(sentence, current, proposed):
        step.depends_on = list(dict.fromkeys([*kept_deps, *new_deps]))
        return step
    for field in _TEXT_FIELDS:
        if getattr(proposed, field):
            setattr(step, field, getattr(proposed, field))
    step.condition = proposed.condition
    step.args = _merged_args(current.args, proposed.args, sentence)
    step.depends_on = new_deps
    return step


def _merged_args(current: dict[str, Any] | None, proposed: dict[str, Any] | None,
                 sentence: str) -> dict[str, Any] | None:
    """The proposed arguments, plus every current one the model left out (or gave null)
    that the sentence does not name."""
    if current is None:
        return proposed
    said = _words(sentence)
    merged = {name: value for name, value in (proposed or {}).items() if value is not None}
    for name, value in current.items():
        if name not in merged and name.lower() not in said:
            merged[name] = value
    return merged


def _points_at(sentence: str, current: Step, proposed: Step) -> bool:
    """True when ``sentence`` names the step, its tool, an argument or value of it, or
    shares a term with its description."""
    said = _words(sentence)
    named: set[str] = {current.id.lower()}
    if current.tool:
        named |= {current.tool.lower(), *_telling(current.tool.lower().split("_"))}
    for args in (current.args, proposed.args):
        for name, value in (args or {}).items():
            named.add(name.lower())
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                named |= {str(value).strip().lower(), *_telling(_words(str(value)))}
    if named & said:
        return True
    return bool(set(_telling(terms(current.description))) & terms(sentence))


def _telling(words: Iterable[str]) -> list[str]:
    """The words that point at something: Chinese terms, numbers and longer English words."""
    return [word for word in words
            if not word.isascii() or word.isdigit() or len(word) >= _MIN_LATIN_TERM]


def _words(text: str) -> set[str]:
    """Lower-cased words of ``text``, with argument-like names kept whole (``due_date``)."""
    return set(re.findall(r"[\w.]+", text.lower())) | set(re.findall(r"\w+", text.lower()))
