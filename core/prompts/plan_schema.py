"""The JSON schema of a plan reply, for providers that constrain a reply to one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["plan_schema"]

# the most steps a plan reply may hold where a grammar enforces the schema; the planner
# already warns above 10 ("plans of 3 to 10 steps work best")
_MAX_REPLY_STEPS = 12


def plan_schema(tool_names: Sequence[str], *, questions: bool = False) -> dict[str, Any]:
    """The JSON schema of a plan reply, as OpenAI's ``{"name", "schema"}`` object.

    A step's "tool" is one of ``tool_names`` or null. With ``questions`` the reply may be
    ``{"questions": [...]}`` instead (clarifying questions), so no key is required.
    Where a grammar enforces the schema (llama.cpp), the bounds matter: with extra keys
    allowed a small model wrote one step as the whole reply, and with no step limit it
    repeated a step until the reply ran out of tokens.
    """
    text = {"type": "string"}
    texts = {"type": "array", "items": text}
    step = {
        "type": "object",
        "properties": {
            "id": text, "description": text, "tool": {"enum": [*tool_names, None]},
            "args": {"type": "object"}, "depends_on": texts, "condition": text,
            "success_criteria": text,
        },
        "required": ["id", "description", "tool", "depends_on"],
        "additionalProperties": False,
    }
    properties: dict[str, Any] = {
        "goal": text, "definition_of_done": text, "constraints": texts,
        "steps": {"type": "array", "items": step, "maxItems": _MAX_REPLY_STEPS},
    }
    if questions:
        properties["questions"] = texts
    schema = {"type": "object", "properties": properties,
              "required": [] if questions else ["goal", "steps"],
              "additionalProperties": False}
    return {"name": "plan", "schema": schema}
