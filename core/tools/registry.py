"""The tool registry: typed functions become tools with a JSON schema derived from their hints."""

from __future__ import annotations

import contextvars
import dataclasses
import inspect
import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from core.base import tracing
from core.base.messages import Message, msg
from core.errors import ToolArgumentError, ToolExecutionError, UnknownToolError
from core.tools.results import json_safe

__all__ = [
    "OutputSchema",
    "Tool",
    "ToolHints",
    "ToolRegistry",
    "ToolText",
    "current_idempotency_key",
    "idempotency_scope",
    "tool",
]

OutputSchema = Mapping[str, Any] | type[BaseModel]
"""What a tool may declare as the shape of its results."""

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
class ToolHints:
    """What a tool declares about its results, so that the engine needs no knowledge of it.

    ``id_fields``: result fields that identify what the call made or found (a created
    ticket's id): an answer must name them. ``in_progress``: for a side effect, the values
    of a looked-up record's ``status`` (or of a record it holds) that mean its work is
    already under way, so a checkpoint drops a pending call on that record. ``field_labels``:
    other names a person gives a result field (``{"单号": "ticket_id"}``), read by success
    criteria. ``answers_questions``: the tool searches documents that answer questions on
    their own (a knowledge base): it takes the question as its first required parameter
    and returns ``{"hits": [{"title", "content", "source"?, "score"?}]}``, so a question
    may be answered from it without a plan.
    """

    id_fields: tuple[str, ...] = ()
    in_progress: tuple[str, ...] = ()
    field_labels: Mapping[str, str] = field(default_factory=dict)
    answers_questions: bool = False


