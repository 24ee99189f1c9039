"""Plan templates: a plan whose values taken from its request become named parameters.

A tool argument whose literal value appears in the request (a number, an id, a name) is a
parameter named after the argument; wherever that value is written in the plan (arguments,
goal, descriptions, criteria, conditions) and in the request it becomes ``{{name}}``.
Filling a template writes the given values back and yields a fresh plan, ready for review.
Step references (``{{s1.field}}``) are left alone: a parameter is never named ``sN``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from core.base.messages import msg
from core.base.step_id import STEP_ID
from core.errors import ConfigError
from core.plan.model import Plan

__all__ = ["Parameter", "TemplatePlan", "fill", "parameterize", "placeholder"]

ParameterKind = Literal["text", "integer", "number"]

_MIN_LITERAL = 2  # a one-character value ("1", "a") is found in almost any request
_PLACEHOLDER = re.compile(r"\{\{\s*([^\W\d]\w*)\s*\}\}")


class Parameter(BaseModel):
    """A named value of a template: the value its request held and the type its argument had."""

    name: str
    example: str
    kind: ParameterKind = "text"


class TemplatePlan(BaseModel):
    """A plan and its request with ``{{name}}`` where each parameter's value was."""

    request: str
    plan: dict[str, Any]  # the canonical JSON of the plan, placeholders in it
    parameters: list[Parameter]


def placeholder(name: str) -> str:
    """How a parameter is written in a template: ``{{name}}``."""
    return "{{" + name + "}}"


def parameterize(plan: Plan, request: str) -> TemplatePlan:
    """The template of ``plan``: every argument value found in ``request`` made a parameter.

    A value is found when it appears in the request as a whole token (not inside a longer
    number or word); the same value in several arguments is one parameter, named after the
    first argument that holds it (``name_2`` when two values share an argument name).
    """
    found: dict[str, Parameter] = {}
    for step in plan.steps:
        for argument, value in (step.args or {}).items():
            literal = _literal(value)
            if literal is None or literal in found or not _occurs(literal, request):
                continue
            found[literal] = Parameter(name=_free_name(argument, found.values()),
                                       example=literal, kind=_kind(value))
    # longer values first, so that a value inside another one does not split it
    ordered = sorted(found.values(), key=lambda p: -len(p.example))

    def swap(text: str) -> str:
        for parameter in ordered:
            text = _token(parameter.example).sub(placeholder(parameter.name), text)
        return text

    def swap_value(value: Any) -> Any:
        literal = _literal(value)
        if literal in found:  # the whole argument: a number becomes a placeholder too
            return placeholder(found[literal].name)
        return swap(value) if isinstance(value, str) else value

    return TemplatePlan(request=swap(request),
                        plan=_map_plan(plan.canonical(), swap, swap_value),
                        parameters=list(found.values()))


def fill(template: TemplatePlan, values: Mapping[str, str]) -> tuple[Plan, str]:
    """The plan and request of ``template`` with ``values`` in place of its parameters.

    Every parameter needs a value and every value a parameter (ConfigError naming the
    parameters otherwise); an argument that was a number becomes a number again.
    """
    names = [parameter.name for parameter in template.parameters]
    unknown = sorted(set(values) - set(names))
    missing = [name for name in names if name not in values]
    if unknown:
        raise ConfigError(msg("template.unknown_parameter", name=unknown[0],
                              parameters=_listed(names)))
    if missing:
        raise ConfigError(msg("template.missing_parameters", missing=", ".join(missing),
                              parameters=_listed(names)))
    typed = {p.name: _typed(p, values[p.name]) for p in template.parameters}

    def put(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: str(typed.get(m.group(1), m.group(0))), text)

    def put_value(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        whole = _PLACEHOLDER.fullmatch(value.strip())
        if whole and whole.group(1) in typed:  # a whole argument keeps its type
            return typed[whole.group(1)]
        return put(value)

    return Plan.model_validate(_map_plan(template.plan, put, put_value)), put(template.request)


def _literal(value: Any) -> str | None:
    """The text of an argument value that may be a parameter, or None."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value).strip()
    if len(text) < _MIN_LITERAL or "{{" in text:  # a reference to a step is not a value
        return None
    return text


def _kind(value: Any) -> ParameterKind:
    if isinstance(value, int):
        return "integer"
    return "number" if isinstance(value, float) else "text"


def _token(literal: str) -> re.Pattern[str]:
    """``literal`` as a whole token: no ASCII letter, digit or ``_`` right before or after.

    ASCII only, so that a value written against Chinese text ("订单12345") is still found.
    """
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(literal)}(?![A-Za-z0-9_])")


def _occurs(literal: str, text: str) -> bool:
    return bool(_token(literal).search(text))


def _free_name(argument: str, taken: Any) -> str:
    """The argument's name as a parameter name, unused so far and never a step id."""
    base = re.sub(r"\W", "_", argument).strip("_") or "value"
    if base[0].isdigit() or STEP_ID.match(base):
        base = f"value_{base}"
    names = {parameter.name for parameter in taken}
    name, number = base, 1
    while name in names:
        number += 1
        name = f"{base}_{number}"
    return name


def _typed(parameter: Parameter, value: str) -> Any:
    """``value`` as its parameter's type; ConfigError when it is not a number it must be."""
    if parameter.kind == "text":
        return value
    try:
        return int(value) if parameter.kind == "integer" else float(value)
    except ValueError:
        raise ConfigError(msg("template.not_a_number", name=parameter.name,
                              value=repr(value))) from None


def _map_plan(data: dict[str, Any], prose: Callable[[str], str],
              value: Callable[[Any], Any]) -> dict[str, Any]:
    """The canonical ``data`` with ``prose`` applied to its texts and ``value`` to every
    value inside the arguments; ids, tools and dependencies stay as they are."""
    mapped = {**data, "goal": prose(data["goal"]),
              "definition_of_done": prose(data.get("definition_of_done") or ""),
              "constraints": [prose(text) for text in data.get("constraints") or []]}
    steps = []
    for step in data["steps"]:
        step = dict(step)
        for key in ("description", "success_criteria", "condition"):
            if isinstance(step.get(key), str):
                step[key] = prose(step[key])
        if step.get("args") is not None:
            step["args"] = _map_values(step["args"], value)
        steps.append(step)
    mapped["steps"] = steps
    return mapped


def _map_values(item: Any, value: Callable[[Any], Any]) -> Any:
    if isinstance(item, dict):
        return {key: _map_values(inner, value) for key, inner in item.items()}
    if isinstance(item, list):
        return [_map_values(inner, value) for inner in item]
    return value(item)


def _listed(names: list[str]) -> str:
    return ", ".join(names) if names else "-"
