"""Turn a planning reply (canonical JSON or any seed format, however wrapped) into a Plan."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.base.language import LANGUAGES, Language
from core.errors import PlanParseError
from core.plan.model import Phase, Plan, Step
from core.plan.reply_json import extract_json, without_lone_surrogates
from core.plan.step_ids import (
    assign_ids,
    rename_arg_refs,
    rename_condition_refs,
    step_number,
)

__all__ = ["extract_json", "parse_plan"]

_NO_TOOL = {"", "null", "none", "nil", "n/a", "na", "-", "no tool", "无"}

_ID_KEYS = ("id", "step_id", "stepId", "stepID", "step", "step_number", "number", "index")
_DESCRIPTION_KEYS = ("description", "desc", "task", "step_description", "action", "title",
                     "name", "instruction")
_TOOL_KEYS = ("tool", "toolHint", "tool_hint", "tool_name", "toolName", "tools_needed",
              "tools", "function")
_ARGS_KEYS = ("args", "arguments", "parameters", "params", "tool_args", "tool_input")
_DEPENDS_KEYS = ("depends_on", "dependsOn", "dependencies", "deps", "after")
_SUCCESS_KEYS = ("success_criteria", "successCriteria", "done_when", "expected")
_CONDITION_KEYS = ("condition", "when", "if")
_PHASE_KEYS = ("phase", "phase_id", "phaseId", "stage")
_PHASE_TITLE_KEYS = ("title", "name", "phase", "stage")
_PHASE_GOAL_KEYS = ("goal", "description", "objective")
_PHASE_DONE_KEYS = ("done_when", "doneWhen", "definition_of_done", "success_criteria")


def parse_plan(text: str, goal: str, language: Language | None = None) -> Plan:
    """Parse ``text`` into a Plan for ``goal`` in the request's ``language`` (None: the one
    the text names, else the one :class:`Plan` decides from the goal); PlanParseError says
    what was wrong (keeps raw).

    Linear in the size of ``text`` whatever it holds. Ids are never rebound silently: an id
    that is not ``sN`` or is used twice, and a reference that names no step or two, is kept
    visible as a warning or left for :meth:`Plan.validate` to report.
    """
    text = without_lone_surrogates(text or "")
    data = extract_json(text)
    meta, items = _split(data, text)
    problems: list[str] = []
    phases, items = _read_phases(meta.get("phases"), items, problems)
    raw_steps = [_read_step(item, position, problems) for position, item in enumerate(items)]
    if problems:
        raise PlanParseError("the plan is malformed: " + "; ".join(problems[:10]), raw=text)
    ids, resolve, id_warnings = assign_ids([raw.raw_id for raw in raw_steps])
    chain = not any(raw.depends is not None for raw in raw_steps)
    steps: list[Step] = []
    for position, (raw, new_id) in enumerate(zip(raw_steps, ids, strict=True)):
        if chain:
            depends = [ids[position - 1]] if position else []
        else:
            depends = list(dict.fromkeys(resolve(dep) for dep in raw.depends or []))
        steps.append(
            Step(
                id=new_id,
                description=raw.description,
                tool=raw.tool,
                args=rename_arg_refs(raw.args, resolve),
                depends_on=depends,
                success_criteria=raw.success_criteria,
                condition=rename_condition_refs(raw.condition, resolve),
                phase=raw.phase,
            )
        )
    _wire_synthesis(steps, chain and not phases)
    return Plan(
        goal=goal.strip() or _text(meta.get("goal")),
        language=language or _language(meta.get("language")),
        definition_of_done=_text(meta.get("definition_of_done") or meta.get("definitionOfDone")),
        constraints=_constraints(meta.get("constraints")),
        phases=phases,
        steps=steps,
        warnings=[
            *id_warnings,
            *(w.replace("{step}", new_id) for raw, new_id in zip(raw_steps, ids, strict=True)
              for w in raw.warnings),
        ],
    )

def _split(data: Any, raw: str) -> tuple[dict[str, Any], list[Any]]:
    """(plan-level fields, step items) of any accepted shape."""
    meta: dict[str, Any] = {}
    while isinstance(data, dict) and "steps" not in data and isinstance(
        data.get("plan"), (dict, list)
    ):
        meta = {**data, **meta}
        data = data["plan"]
    if isinstance(data, list):
        items = data
    elif isinstance(data, dict) and isinstance(data.get("steps"), list):
        meta = {**data, **meta}
        items = data["steps"]
    elif isinstance(data, dict) and isinstance(data.get("phases"), list):
        meta = {**data, **meta}  # a phase plan: its steps, if any, are inside its phases
        items = []
    elif isinstance(data, dict):
        keys = ", ".join(sorted(data)) or "none"
        raise PlanParseError(
            f'the JSON object has no "steps" list (its keys are: {keys}); '
            'put the steps in "steps"',
            raw=raw,
        )
    else:
        raise PlanParseError(
            f"the JSON is {_kind(data)}, not a plan; send an object with \"steps\"",
            raw=raw,
        )
    if not items and not (isinstance(meta.get("phases"), list) and meta["phases"]):
        raise PlanParseError('the plan has no steps; "steps" must list at least one', raw=raw)
    return meta, items


def _read_phases(value: Any, items: list[Any], problems: list[str]
                 ) -> tuple[list[Phase], list[Any]]:
    """The phases of a plan, and its step items with those listed inside a phase
    (``{"id": "p1", "steps": [...]}``) added, each naming that phase."""
    if value is None:
        return [], items
    if not isinstance(value, list):
        problems.append(f'"phases" is {_kind(value)}, not a list')
        return [], items
    phases: list[Phase] = []
    nested: list[Any] = []
    for position, item in enumerate(value):
        if not isinstance(item, dict):
            problems.append(f"phase {position + 1} is {_kind(item)}, not an object")
            continue
        phase_id = _phase_id(item.get("id", item.get("phase_id", position + 1)))
        depends = _read_depends(_first(item, _DEPENDS_KEYS)[1])
        phases.append(Phase(
            id=phase_id, title=_text(_first(item, _PHASE_TITLE_KEYS)[1]),
            goal=_text(_first(item, _PHASE_GOAL_KEYS)[1]),
            depends_on=list(dict.fromkeys(_phase_id(dep) for dep in depends)),
            done_when=_text(_first(item, _PHASE_DONE_KEYS)[1]) or None))
        for step in item.get("steps") or []:
            nested.append({**step, "phase": phase_id} if isinstance(step, dict) else step)
    return phases, [*items, *nested]


def _phase_id(value: Any) -> str:
    """A phase id as written, or ``pN`` for a bare number (``2``, ``"2"``)."""
    text = _text(value)
    return f"p{text}" if text.isdigit() else text

# ---- reading one step ---------------------------------------------------------------------


@dataclass
class _RawStep:
    raw_id: Any
    description: str
    tool: str | None
    args: dict[str, Any] | None
    depends: list[Any] | None
    success_criteria: str | None
    condition: str | None
    warnings: list[str] = field(default_factory=list)
    phase: str | None = None


def _first(item: dict[str, Any], keys: tuple[str, ...]) -> tuple[bool, Any]:
    for key in keys:
        if key in item:
            return True, item[key]
    return False, None


def _read_step(item: Any, position: int, problems: list[str]) -> _RawStep:
    label = f"step {position + 1}"
    if isinstance(item, str):
        return _RawStep(None, item.strip(), None, None, None, None, None)
    if not isinstance(item, dict):
        problems.append(f"{label} is {_kind(item)}, not an object")
        return _RawStep(None, "", None, None, None, None, None)
    _, raw_id = _first(item, _ID_KEYS)
    _, description = _first(item, _DESCRIPTION_KEYS)
    if isinstance(raw_id, str) and description is None and step_number(raw_id) is None:
        raw_id, description = None, raw_id  # {"step": "look up the order"}
    if isinstance(raw_id, str) and not raw_id.strip():
        raw_id = None
    raw = _RawStep(
        raw_id=raw_id if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None,
        description=_text(description),
        tool=None,
        args=None,
        depends=None,
        success_criteria=_text(_first(item, _SUCCESS_KEYS)[1]) or None,
        condition=_text(_first(item, _CONDITION_KEYS)[1]) or None,
    )
    raw.tool = _read_tool(_first(item, _TOOL_KEYS)[1], label, raw.warnings, problems)
    raw.args = _read_args(_first(item, _ARGS_KEYS)[1], label, problems)
    has_depends, depends = _first(item, _DEPENDS_KEYS)
    if has_depends:
        raw.depends = _read_depends(depends)
    phase = _first(item, _PHASE_KEYS)[1]
    raw.phase = _phase_id(phase) if phase is not None and _text(phase) else None
    return raw


def _read_tool(value: Any, label: str, warnings: list[str], problems: list[str]) -> str | None:
    if isinstance(value, list):
        names = [str(v).strip() for v in value if v is not None and str(v).strip()]
        names = [n for n in names if n.lower() not in _NO_TOOL]
        if len(names) > 1:
            warnings.append(  # "{step}" becomes the step's final id
                f"{{step}} lists several tools ({', '.join(names)}); it uses {names[0]}"
            )
        return names[0] if names else None
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dict):  # {"name": "calculate", "args": {...}}
        value = value.get("name")
        return None if value is None else str(value).strip() or None
    if not isinstance(value, str):
        problems.append(f"{label} names its tool with {_kind(value)}; use a string")
        return None
    name = value.strip()
    return None if name.lower() in _NO_TOOL else name


def _read_args(value: Any, label: str, problems: list[str]) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped:
            return None
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            problems.append(f"{label} args is text, not a JSON object: {stripped[:60]!r}")
            return None
    if not isinstance(value, dict):
        problems.append(f"{label} args must be a JSON object, not {_kind(value)}")
        return None
    return value


def _read_depends(value: Any) -> list[Any]:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [v for v in value if v is not None and v != ""]
    if isinstance(value, str) and "," in value:
        return [part.strip() for part in value.split(",") if part.strip()]
    return [value]

def _wire_synthesis(steps: list[Step], chain: bool) -> None:
    """A last tool-less step with no dependencies (or in a chain) reads every earlier step."""
    if len(steps) < 2 or steps[-1].tool is not None:
        return
    last = steps[-1]
    if chain or not last.depends_on:
        last.depends_on = [s.id for s in steps[:-1]]


# ---- small helpers ------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "null" if value is None else f"a {type(value).__name__}"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return "; ".join(_text(v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def _constraints(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [_text(v) for v in value if _text(v)]
    return [_text(value)]


def _language(value: Any) -> Language | None:
    return value if value in LANGUAGES else None
