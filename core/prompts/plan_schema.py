"""The JSON schema of a plan reply, for providers that constrain a reply to one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["plan_schema"]

# the most steps a plan reply may hold where a grammar enforces the schema; the prompt asks
# for 3 to 10
_MAX_REPLY_STEPS = 12
# an argument may read an earlier step's result instead of giving a value
_REFERENCE = {"type": "string", "pattern": "^\\{\\{s[0-9]+[^}]*\\}\\}$"}


def plan_schema(tool_names: Sequence[str], *, questions: bool = False,
                arguments: Mapping[str, Mapping[str, Any]] | None = None,
                steps_only: bool = False) -> dict[str, Any]:
    """The JSON schema of a plan reply, as OpenAI's ``{"name", "schema"}`` object.

    A step's "tool" is one of ``tool_names`` or null. ``arguments`` (tool name → its
    parameters' JSON schema: the tools the prompt describes) holds those tools' steps to
    their parameters: no name the tool does not take, each value of its type or a
    reference to an earlier result (``"{{s1.id}}"``); a parameter may still be left out,
    to be inferred when the step runs. A step of any other tool, or none, takes any
    arguments. With ``questions`` the reply may be ``{"questions": [...]}`` instead
    (clarifying questions), so no key is required; ``steps_only`` requires only the steps
    (a follow-up's new steps). Where a grammar enforces the schema (llama.cpp), the bounds
    matter: with extra keys allowed a small model wrote one step as the whole reply, and
    with no step limit it repeated a step until the reply ran out of tokens.
    """
    text = {"type": "string"}
    texts = {"type": "array", "items": text}
    shaped = {name: schema for name, schema in (arguments or {}).items() if name in tool_names}
    free = [name for name in tool_names if name not in shaped]
    variants = [_step({"enum": [name]}, _arguments(schema)) for name, schema in shaped.items()]
    variants.append(_step({"enum": [*free, None]}, {"type": "object"}))
    properties: dict[str, Any] = {
        "goal": text, "definition_of_done": text, "constraints": texts,
        "steps": {"type": "array", "items": variants[0] if len(variants) == 1
                  else {"anyOf": variants}, "maxItems": _MAX_REPLY_STEPS},
    }
    if questions:
        properties["questions"] = texts
    required = [] if questions else ["steps"] if steps_only else ["goal", "steps"]
    schema = {"type": "object", "properties": properties, "required": required,
              "additionalProperties": False}
    return {"name": "plan", "schema": schema}


def _step(tool: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    text = {"type": "string"}
    return {
        "type": "object",
        "properties": {
            "id": text, "description": text, "tool": tool, "args": arguments,
            "depends_on": {"type": "array", "items": text}, "condition": text,
            "success_criteria": text,
        },
        "required": ["id", "description", "tool", "depends_on"],
        "additionalProperties": False,
    }


def _arguments(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's arguments as a step may write them: its parameters only, each a value of
    its schema or a reference; none required (a missing one is inferred at run time)."""
    properties = parameters.get("properties") or {}
    return {"type": "object",
            "properties": {name: {"anyOf": [dict(schema), _REFERENCE]}
                           for name, schema in properties.items()},
            "additionalProperties": False}
