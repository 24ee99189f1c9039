"""The bounded ReAct loop of a reasoning step: at most three rounds, read-only tools only."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.base.messages import msg, render
from core.base.usage import Usage
from core.errors import PlanBoardError, ToolError
from core.llm.client import ChatModel, ChatReply, ToolCall
from core.plan.identifiers import Grounds
from core.prompts.execution import REACT_FINAL_NUDGE
from core.tools.registry import Tool, ToolRegistry

__all__ = ["MAX_REACT_ROUNDS", "ReactCancelled", "ReactResult", "read_only_tools", "run_react"]

logger = logging.getLogger(__name__)

MAX_REACT_ROUNDS = 3
_MAX_OBSERVATION_CHARS = 4000


class _UsageHolder(Protocol):
    usage: Usage


class ReactCancelled(PlanBoardError):
    """Raised inside the loop when the run was cancelled between two rounds."""


@dataclass
class ReactResult:
    """What the loop produced: the final text, the tools it used and what it cost."""

    text: str
    tools_used: list[str] = field(default_factory=list)
    rounds: int = 0
    tool_s: float = 0.0  # seconds spent inside tool calls


def read_only_tools(registry: ToolRegistry) -> list[Tool]:
    """The tools a reasoning step may use: those without side effects."""
    return [t for t in registry if not t.side_effect]


def run_react(
    model: ChatModel,
    registry: ToolRegistry,
    messages: list[dict[str, Any]],
    *,
    tally: _UsageHolder,
    cancel: threading.Event | None = None,
    rounds: int = MAX_REACT_ROUNDS,
    grounds: Grounds | None = None,
    offered: Iterable[str] | None = None,
) -> ReactResult:
    """Run up to ``rounds`` chat calls; the last one is offered no tools, so it must answer.

    The calls describe the read-only tools named in ``offered`` (all of them when None: a
    large catalogue's shortlist, core.planning.shortlist); any read-only tool may still be
    called.

    The usage of every call is added to ``tally.usage`` as it happens (kept on failure).

    Tool calls to anything but a read-only tool are refused (the refusal is sent back as
    the observation), and so is a call whose identifier argument ``grounds`` lack (what
    each call returns joins them); tool errors are observations too, so the model can
    correct itself.
    Raises ToolError when no text answer came, ReactCancelled when ``cancel`` is set.
    """
    allowed = {t.name: t for t in read_only_tools(registry)}
    described = allowed.values() if offered is None else [
        allowed[name] for name in dict.fromkeys(offered) if name in allowed]
    specs = [t.openai_spec() for t in described] or None
    messages = list(messages)
    result = ReactResult(text="")
    for round_no in range(1, rounds + 1):
        if cancel is not None and cancel.is_set():
            raise ReactCancelled("cancelled by a person while the step was reasoning")
        last = round_no == rounds
        if last and round_no > 1:
            messages.append({"role": "user", "content": REACT_FINAL_NUDGE})
        reply = model.chat(list(messages), role="executor", tools=None if last else specs)
        tally.usage = tally.usage + reply.usage
        result.rounds = round_no
        if not reply.tool_calls:
            text = (reply.content or "").strip()
            if not text:
                raise ToolError(msg("step.empty_answer"))
            result.text = text
            return result
        messages.append(_assistant_message(reply))
        for call in reply.tool_calls:
            messages.append(_observe(call, allowed, registry, result, grounds))
    raise ToolError(msg("step.too_many_rounds", rounds=rounds))


def _assistant_message(reply: ChatReply) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": reply.content or "",  # llama.cpp's server refuses null text here
        "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ],
    }


def _observe(
    call: ToolCall, allowed: dict[str, Tool], registry: ToolRegistry, result: ReactResult,
    grounds: Grounds | None,
) -> dict[str, Any]:
    if call.name not in allowed:
        content = (
            f"error: {call.name} is not available in this step (only read-only tools are); "
            "answer with what you have"
        )
    else:
        try:
            args = json.loads(call.arguments or "{}")
            invented = [] if grounds is None or not isinstance(args, dict) else list(
                grounds.invented(args))
            if invented:
                name, value = invented[0]
                content = "error: " + render(msg("tool.invented_id", tool=call.name, name=name,
                                                 value=repr(value)), "en")
            else:
                called = time.perf_counter()
                try:
                    output = registry.call(call.name, args)
                finally:
                    result.tool_s += time.perf_counter() - called
                result.tools_used.append(call.name)
                content = json.dumps(output, ensure_ascii=False, default=str)
                if grounds is not None:
                    grounds.add(output)
        except ValueError as exc:  # JSONDecodeError is a ValueError
            content = f"error: the arguments are not valid JSON ({exc}); send a JSON object"
        except ToolError as exc:
            content = f"error: {exc}"
    if len(content) > _MAX_OBSERVATION_CHARS:
        content = content[:_MAX_OBSERVATION_CHARS] + "… [truncated]"
    logger.debug("react observation for %s: %s", call.name, content[:200])
    return {"role": "tool", "tool_call_id": call.id, "content": content}
