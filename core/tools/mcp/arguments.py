"""Arguments of a tool described only by a JSON schema, checked with jsonschema before a call.

An MCP server describes each tool's input as a JSON schema; PlanBoard uses it as it is (the
models see it, the step panel builds its form from it) and checks arguments against it
with the draft the schema names (2020-12 when it names none). The problems come back as
the same message codes the pydantic-checked tools use, so a plan's problem list and the
step panel read them alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError, ValidationError

from core.base.messages import Message, msg

__all__ = ["SchemaValidator", "schema_problem", "schema_validator"]

SchemaValidator = Callable[[dict[str, Any], bool], list[Message]]
_MAX_DETAIL = 200


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot describe a tool's arguments (None when it can)."""
    if not isinstance(schema, dict):
        return "its input schema is not a JSON object"
    if schema.get("type", "object") != "object":
        return f"its input schema describes a {schema.get('type')}, not an object of arguments"
    try:
        _validator_class(schema).check_schema(schema)
    except SchemaError as exc:
        return f"its input schema is not a valid JSON schema ({_short(exc.message)})"
    return None


def schema_validator(schema: dict[str, Any]) -> SchemaValidator:
    """A checker of arguments against ``schema`` (which :func:`schema_problem` accepted):
    ``(args, check_required)`` -> the problems; without ``check_required``, missing and
    unknown arguments are left out (a plan may leave arguments to fill when its step runs)."""
    validator = _validator_class(schema)(schema)

    def check(args: dict[str, Any], check_required: bool) -> list[Message]:
        problems: list[Message] = []
        for error in sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path)):
            top = not error.absolute_path
            if error.validator == "required":
                if check_required or not top:
                    problems += _missing(error)
            elif error.validator == "additionalProperties":
                if check_required or not top:
                    problems += _extra(error)
            else:
                problems.append(msg("tool.arg_invalid", field=_field(error),
                                    detail=_short(error.message)))
        return problems

    return check


def _validator_class(schema: dict[str, Any]) -> Any:
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def _missing(error: ValidationError) -> list[Message]:
    present = error.instance if isinstance(error.instance, dict) else {}
    wanted = error.validator_value if isinstance(error.validator_value, list) else []
    return [msg("tool.arg_missing", field=_join(error, name)) for name in wanted
            if name not in present]


def _extra(error: ValidationError) -> list[Message]:
    known = set((error.schema or {}).get("properties") or {}) if isinstance(
        error.schema, dict) else set()
    instance = error.instance if isinstance(error.instance, dict) else {}
    return [msg("tool.arg_extra", field=_join(error, name)) for name in instance
            if name not in known]


def _field(error: ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "arguments"


def _join(error: ValidationError, name: str) -> str:
    path = [str(part) for part in error.absolute_path]
    return ".".join([*path, name])


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL] + "…"
