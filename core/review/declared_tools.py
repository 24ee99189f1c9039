"""The tools an outside agent declares with its plan: their schemas and side effects.

PlanBoard never calls these tools (the agent does); it reads them to validate the plan's
arguments and to know which steps have side effects. A tool has one unless it says it is
read-only: a ``read_only`` flag, or MCP-style annotations (``readOnlyHint``); one that
declares nothing counts as a side effect, as PlanBoard's own tools do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.base.messages import Message, msg
from core.errors import InputError, ToolExecutionError
from core.plan.model import Plan
from core.tools.mcp.arguments import schema_problem, schema_validator
from core.tools.registry import Tool, ToolRegistry

__all__ = ["MAX_TOOLS", "declared_problems", "declared_registry", "read_declared_tools"]

MAX_TOOLS = 500  # a catalogue larger than this is not a plan's, and a person reads none of it
_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema")


def read_declared_tools(raw: Any) -> list[dict[str, Any]]:
    """The declared tools, each as ``{name, description, parameters, read_only, schema}``
    (``schema``: False when the tool described no arguments, which then are all taken);
    InputError (one line) for a list that is not one of tool objects."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError(msg("review.bad_field", field="tools", detail="not a list"))
    if len(raw) > MAX_TOOLS:
        raise InputError(msg("review.bad_field", field="tools",
                             detail=f"{len(raw)} tools, more than {MAX_TOOLS}"))
    tools: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(raw):
        tool = _read_tool(entry, index)
        if tool["name"] in tools:
            raise InputError(msg("review.bad_tool", tool=tool["name"],
                                 problem="it is declared twice"))
        tools[tool["name"]] = tool
    return list(tools.values())


def _read_tool(entry: Any, index: int) -> dict[str, Any]:
    if isinstance(entry, Mapping) and isinstance(entry.get("function"), Mapping):
        entry = {**entry["function"], **{k: v for k, v in entry.items() if k != "function"}}
    if not isinstance(entry, Mapping):
        raise InputError(msg("review.bad_field", field=f"tools[{index}]", detail="not an object"))
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError(msg("review.bad_field", field=f"tools[{index}].name",
                             detail="missing or not text"))
    schema = next((entry[key] for key in _SCHEMA_KEYS if key in entry), None)
    if schema is None:  # arguments are not described: any are taken
        return {"name": name.strip(), "description": str(entry.get("description") or name),
                "parameters": {"type": "object"}, "read_only": _says_read_only(entry),
                "schema": False}
    problem = schema_problem(schema)
    if problem is not None:
        raise InputError(msg("review.bad_tool", tool=name, problem=problem))
    description = entry.get("description") or entry.get("title") or name
    return {"name": name.strip(), "description": str(description).strip(),
            "parameters": dict(schema), "read_only": _says_read_only(entry), "schema": True}


def _says_read_only(entry: Mapping[str, Any]) -> bool:
    """True only when the tool says so: ``read_only: true``, or annotations with
    ``readOnlyHint`` (or ``read_only_hint``) true."""
    if entry.get("read_only") is True or entry.get("readOnly") is True:
        return True
    hints = entry.get("annotations")
    if isinstance(hints, Mapping):
        return hints.get("readOnlyHint") is True or hints.get("read_only_hint") is True
    return False


class _AgentsTool:
    """What stands for the call of a declared tool: PlanBoard never makes it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, **_args: Any) -> Any:
        raise ToolExecutionError(msg("review.tool_of_agent", tool=self.name))


def declared_registry(tools: list[dict[str, Any]], agent: str) -> ToolRegistry:
    """A registry of the declared tools (from :func:`read_declared_tools`), from ``agent``."""
    registry = ToolRegistry()
    for tool in tools:
        registry.add(Tool(name=tool["name"], description=tool["description"],
                          parameters=tool["parameters"], function=_AgentsTool(tool["name"]),
                          side_effect=not tool["read_only"], source=agent,
                          schema_validator=schema_validator(tool["parameters"])))
    return registry


def declared_problems(plan: Plan, tools: list[dict[str, Any]], agent: str) -> list[Message]:
    """The plan's problems against the declared tools (by :meth:`Plan.validate`), but for
    the arguments of a tool that described none; with no tool declared, the plan's own
    problems (its tools are the agent's, unknown to PlanBoard and taken as named)."""
    if not tools:
        return plan.validate()
    described = {tool["name"] for tool in tools if tool.get("schema", True)}
    return [problem for problem in plan.validate(declared_registry(tools, agent))
            if problem.code != "plan.unknown_argument"
            or problem.params.get("tool") in described]
