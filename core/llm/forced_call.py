"""Force one specific tool call, degrading per provider, and check it really happened.

Providers differ: some honour a named ``tool_choice``, some reject it (LM Studio), some
silently ignore it (Ollama, llama.cpp). ``force_tool_call`` exposes only the one tool,
walks the provider profile's ladder (named -> "required" -> "auto"), steps down a rung
when the endpoint rejects the request, and never assumes the choice was honoured.
``open_with_tool`` starts a conversation with such a call and its result (the direct
answer's first round), so that the model answers from data, not from memory.
``arguments_as_json`` is the last rung for a model that answers with text at every rung
(small models on llama.cpp do): it asks for the arguments as a JSON object matching the
tool's parameters, which such endpoints enforce with a grammar.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from core.base.text import clip
from core.base.usage import Usage
from core.errors import LLMBadRequestError, ToolError
from core.llm.client import ChatModel, ModelRole, ToolCall
from core.llm.providers import GENERIC, ProviderProfile
from core.tools.registry import Tool

__all__ = [
    "FirstRound",
    "ForcedCall",
    "arguments_as_json",
    "call_round",
    "force_tool_call",
    "open_with_tool",
    "tool_choice_for",
]

logger = logging.getLogger(__name__)

_OBSERVATION_CHARS = 4000


class ForcedCall(BaseModel):
    """The outcome of a forced call: the call (None if the model did not make it) and cost.

    ``mode_used`` is the tool_choice mode of the attempt that got an answer ("named",
    "required" or "auto"); ``notes`` say what degraded or went wrong; ``content`` keeps
    any text the model answered with instead.
    """

    call: ToolCall | None = None
    usage: Usage = Field(default_factory=Usage)
    mode_used: str = ""
    notes: list[str] = Field(default_factory=list)
    content: str | None = None


def tool_choice_for(mode: str, tool_name: str) -> str | dict[str, Any]:
    """The ``tool_choice`` value for a ladder rung."""
    if mode == "named":
        return {"type": "function", "function": {"name": tool_name}}
    return mode


def force_tool_call(
    model: ChatModel,
    messages: list[dict[str, Any]],
    tool: Tool,
    *,
    role: ModelRole = "executor",
) -> ForcedCall:
    """Ask ``model`` to call ``tool`` (the only tool it sees) and check that it did.

    A rejected request (LLMBadRequestError) moves one rung down the ladder; when every
    rung is rejected the last error is raised. Other LLM errors propagate unchanged.
    ``extra_body`` is passed only when the profile needs one (scripted fakes lack it).
    """
    profile: ProviderProfile = getattr(model, "profile", GENERIC)
    ladder = profile.tool_choice_ladder or ("auto",)
    extra: dict[str, Any] = {}
    if profile.forced_extra_body:
        extra["extra_body"] = dict(profile.forced_extra_body)
    usage = Usage()
    notes: list[str] = []
    last_error: LLMBadRequestError | None = None
    for rung, mode in enumerate(ladder):
        try:
            reply = model.chat(
                messages, role=role, tools=[tool.openai_spec()],
                tool_choice=tool_choice_for(mode, tool.name), **extra,
            )
        except LLMBadRequestError as exc:
            usage = usage + Usage(llm_calls=1)
            last_error = exc
            following = ladder[rung + 1] if rung + 1 < len(ladder) else None
            notes.append(
                f"{profile.name}: tool_choice {mode!r} was rejected ({exc})"
                + (f"; retrying with {following!r}." if following else ".")
            )
            logger.info("forced call of %s: %s", tool.name, notes[-1])
            continue
        usage = usage + reply.usage
        return _checked(reply.tool_calls, reply.content, tool.name, mode, usage, notes)
    raise LLMBadRequestError(
        f"The endpoint rejected every way of forcing {tool.name!r} "
        f"({', '.join(ladder)}); last error: {last_error}"
    )


def _checked(
    calls: list[ToolCall],
    content: str | None,
    tool_name: str,
    mode: str,
    usage: Usage,
    notes: list[str],
) -> ForcedCall:
    matching = [call for call in calls if call.name == tool_name]
    if matching:
        if len(calls) > 1:
            notes.append(
                f"The model made {len(calls)} tool calls; only the first {tool_name!r} is used."
            )
        return ForcedCall(call=matching[0], usage=usage, mode_used=mode, notes=notes,
                          content=content)
    if calls:
        others = ", ".join(sorted({call.name for call in calls}))
        notes.append(
            f"tool_choice {mode!r} was not honoured: the model called {others} "
            f"instead of {tool_name!r}."
        )
    else:
        notes.append(
            f"tool_choice {mode!r} was not honoured: the model answered with text "
            f"instead of calling {tool_name!r}."
        )
    logger.info("forced call of %s: %s", tool_name, notes[-1])
    return ForcedCall(call=None, usage=usage, mode_used=mode, notes=notes, content=content)


def arguments_as_json(
    model: ChatModel,
    messages: list[dict[str, Any]],
    tool: Tool,
    *,
    role: ModelRole = "executor",
) -> ForcedCall:
    """Send ``messages`` (which ask for ``tool``'s arguments) with no tools, asking for a
    JSON object matching its parameters; the call is None unless the reply is one."""
    reply = model.chat(messages, role=role, json_mode=True,
                       json_schema={"name": f"{tool.name}_arguments", "schema": tool.parameters})
    text = (reply.content or "").strip()
    try:
        arguments = json.loads(text)
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        return ForcedCall(usage=reply.usage, mode_used="json",
                          notes=[f"asked for {tool.name}'s arguments as JSON, the model "
                                 f"answered {clip(text, 120)!r}"], content=reply.content)
    call = ToolCall(id="json-arguments", name=tool.name, arguments=json.dumps(arguments))
    return ForcedCall(call=call, usage=reply.usage, mode_used="json",
                      notes=[f"the model gave {tool.name}'s arguments as JSON"])


class FirstRound(BaseModel):
    """The opening of a conversation: the call and its result as two messages to append
    (none when no call was made), what it cost, and whether the model made the call."""

    messages: list[dict[str, Any]] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    by_model: bool = False
    notes: list[str] = Field(default_factory=list)


def open_with_tool(
    model: ChatModel,
    messages: list[dict[str, Any]],
    tool: Tool,
    run: Callable[[dict[str, Any]], Any],
    *,
    fallback_args: dict[str, Any] | None = None,
    role: ModelRole = "executor",
) -> FirstRound:
    """Force a call of ``tool`` and ``run`` it; the call and its result are the first round.

    When the model does not make the call (an endpoint that ignores tool_choice, a model
    that answers with text) or sends arguments that are not JSON, ``fallback_args`` (read
    from the request by the caller) are used instead; without them no call is made. A
    ToolError from ``run`` becomes the result ("error: ..."), as in the ReAct loop.
    """
    forced = force_tool_call(model, messages, tool, role=role)
    first = FirstRound(usage=forced.usage, notes=list(forced.notes))
    args = _json_object(forced.call.arguments) if forced.call is not None else None
    first.by_model = args is not None
    if args is None:
        if fallback_args is None:
            return first
        args = dict(fallback_args)
        first.notes.append(f"{tool.name} was called with the arguments read from the request.")
    call_id = forced.call.id if forced.call is not None else "call_first"
    first.messages = call_round(tool, args, run, call_id)
    return first


def call_round(tool: Tool, args: dict[str, Any], run: Callable[[dict[str, Any]], Any],
               call_id: str = "call_first") -> list[dict[str, Any]]:
    """``run`` the call of ``tool`` with ``args`` and return it and its result as the two
    messages of a round (a ToolError becomes the result, "error: ...")."""
    try:
        output = json.dumps(run(args), ensure_ascii=False, default=str)
    except ToolError as exc:
        output = f"error: {exc}"
    return [
        # "" rather than null: llama.cpp's server refuses an assistant message without text
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": tool.name, "arguments": json.dumps(args, ensure_ascii=False)}},
        ]},
        {"role": "tool", "tool_call_id": call_id, "content": clip(output, _OBSERVATION_CHARS)},
    ]


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
