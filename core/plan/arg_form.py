"""A step's fields as a form: tool schema -> field specs, form values -> args, live checks.

The step panel of the dashboard draws one widget per :class:`FieldSpec` (built from the
tool's JSON schema by :func:`field_specs`), shows each argument with :func:`shown_value`
and reads an edited widget back with :func:`read_value`. An argument may instead read an
earlier result (``{{s1.code}}``): :func:`reference_options` offers the references
the step's dependencies make available. The checks under each field come from
``Plan.validate`` itself (:func:`arg_problems`, :func:`condition_problems`), so a field
shows exactly the sentence the plan's problem list shows, never a second wording of a
rule. Nothing here knows about widgets.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from core.base.expressions import (
    RESULT_STEP,
    ExpressionError,
    criteria_condition,
    parse_condition,
)
from core.base.messages import Message, json_error, msg
from core.plan.edit import update_step
from core.plan.model import REFERENCE, Plan

if TYPE_CHECKING:
    from core.tools.registry import ToolRegistry

__all__ = [
    "OMIT",
    "FieldKind",
    "FieldSpec",
    "ReadBack",
    "arg_problems",
    "condition_problems",
    "criteria_problem",
    "field_specs",
    "is_reference",
    "read_value",
    "reference_options",
    "set_arg",
    "set_tool",
    "shown_value",
]

FieldKind = Literal["string", "integer", "number", "boolean", "enum", "json"]
OMIT: Any = object()
"""Read back from an empty field: the argument is left out (the tool's default applies)."""

_WHOLE_REFERENCE = re.compile(rf"^{REFERENCE.pattern}$")
_CONDITION_FIELD = re.compile(r"\b(s\d+)\.(\w+)")
_SIMPLE = {"string", "integer", "number", "boolean"}
_STAND_IN = "…"  # an argument given any value: what its absence alone causes is told apart


@dataclass(frozen=True)
class FieldSpec:
    """One argument of a step as a form field."""

    name: str
    kind: FieldKind
    required: bool = False
    default: Any = OMIT
    description: str = ""
    options: tuple[Any, ...] = ()
    json_ok: bool = False
    """A text field that also takes a JSON list or object (``"a" or ["a", "b"]``)."""
    known: bool = True
    """False for an argument the tool does not take (kept so that it can be seen and cleared)."""

    @property
    def has_default(self) -> bool:
        """True when the schema gives a default (shown as the field's placeholder)."""
        return self.default is not OMIT


@dataclass(frozen=True)
class ReadBack:
    """A form field read back: the argument's value (or OMIT), or why it cannot be read."""

    value: Any = OMIT
    error: Message | None = None


def field_specs(parameters: dict[str, Any], args: dict[str, Any] | None = None
                ) -> list[FieldSpec]:
    """The fields of a tool's parameter schema in schema order, then any argument it lacks."""
    properties: dict[str, Any] = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    specs = [_spec(name, _resolve(prop, parameters), name in required, parameters)
             for name, prop in properties.items()]
    specs += [FieldSpec(name=name, kind="json", known=False)
              for name in (args or {}) if name not in properties]
    return specs


def _spec(name: str, prop: dict[str, Any], required: bool, root: dict[str, Any]) -> FieldSpec:
    kind, options, json_ok = _kind(prop, root)
    return FieldSpec(name=name, kind=kind, required=required,
                     default=prop.get("default", OMIT), description=prop.get("description", ""),
                     options=options, json_ok=json_ok)


def _kind(prop: dict[str, Any], root: dict[str, Any]) -> tuple[FieldKind, tuple[Any, ...], bool]:
    """The widget kind of a schema, its choices, and whether its text may be JSON."""
    if "enum" in prop or "const" in prop:
        return "enum", tuple(prop.get("enum") or [prop.get("const")]), False
    branches = prop.get("anyOf") or prop.get("oneOf")
    types = prop.get("type")
    if branches is None and isinstance(types, list):
        branches = [{"type": one} for one in types]
    if branches is not None:
        real = [_resolve(b, root) for b in branches if b.get("type") != "null"]
        if len(real) == 1:  # Optional[X]: X's widget (left empty when there is no value)
            return _kind(real[0], root)
        if any(b.get("type") == "string" for b in real):  # str | list[str]: text or JSON
            return "string", (), True
        return "json", (), False
    if types in _SIMPLE:
        return types, (), False
    if types is None and not prop.get("properties") and not prop.get("items"):
        return "string", (), True  # any value: text, or JSON for a list or an object
    return "json", (), False


def _resolve(prop: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """A ``{"$ref": "#/$defs/X"}`` schema replaced by the definition (an enum class's); the
    draft-07 ``#/definitions/X`` that other servers' schemas use too."""
    ref = prop.get("$ref", "")
    for prefix, key in (("#/$defs/", "$defs"), ("#/definitions/", "definitions")):
        if ref.startswith(prefix):
            found = (root.get(key) or {}).get(ref.removeprefix(prefix), {})
            return {**found, **{k: v for k, v in prop.items() if k != "$ref"}}
    return prop


def is_reference(value: Any) -> bool:
    """True when ``value`` is exactly one reference to an earlier result (``{{s1.x}}``)."""
    return isinstance(value, str) and bool(_WHOLE_REFERENCE.match(value.strip()))


def shown_value(spec: FieldSpec, value: Any = OMIT) -> Any:
    """The argument ``value`` as the field's widget holds it (OMIT: the empty widget)."""
    absent = value is OMIT or value is None
    if spec.kind in ("integer", "number"):
        return None if absent or is_reference(value) else _number(value)
    if spec.kind == "boolean":
        return bool(spec.default) if absent or not isinstance(value, bool) else value
    if spec.kind == "enum":
        return value if not absent and value in spec.options else None
    if absent:
        return ""
    if isinstance(value, str) and spec.kind == "string":
        return value
    return json.dumps(value, ensure_ascii=False)


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return int(number) if number.is_integer() else number


def read_value(spec: FieldSpec, raw: Any) -> ReadBack:
    """A widget's value read back as the argument's value (OMIT when the field is empty)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return ReadBack()
    if spec.kind == "integer":
        number = _number(raw)
        return ReadBack(int(number) if isinstance(number, float) and number.is_integer()
                        else number)
    if spec.kind in ("number", "boolean", "enum"):
        return ReadBack(raw)
    text = str(raw).strip() if spec.kind == "json" or spec.json_ok else str(raw)
    if spec.kind == "string" and not (spec.json_ok and text[:1] in "[{"):
        return ReadBack(text)
    try:
        return ReadBack(json.loads(text))
    except json.JSONDecodeError as exc:
        if spec.kind == "string":  # text that merely starts like JSON: keep it as text
            return ReadBack(text)
        return ReadBack(error=msg("edit.field_not_json", field=spec.name,
                                  error=json_error(exc)))


def reference_options(plan: Plan, step_id: str, name: str) -> list[str]:
    """References an argument ``name`` of ``step_id`` may take from the step's dependencies.

    For each dependency: its field of the same name (a lookup's ``code`` usually feeds
    the next step's argument of that name), the fields the
    plan already reads from it (in references and conditions) or that its result holds,
    then its whole result.
    """
    ids = set(plan.ids())
    step = plan.step(step_id)
    options: list[str] = []
    for dep in step.depends_on:
        if dep not in ids or dep == step_id:
            continue
        fields = [name, *_fields_read(plan, dep)]
        result = plan.step(dep).result
        if isinstance(result, dict):
            fields += [str(key) for key in result]
        for field in fields:
            option = f"{{{{{dep}.{field}}}}}"
            if option not in options:
                options.append(option)
        options.append(f"{{{{{dep}}}}}")
    return options


def _fields_read(plan: Plan, dep: str) -> list[str]:
    """Fields of ``dep``'s result that the plan reads (``{{s1.x}}`` or ``s1.x`` in a condition)."""
    fields: list[str] = []
    for step in plan.steps:
        for value in (step.args or {}).values():
            for match in REFERENCE.finditer(value if isinstance(value, str) else ""):
                path = match.group(2)
                if match.group(1) == dep and path.startswith("."):
                    fields.append(re.split(r"[.\[]", path[1:], maxsplit=1)[0])
        fields += [field for sid, field in _CONDITION_FIELD.findall(step.condition or "")
                   if sid == dep]
    return list(dict.fromkeys(fields))


def set_arg(plan: Plan, step_id: str, name: str, value: Any) -> Plan:
    """A copy of ``plan`` whose step ``step_id`` has argument ``name`` set (OMIT: removed)."""
    args = dict(plan.step(step_id).args or {})
    if value is OMIT:
        args.pop(name, None)
    else:
        args[name] = value
    return update_step(plan, step_id, args=args or None)


def set_tool(plan: Plan, step_id: str, tool: str | None, registry: ToolRegistry
             ) -> tuple[Plan, list[Message]]:
    """A copy of ``plan`` with ``step_id`` using ``tool`` (None: reasoning), plus notes.

    Arguments the new tool also takes are kept; the others are removed, and a note says
    which (undo brings them back).
    """
    args = plan.step(step_id).args or {}
    taken = set((registry.get(tool).parameters.get("properties") or {})
                if tool is not None and tool in registry else ())
    kept = {name: value for name, value in args.items() if name in taken}
    dropped = [name for name in args if name not in kept]
    changed = update_step(plan, step_id, tool=tool, args=kept or None)
    if not dropped:
        return changed, []
    names = ", ".join(dropped)
    new = tool or msg("lesson.reasoning_step")
    return changed, [msg("edit.tool_changed", step=step_id, tool=new, arguments=names)]


def arg_problems(plan: Plan, registry: ToolRegistry | None, step_id: str, name: str, *,
                 can_infer: bool = True) -> list[Message]:
    """The plan's problems that argument ``name`` of ``step_id`` causes (validate's words).

    An argument left out causes the problem that leaving it out does: with ``can_infer``
    False (no model to fill it in), a required one's is that the step misses it.
    """
    args = plan.step(step_id).args or {}
    if args.get(name) is None:
        given = set_arg(plan, step_id, name, _STAND_IN)
        return _added(plan, given, registry, can_infer=can_infer)
    alone = update_step(plan, step_id, args={name: args[name]})
    without = update_step(plan, step_id, args=None)
    return _added(alone, without, registry)


def condition_problems(plan: Plan, registry: ToolRegistry | None, step_id: str
                       ) -> list[Message]:
    """The plan's problems that the condition of ``step_id`` causes (validate's words)."""
    without = update_step(plan, step_id, condition=None)
    return _added(plan, without, registry)


def _added(plan: Plan, baseline: Plan, registry: ToolRegistry | None, *,
           can_infer: bool = True) -> list[Message]:
    known = baseline.validate(registry, can_infer=can_infer)
    return [problem for problem in plan.validate(registry, can_infer=can_infer)
            if problem not in known]


def criteria_problem(text: str | None) -> Message | None:
    """Why success criteria written as an expression over ``result`` cannot be checked.

    The executor checks ``result.count > 0`` on the result itself; criteria in prose are
    judged otherwise, so only an expression that does not parse is a problem.
    """
    condition = criteria_condition(text) if text else None
    if condition is None:
        return None
    try:
        parse_condition(condition)
    except ExpressionError as exc:
        why = str(exc).replace(RESULT_STEP, "result")  # the user wrote result, not the stand-in
        return msg("edit.criteria_unparsable", error=why)
    return None
