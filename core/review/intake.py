"""A plan sent for review by another agent, read and checked before anything is stored.

The body is JSON: ``plan`` (PlanBoard's plan JSON, a list of steps with ``tool``, ``args``
and ``depends_on``, or Markdown text whose items become a chain), and optionally
``tools`` (their JSON schemas and side effects, :mod:`core.review.declared_tools`),
``agent`` (its name). Steps the agent named its own way (``search``,
``3``) get PlanBoard's ids (``s1``, ``s2``, …) and keep their names in ``step_names``, so
that the agent's events may name a step either way. Anything that cannot be taken is an
:class:`core.errors.InputError` with one line saying what to change: malformed JSON, a
body past :data:`MAX_BODY_BYTES`, more steps than :func:`core.plan.size.max_steps`, a
dependency on no step, a cycle, arguments the declared schemas refuse, a ``callback_url``
(PlanBoard calls no agent back: the agent waits on the decision's long poll).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.base.messages import msg
from core.base.step_id import step_number
from core.errors import InputError, InputTooLargeError, MalformedInputError
from core.plan.model import Plan, Step
from core.plan.size import SIZE_ENV, max_steps
from core.review.declared_tools import declared_problems, read_declared_tools
from core.review.markdown import markdown_steps

__all__ = ["MAX_BODY_BYTES", "Submission", "check_body_size", "read_body", "read_submission"]

MAX_BODY_BYTES = 1_000_000  # a plan of the most steps a run takes, with schemas, fits in it
_MAX_NAME = 200
_STEP_TEXTS = ("success_criteria", "condition")


@dataclass(frozen=True)
class Submission:
    """A plan sent for review, read: the plan (every step pending), the declared tools,
    the agent's name and the agent's own name of each step."""

    plan: Plan
    tools: list[dict[str, Any]] = field(default_factory=list)
    agent: str = ""
    step_names: dict[str, str] = field(default_factory=dict)


def check_body_size(size: int) -> None:
    """InputTooLargeError when a body of ``size`` bytes passes :data:`MAX_BODY_BYTES`."""
    if size > MAX_BODY_BYTES:
        raise InputTooLargeError(msg("review.body_too_large", size=size, most=MAX_BODY_BYTES))


def read_body(body: bytes) -> dict[str, Any]:
    """The JSON object of a request body; MalformedInputError for anything else
    (InputTooLargeError past the limit)."""
    check_body_size(len(body))
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise MalformedInputError(msg("review.not_json", detail=_short(exc))) from None
    if not isinstance(data, dict):
        raise MalformedInputError(msg("review.not_object", kind=_kind(data)))
    return data


def read_submission(data: dict[str, Any]) -> Submission:
    """The submission in ``data`` (a body's JSON object), checked whole; InputError."""
    agent = _text(data.get("agent"), "agent", _MAX_NAME) or ""
    if data.get("callback_url") is not None:
        raise InputError(msg("review.no_callback"))
    tools = read_declared_tools(data.get("tools"))
    raw = data.get("plan", data.get("steps"))
    if raw is None:
        raise InputError(msg("review.no_plan"))
    goal = _text(data.get("goal"), "goal", 10_000) or ""
    extra: dict[str, Any] = {}
    if isinstance(raw, str):
        goal_of_text, descriptions = markdown_steps(raw)
        if not descriptions:
            raise InputError(msg("review.markdown_no_items"))
        goal = goal or goal_of_text
        raw_steps: list[Any] = [{"description": text, "depends_on": [index - 1] if index else []}
                                for index, text in enumerate(descriptions)]
    elif isinstance(raw, list):
        raw_steps = raw
    elif isinstance(raw, dict):
        raw_steps, extra = _plan_fields(raw)
        goal = goal or extra.pop("goal", "")
    else:
        raise InputError(msg("review.plan_kind", kind=_kind(raw)))
    steps, names = _steps(raw_steps)
    plan = Plan(goal=goal or steps[0].description, steps=steps, **extra)
    _check(plan, tools, agent)
    return Submission(plan=plan, tools=tools, agent=agent, step_names=names)


def _plan_fields(raw: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The steps of a plan object and the plan fields a review keeps."""
    if raw.get("phases"):
        raise InputError(msg("review.bad_field", field="plan.phases",
                             detail="a plan sent for review has steps, not phases"))
    steps = raw.get("steps")
    if not isinstance(steps, list):
        raise InputError(msg("review.bad_field", field="plan.steps", detail="not a list"))
    extra: dict[str, Any] = {"goal": _text(raw.get("goal"), "plan.goal", 10_000) or ""}
    done = _text(raw.get("definition_of_done"), "plan.definition_of_done", 10_000)
    if done:
        extra["definition_of_done"] = done
    constraints = raw.get("constraints") or []
    if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
        raise InputError(msg("review.bad_field", field="plan.constraints",
                             detail="not a list of texts"))
    extra["constraints"] = constraints
    if raw.get("language") in ("en", "zh"):
        extra["language"] = raw["language"]
    return steps, extra


def _steps(raw_steps: list[Any]) -> tuple[list[Step], dict[str, str]]:
    """The steps, with PlanBoard's ids, and the agent's own name of each renamed step."""
    if not raw_steps:
        raise InputError(msg("plan.no_steps"))
    most = max_steps()
    if len(raw_steps) > most:
        raise InputTooLargeError(msg("review.too_many_steps", count=len(raw_steps), most=most,
                                     variable=SIZE_ENV))
    for index, raw in enumerate(raw_steps):
        if not isinstance(raw, dict):
            raise InputError(msg("review.bad_field", field=f"steps[{index}]",
                                 detail="not an object"))
    given = [_given_id(raw, index) for index, raw in enumerate(raw_steps)]
    for name in given:
        if given.count(name) > 1:
            raise InputError(msg("review.duplicate_step", step=name))
    keep = all(step_number(name) is not None for name in given)
    ids = {name: name if keep else f"s{index + 1}" for index, name in enumerate(given)}
    steps = [_step(raw, name, ids, index)
             for index, (raw, name) in enumerate(zip(raw_steps, given, strict=True))]
    named = any("id" in raw or "name" in raw for raw in raw_steps)
    names = {ids[name]: name for name in given} if named and not keep else {}
    return steps, names


def _given_id(raw: dict[str, Any], index: int) -> str:
    """The step's own id (its index from 0 when it has none)."""
    value = raw.get("id", raw.get("name"))
    if value is None:
        return str(index)
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise InputError(msg("review.bad_field", field=f"steps[{index}].id",
                             detail="not a text or a number"))
    return str(value).strip()[:_MAX_NAME]


def _step(raw: dict[str, Any], name: str, ids: dict[str, str], index: int) -> Step:
    """The step the agent calls ``name`` (``ids``: PlanBoard's id of each agent's name)."""
    where = f"steps[{index}]"
    tool = _text(raw.get("tool"), f"{where}.tool", _MAX_NAME)
    args = raw.get("args", raw.get("arguments"))
    if args is not None and not isinstance(args, dict):
        raise InputError(msg("review.bad_field", field=f"{where}.args", detail="not an object"))
    depends = raw.get("depends_on") or []
    if not isinstance(depends, list):
        raise InputError(msg("review.bad_field", field=f"{where}.depends_on",
                             detail="not a list"))
    depends_on = []
    for dependency in depends:
        if isinstance(dependency, bool) or str(dependency).strip() not in ids:
            raise InputError(msg("review.unknown_dependency", step=name,
                                 dependency=json.dumps(dependency, ensure_ascii=False)))
        depends_on.append(ids[str(dependency).strip()])
    texts = {key: _text(raw.get(key), f"{where}.{key}", 10_000) for key in _STEP_TEXTS}
    description = _text(raw.get("description"), f"{where}.description", 10_000)
    return Step(id=ids[name], description=description or tool or "", tool=tool, args=args,
                depends_on=depends_on, **{k: v for k, v in texts.items() if v})


def _check(plan: Plan, tools: list[dict[str, Any]], agent: str) -> None:
    """InputError naming the plan's first problem (and how many more there are)."""
    problems = declared_problems(plan, tools, agent)
    if problems:
        more = msg("review.more_problems", count=len(problems) - 1) if len(problems) > 1 else ""
        raise InputError(msg("review.problems", first=problems[0], more=more))


def _text(value: Any, where: str, most: int) -> str | None:
    """``value`` as stripped text (None when absent or empty); InputError when it is not
    text or is longer than ``most`` characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(msg("review.bad_field", field=where, detail="not text"))
    if len(value) > most:
        raise InputError(msg("review.bad_field", field=where,
                             detail=f"{len(value):,} characters, more than {most:,}"))
    return value.strip() or None


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean",
            type(None): "null"}.get(type(value), "number")


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
