"""The tool registry: typed functions become tools with a JSON schema derived from their hints."""

from __future__ import annotations

import contextvars
import inspect
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from core.errors import ToolArgumentError, ToolExecutionError, UnknownToolError

__all__ = [
    "Tool",
    "ToolRegistry",
    "current_idempotency_key",
    "idempotency_scope",
    "tool",
]

_idempotency_key: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "planboard_idempotency_key", default=None
)


def current_idempotency_key() -> str | None:
    """The idempotency key of the side-effecting call in progress, if the caller gave one."""
    return _idempotency_key.get()


@contextmanager
def idempotency_scope(key: str | None) -> Iterator[None]:
    """Make ``key`` visible to side-effecting tools called inside the block."""
    token = _idempotency_key.set(key)
    try:
        yield
    finally:
        _idempotency_key.reset(token)


@dataclass(frozen=True)
class Tool:
    """A callable the agent may use, described by name, description and parameter schema."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    arguments_model: type[BaseModel]
    side_effect: bool = False
    keywords: tuple[str, ...] = ()

    @property
    def required(self) -> list[str]:
        """Names of the parameters without a default."""
        return list(self.parameters.get("required", []))

    def validate_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """Check ``args`` against the schema and return them coerced; raise ToolArgumentError."""
        if not isinstance(args, dict):
            raise ToolArgumentError(
                f"{self.name}: arguments must be a JSON object, got {type(args).__name__}"
            )
        try:
            model = self.arguments_model.model_validate(args)
        except ValidationError as exc:
            raise ToolArgumentError(f"{self.name}: {_describe(exc)}") from None
        return model.model_dump(exclude_unset=False)

    def openai_spec(self) -> dict[str, Any]:
        """The tool in the ``tools=[...]`` format of the chat completions API."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def catalogue_entry(self) -> dict[str, Any]:
        """What the planner is told about the tool."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "side_effect": self.side_effect,
        }


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems) + " (check the tool's parameter schema)"


def tool(
    function: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    side_effect: bool = False,
    keywords: tuple[str, ...] = (),
) -> Any:
    """Turn a typed function with a docstring into a :class:`Tool` (usable bare or with options)."""

    def build(fn: Callable[..., Any]) -> Tool:
        return make_tool(fn, name=name, side_effect=side_effect, keywords=keywords)

    return build(function) if function is not None else build


def make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    side_effect: bool = False,
    keywords: tuple[str, ...] = (),
) -> Tool:
    """Build a Tool from ``fn``: the schema from its signature, descriptions from its docstring."""
    summary, param_docs = _parse_docstring(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn, eval_str=True).parameters.values():
        if param.name == "self":
            continue
        annotation = param.annotation if param.annotation is not inspect.Parameter.empty else Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, _field_info(default, param_docs.get(param.name)))
    model = create_model(
        f"{fn.__name__}_arguments",
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )
    return Tool(
        name=name or fn.__name__,
        description=summary,
        parameters=_clean_schema(model.model_json_schema()),
        function=fn,
        arguments_model=model,
        side_effect=side_effect,
        keywords=keywords,
    )


def _field_info(default: Any, description: str | None) -> Any:
    from pydantic import Field

    return Field(default, description=description) if description else Field(default)


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its first paragraph and its ``Args:`` entries."""
    summary_lines: list[str] = []
    params: dict[str, str] = {}
    section = "summary"
    for line in doc.splitlines():
        stripped = line.strip()
        if section == "summary":
            if stripped:
                summary_lines.append(stripped)
            elif summary_lines:
                section = "body"
            continue
        if stripped in {"Args:", "Arguments:", "Parameters:"}:
            section = "args"
        elif section == "args":
            match = re.match(r"^(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", stripped)
            if match:
                params[match.group(1)] = match.group(2)
            elif stripped and params and not stripped.endswith(":"):
                last = next(reversed(params))
                params[last] += " " + stripped
            elif stripped.endswith(":"):
                section = "body"
    return " ".join(summary_lines), params


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's titles: they add tokens to every prompt and say nothing new."""
    if isinstance(schema, dict):
        return {
            key: _clean_schema(value) for key, value in schema.items() if key != "title"
        }
    if isinstance(schema, list):
        return [_clean_schema(item) for item in schema]
    return schema


@dataclass
class ToolRegistry:
    """Tools by name; toolsets add theirs through a ``register_*(registry)`` function."""

    _tools: dict[str, Tool] = field(default_factory=dict)

    def add(self, new_tool: Tool) -> Tool:
        """Register a tool; a second tool of the same name replaces the first."""
        self._tools[new_tool.name] = new_tool
        return new_tool

    def add_toolset(self, toolset: object) -> None:
        """Register every public method of ``toolset`` that was marked with ``@tool``."""
        for attr in dir(toolset):
            if attr.startswith("_"):
                continue
            marked = getattr(type(toolset), attr, None)
            if isinstance(marked, Tool):
                self.add(_bind(marked, toolset))

    def get(self, name: str) -> Tool:
        """The tool called ``name``; UnknownToolError names the tools that exist."""
        try:
            return self._tools[name]
        except KeyError:
            known = ", ".join(sorted(self._tools)) or "none"
            raise UnknownToolError(
                f"unknown tool {name!r}; registered tools are: {known}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(sorted(self._tools.values(), key=lambda t: t.name))

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        """Registered tool names, sorted."""
        return sorted(self._tools)

    def catalogue(self) -> list[dict[str, Any]]:
        """Every tool as the planner sees it."""
        return [t.catalogue_entry() for t in self]

    def call(
        self, name: str, args: dict[str, Any], *, idempotency_key: str | None = None
    ) -> Any:
        """Validate ``args`` and run the tool; any failure becomes a ToolError."""
        target = self.get(name)
        clean = target.validate_args(args)
        with idempotency_scope(idempotency_key):
            try:
                return target.function(**clean)
            except (ToolExecutionError, ToolArgumentError):
                raise
            except Exception as exc:  # a tool's own bug must end its step, not the run
                raise ToolExecutionError(f"{name} failed: {type(exc).__name__}: {exc}") from exc


def _bind(marked: Tool, instance: object) -> Tool:
    bound = marked.function.__get__(instance, type(instance))
    return Tool(
        name=marked.name,
        description=marked.description,
        parameters=marked.parameters,
        function=bound,
        arguments_model=marked.arguments_model,
        side_effect=marked.side_effect,
        keywords=marked.keywords,
    )