@dataclass(frozen=True)
class ToolText:
    """A tool's description and its parameters' descriptions in another language, for people
    reading the dashboard in it; models always get the tool's own text."""

    description: str
    parameters: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Tool:
    """A callable the agent may use, described by name, description and parameter schema.

    A tool has a side effect unless it says it is read-only: a tool that forgets to say
    runs only inside an approved plan version, never freely. ``idempotent`` (for a side
    effect) says that repeating a call that may already have happened is harmless, so a
    run resumed after a crash may call it again. ``source`` names the toolset it came from
    (``builtin``, ``demo``, a module, an MCP server). ``translations`` holds the texts its
    toolset gives in other languages, by language code (``"zh"``). Arguments are checked by
    the pydantic model built from the function's signature, or, for a tool described only
    by a JSON schema (an MCP server's), by ``schema_validator``. ``output_schema`` (a JSON
    schema, optional) declares the shape of its results and ``output_examples`` results it
    may return: a rehearsal simulates the tool from them; without an output schema its
    results have an unknown shape, and what reads them is not checked.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    arguments_model: type[BaseModel] | None = None
    side_effect: bool = True
    idempotent: bool = False
    keywords: tuple[str, ...] = ()
    source: str = ""
    hints: ToolHints = field(default_factory=ToolHints)
    translations: Mapping[str, ToolText] = field(default_factory=dict)
    schema_validator: Callable[[dict[str, Any], bool], list[Message]] | None = None
    output_schema: dict[str, Any] | None = None
    output_examples: tuple[Any, ...] = ()

    @property
    def required(self) -> list[str]:
        """Names of the parameters without a default."""
        return list(self.parameters.get("required", []))

    def validate_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """Check ``args`` against the schema and return them coerced; raise ToolArgumentError."""
        if not isinstance(args, dict):
            raise ToolArgumentError(msg("tool.args_not_object", tool=self.name,
                                        kind=type(args).__name__))
        if self.arguments_model is None:
            problems = self.schema_validator(args, True) if self.schema_validator else []
            if problems:
                raise ToolArgumentError(msg("tool.args_invalid", tool=self.name,
                                            problems=problems))
            return dict(args)
        try:
            model = self.arguments_model.model_validate(args)
        except ValidationError as exc:
            raise ToolArgumentError(msg("tool.args_invalid", tool=self.name,
                                        problems=_describe(exc))) from None
        return model.model_dump(exclude_unset=False)

    def value_problems(self, args: dict[str, Any]) -> list[Message]:
        """What is wrong with the values in ``args``, ignoring missing and unknown arguments
        (a plan may leave arguments to be filled when its step runs)."""
        if self.arguments_model is None:
            return self.schema_validator(args, False) if self.schema_validator else []
        try:
            self.arguments_model.model_validate(args)
        except ValidationError as exc:
            return [problem for error, problem in zip(exc.errors(), _describe(exc), strict=True)
                    if error["type"] not in _PROBLEM_CODES]
        return []

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
    read_only: bool = False,
    idempotent: bool = False,
    keywords: tuple[str, ...] = (),
    hints: ToolHints | None = None,
    output_schema: OutputSchema | None = None,
    examples: tuple[Any, ...] = (),
) -> Any:
    """Turn a typed function with a docstring into a :class:`Tool` (usable bare or with options).

    The tool has a side effect unless ``read_only=True``: say so for every tool that only
    reads, and it may run in any step; anything else runs only where a person approved it.
    ``output_schema`` (a JSON schema or a pydantic model) and ``examples`` declare what it
    returns, for rehearsals.
    """

    def build(fn: Callable[..., Any]) -> Tool:
        return make_tool(fn, name=name, read_only=read_only, idempotent=idempotent,
                         keywords=keywords, hints=hints, output_schema=output_schema,
                         examples=examples)

    return build(function) if function is not None else build


def make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    read_only: bool = False,
    idempotent: bool = False,
    keywords: tuple[str, ...] = (),
    hints: ToolHints | None = None,
    output_schema: OutputSchema | None = None,
    examples: tuple[Any, ...] = (),
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
        side_effect=not read_only,
        idempotent=idempotent,
        keywords=keywords,
        hints=hints or ToolHints(),
        output_schema=_output_schema(output_schema),
        output_examples=tuple(examples),
    )


def _output_schema(declared: OutputSchema | None) -> dict[str, Any] | None:
    """A declared result shape as a JSON schema (a pydantic model gives its own)."""
    if isinstance(declared, type) and issubclass(declared, BaseModel):
        return _clean_schema(declared.model_json_schema())
    return dict(declared) if declared is not None else None


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
    """Tools by name; toolsets add theirs through a ``register(registry)`` function.

    ``problems`` holds one message per toolset or server that could not be loaded: the
    other tools still work, and the command line and the Tools page name what failed.
    A toolset may add a pack beside its tools (what it offers the engine beyond them,
    core.planning.packs): the registry keeps packs in order without looking inside.
    """

    _tools: dict[str, Tool] = field(default_factory=dict)
    problems: list[Message] = field(default_factory=list)
    _loading: str = ""
    _packs: list[object] = field(default_factory=list)

    def add_pack(self, pack: object) -> None:
        """Keep ``pack`` (a toolset's offer beyond its tools); the same pack is kept once."""
        if not any(known is pack for known in self._packs):
            self._packs.append(pack)

    def packs(self) -> list[object]:
        """The packs the toolsets added, in the order they were added."""
        return list(self._packs)

    @contextmanager
    def loading(self, source: str) -> Iterator[None]:
        """Tools added inside the block without a source of their own come from ``source``."""
        before, self._loading = self._loading, source
        try:
            yield
        finally:
            self._loading = before

    def add(self, new_tool: Tool) -> Tool:
        """Register a tool; a second tool of the same name replaces the first."""
        if not new_tool.source and self._loading:
            new_tool = dataclasses.replace(new_tool, source=self._loading)
        self._tools[new_tool.name] = new_tool
        return new_tool

    def sources(self) -> list[str]:
        """The toolsets and servers the tools came from, in the order they were loaded."""
        return list(dict.fromkeys(t.source for t in self._tools.values() if t.source))

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
        """Validate ``args`` and run the tool; any failure becomes a ToolError.

        Traced (:mod:`core.base.tracing`) as a span ``execute_tool NAME`` that holds the
        arguments' names and size, never their values: no tool marks a value sensitive,
        and a value may be a customer's data or a secret a plan was given.
        """
        with tracing.span(f"execute_tool {name}", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                "gen_ai.tool.type": "function"}) as span:
            if span.recording:
                span.set(_argument_attributes(self._tools.get(name), args))
            try:
                result = self._call(name, args, idempotency_key)
            except Exception:
                span.set({"planboard.tool.outcome": "error"})  # and its class, as error.type
                raise
            span.set({"planboard.tool.outcome": "ok"})
        return json_safe(result)  # whatever came back, the run's record can store it

    def _call(self, name: str, args: dict[str, Any], idempotency_key: str | None) -> Any:
        target = self.get(name)
        clean = target.validate_args(args)
        with idempotency_scope(idempotency_key):
            try:
                return target.function(**clean)
            except (ToolExecutionError, ToolArgumentError):
                raise
            except Exception as exc:  # a tool's own bug must end its step, not the run
                raise ToolExecutionError(msg("tool.crashed", tool=name,
                                             error=f"{type(exc).__name__}: {exc}")) from exc


def _argument_attributes(target: Tool | None, args: Any) -> dict[str, Any]:
    """A tool span's words on the call: where the tool comes from, whether it has a side
    effect, and the arguments' names and JSON size (no value)."""
    names = sorted(str(key) for key in args) if isinstance(args, dict) else []
    size = len(json.dumps(args, ensure_ascii=False, default=str).encode())
    return {"planboard.tool.source": target.source if target else None,
            "planboard.tool.side_effect": target.side_effect if target else None,
            "planboard.tool.argument_names": names, "planboard.tool.arguments_size": size}


def _bind(marked: Tool, instance: object) -> Tool:
    return dataclasses.replace(marked, function=marked.function.__get__(instance, type(instance)))
