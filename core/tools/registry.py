"""The tool registry: typed functions become tools with a JSON schema derived from their hints."""

from __future__ import annotations

import contextvars
import dataclasses
import datetime as dt
import enum
import inspect
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from core.base.messages import Message, msg
from core.errors import ToolArgumentError, ToolExecutionError, UnknownToolError

__all__ = [
    "Tool",
    "ToolRegistry",
    "current_idempotency_key",
    "idempotency_scope",
    "json_safe",
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
            raise ToolArgumentError(msg("tool.args_not_object", tool=self.name,
                                        kind=type(args).__name__))
        try:
            model = self.arguments_model.model_validate(args)
        except ValidationError as exc:
            raise ToolArgumentError(msg("tool.args_invalid", tool=self.name,
                                        problems=_describe(exc))) from None
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


_PROBLEM_CODES = {"missing": "tool.arg_missing", "extra_forbidden": "tool.arg_extra"}


def _describe(exc: ValidationError) -> list[Message]:
    """Each problem pydantic found: a missing or extra argument worded in either language,
    any other with pydantic's own (English) words as its detail."""
    return [msg(_PROBLEM_CODES.get(error["type"], "tool.arg_invalid"),
                field=".".join(str(part) for part in error["loc"]) or "arguments",
                detail=error["msg"]) for error in exc.errors()]


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
            raise UnknownToolError(msg("tool.unknown", name=repr(name), known=known)) from None

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
                result = target.function(**clean)
            except (ToolExecutionError, ToolArgumentError):
                raise
            except Exception as exc:  # a tool's own bug must end its step, not the run
                raise ToolExecutionError(msg("tool.crashed", tool=name,
                                             error=f"{type(exc).__name__}: {exc}")) from exc
        return json_safe(result)  # whatever came back, the run's record can store it


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


_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DEPTH = 40
_MAX_NODES = 100_000
_MAX_BYTES_SHOWN = 4_096
_INT64 = 2**63
_CUT = "…"


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data that ``json.dumps(..., allow_nan=False)`` always accepts.

    Bytes become ``X'hex'`` text, integers outside 64 bits text (other stores and languages
    lose their digits; Python refuses to print past 4,300), NaN and infinities text,
    tuples and sets lists, dates ISO text, models and dataclasses dicts, other objects
    ``str()``; lone surrogates become U+FFFD. Nesting past 40 levels, cycles and more than
    100,000 values are cut with a marker. Never raises.
    """
    return _JsonSafe().convert(value, 0)


class _JsonSafe:
    """One conversion: the values left in its budget and the containers being walked."""

    def __init__(self) -> None:
        self.budget = _MAX_NODES
        self.walking: set[int] = set()

    def convert(self, value: Any, depth: int) -> Any:
        self.budget -= 1
        try:
            return self._convert(value, depth)
        except Exception:  # an odd object (a __getattr__ or model_dump that raises): as text
            return _text(_as_str(value))

    def _convert(self, value: Any, depth: int) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, enum.Enum):
            value = value.value
        if isinstance(value, int):
            plain = int.__int__(value)
            return plain if -_INT64 <= plain < _INT64 else _int_text(plain)
        if isinstance(value, float):
            plain = float.__float__(value)
            return plain if math.isfinite(plain) else str(plain)
        if isinstance(value, str):
            return _text(str.__str__(value))
        if isinstance(value, bytes | bytearray | memoryview):
            return _hex(bytes(value))
        if isinstance(value, dt.datetime | dt.date | dt.time):
            return value.isoformat()
        if isinstance(value, type):
            return _text(_as_str(value))
        if hasattr(value, "model_dump"):
            value = value.model_dump()
        elif dataclasses.is_dataclass(value):
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if isinstance(value, Mapping | list | tuple | set | frozenset):
            return self._container(value, depth)
        return _text(_as_str(value))

    def _container(self, value: Any, depth: int) -> Any:
        if depth >= _MAX_DEPTH:
            return f"{_CUT} (nested more than {_MAX_DEPTH} levels)"
        if id(value) in self.walking:
            return f"{_CUT} (refers to itself)"
        self.walking.add(id(value))
        try:
            if isinstance(value, Mapping):
                return self._mapping(value, depth)
            items = []
            for item in value:
                if self.budget <= 0:
                    items.append(_CUT)
                    break
                items.append(self.convert(item, depth + 1))
            if isinstance(value, set | frozenset):  # a stable order for a stable record
                items.sort(key=lambda item: json.dumps(item, sort_keys=True))
            return items
        finally:
            self.walking.discard(id(value))

    def _mapping(self, value: Mapping, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, item in value.items():
            if self.budget <= 0:
                result[_CUT] = _CUT
                break
            result[_key(key)] = self.convert(item, depth + 1)
        return result


def _key(key: Any) -> str:
    plain = json_safe(key)
    return plain if isinstance(plain, str) else json.dumps(plain)  # null, true, 1, [1, 2]


def _int_text(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # past Python's int-to-str digit limit
        return f"<an integer of {value.bit_length():,} bits>"


def _hex(raw: bytes) -> str:
    if len(raw) <= _MAX_BYTES_SHOWN:
        return f"X'{raw.hex().upper()}'"
    return f"X'{raw[:_MAX_BYTES_SHOWN].hex().upper()}{_CUT}' ({len(raw):,} bytes)"


def _text(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _as_str(value: Any) -> str:
    try:
        return str(value)
    except Exception:  # a __str__ that raises
        return f"<{type(value).__name__} object>"
