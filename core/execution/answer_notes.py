"""What the final answer must say, whatever the model wrote: what failed, why the plan
changed, what was done on the person's behalf, which part of the request no step looked
into, and what a lookup found that the answer, asked twice, still leaves out.

Each note is added only when the answer does not already say it. An answer that says an
action was taken without its id leaves the person nothing to quote, so each completed
side-effecting step whose identifiers the answer leaves out is listed: the result fields
its tool declares as identifiers (``ToolHints.id_fields``), or else those called ``id`` or
``*_id``, that are not among its own arguments (an id the person gave is not news), with
the result's ``status`` when it has one. A part of a multi-part request that no step of
the plan covers (core.planning.checks.coverage, the check that warned before the run) is
named: a small model's answer step, given only the time in Tokyo, wrote a commit message
for the other half of the question that no step had looked up. An expression the answer
states with a calculation's result, where the calculation computed another expression of
the same numbers, is named with its own value: a small model's calculation dropped the
request's parentheses, and its answer restated the request's expression with that result.
A value the request asks for by name that a lookup found and the answer does not state
(core.execution.asked_for) is quoted under it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from core.base.expressions import ExpressionError, calculate
from core.base.messages import msg, render
from core.base.text import preview
from core.execution.asked_for import unstated_values
from core.execution.context import render_value
from core.plan.approval import has_side_effect
from core.plan.model import Plan, Step
from core.planning.checks import check_context
from core.planning.checks.coverage import uncovered_clauses
from core.tools.registry import ToolRegistry

__all__ = ["asked_for_note", "failure_note", "left_out_note", "other_expression_note",
           "receipt_note", "uncovered_note", "with_required_notes"]

_LEFT_OUT_CHARS = 400  # of a result the answer left out, quoted under it
# an arithmetic expression with at least one operator between numbers, parentheses allowed
_EXPRESSION = re.compile(r"[(\d][\d.\s()]*(?:[-+*/×÷]\s*[(\d][\d.\s()]*)+")
_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]*\d{4,}[A-Za-z0-9]*")


def with_required_notes(answer: str, plan: Plan, *, unmentioned: list[Step],
                        changes: Iterable[str], registry: ToolRegistry,
                        weak_models: bool) -> str:
    """``answer`` followed by what it leaves out: the ``unmentioned`` failures, the reasons
    the plan ``changes``d, the side effects' identifiers, and, where the checks for
    ``weak_models`` run (the coverage check is one), the parts of the request no step
    covered, and an expression stated with the result of another."""
    if unmentioned:
        answer = f"{answer}\n\n{failure_note(plan, unmentioned)}".strip()
    notes = [note for note in dict.fromkeys(changes) if not _says(answer, note)]
    if notes:
        title = render(msg("answer.plan_adjusted"), plan.language)
        answer = "\n\n".join([answer, *(title + note for note in notes)]).strip()
    receipts = receipt_note(plan, answer, registry)
    answer = f"{answer}\n\n{receipts}" if receipts else answer
    uncovered = uncovered_note(plan, registry) if weak_models else ""
    answer = f"{answer}\n\n{uncovered}" if uncovered else answer
    other = other_expression_note(answer, plan)
    answer = f"{answer}\n\n{other}" if other else answer
    asked = asked_for_note(answer, plan, registry)
    return f"{answer}\n\n{asked}" if asked else answer


def asked_for_note(answer: str, plan: Plan, registry: ToolRegistry) -> str:
    """A line for each lookup whose values the request asks for and ``answer`` leaves
    out (core.execution.asked_for), quoting them ("" if none)."""
    return "\n".join(render(msg(
        "answer.asked_for", step=step.id, description=step.description,
        fields=", ".join(dict.fromkeys(field for field, _ in requested)),
        found="; ".join(f"{field} {value}" for field, value in requested)), plan.language)
        for step, requested in unstated_values(answer, plan, registry))


def other_expression_note(answer: str, plan: Plan) -> str:
    """A line for each expression the answer states with a calculation's result although
    that calculation computed another expression of the same numbers ("" if none): a
    calculation that dropped the request's parentheses, retold as the request's."""
    computed = [(step, result["expression"], result["value"]) for step in plan.steps
                if step.status == "completed" and isinstance(result := step.result, dict)
                and isinstance(result.get("expression"), str)
                and isinstance(result.get("value"), (int, float))]
    lines = []
    for said in dict.fromkeys(match.group(0).strip() for match in _EXPRESSION.finditer(answer)):
        for step, expression, value in computed:
            right = _value(said)
            if (right is not None and _numbers(said) == _numbers(expression)
                    and _plain(said) != _plain(expression) and right != value
                    and _said_as_number(value).search(answer)):
                lines.append(render(msg("answer.other_expression", said=said, value=value,
                                        step=step.id, computed=expression, right=right),
                                    plan.language))
    return "\n".join(lines)


def _value(expression: str) -> int | float | None:
    try:
        return calculate(_plain(expression))
    except ExpressionError:
        return None


def _plain(expression: str) -> str:
    return expression.replace("×", "*").replace("÷", "/").replace(" ", "")


def _numbers(expression: str) -> list[str]:
    return sorted(re.findall(r"\d+(?:\.\d+)?", expression))


def _said_as_number(value: int | float) -> re.Pattern[str]:
    shown = str(int(value)) if float(value).is_integer() else str(value)
    return re.compile(rf"(?<![\d.]){re.escape(shown)}(?![\d]|\.\d)")


def uncovered_note(plan: Plan, registry: ToolRegistry) -> str:
    """A line for each part of the plan's request that no step covers ("" if none), in
    the language of the request."""
    context = check_context(plan.goal, registry, "draft", language=plan.language)
    return "\n".join(render(msg("answer.uncovered", clause=clause), plan.language)
                     for clause in uncovered_clauses(plan.goal, plan, context))


def left_out_note(plan: Plan, left_out: list[Step]) -> str:
    """A line per step whose result the answer leaves out (core.execution.left_out),
    quoting what it found."""
    return "\n\n".join(render(msg(
        "answer.left_out", step=step.id, description=step.description,
        result=preview(render_value(step.result), _LEFT_OUT_CHARS)), plan.language)
        for step in left_out)


def failure_note(plan: Plan, failed: list[Step]) -> str:
    """A short list of the steps that failed, in the language of the request."""
    lang = plan.language
    return "\n".join([render(msg("answer.not_done"), lang),
                      *(f"- {s.id} ({s.description}): {render(s.error_message or s.error, lang)}"
                        for s in failed)])


def receipt_note(plan: Plan, answer: str, registry: ToolRegistry) -> str:
    """The lines naming the side effects' identifiers that ``answer`` leaves out ("" if
    none), in the language of the request."""
    lines = []
    for step in plan.steps:
        if step.status != "completed" or not has_side_effect(step, registry):
            continue
        declared = registry.get(step.tool).hints.id_fields if step.tool in registry else ()
        unnamed = [f"{key} {value}" for key, value in _identifiers(step, declared)
                   if value not in answer]
        if not unnamed:
            continue
        status = step.result.get("status")  # a dict: it held the identifiers
        told = ", ".join(unnamed) + (f" ({status})" if status else "")
        lines.append(render(msg("answer.receipt_line", step_id=step.id,
                                description=step.description, told=told), plan.language))
    if not lines:
        return ""
    return "\n".join([render(msg("answer.receipts"), plan.language), *lines])


def _says(answer: str, reason: str) -> bool:
    """True when ``answer`` already says ``reason``: it names every id or number in it."""
    names = _IDENTIFIER.findall(reason)
    return all(n in answer for n in names) if names else reason in answer


def _identifiers(step: Step, declared: tuple[str, ...]) -> list[tuple[str, str]]:
    result: Any = step.result
    if not isinstance(result, dict):
        return []
    given = set(step.args or {})
    return [(key, str(value)) for key, value in result.items()
            if (key in declared if declared else key == "id" or key.endswith("_id"))
            and key not in given
            and isinstance(value, str | int) and str(value)]
