"""A scripted stand-in for the chat model, for unit tests that need no HTTP."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.base.usage import Usage
from core.llm.client import ChatReply, ToolCall
from core.plan.model import Step

Reply = ChatReply | str | Exception | Callable[[dict[str, Any]], "ChatReply | str"]


def tool_reply(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> ChatReply:
    """A reply that asks for one tool call."""
    return ChatReply(
        tool_calls=[ToolCall(id=call_id, name=name, arguments=json.dumps(arguments))],
        finish_reason="tool_calls",
        usage=Usage(llm_calls=1, prompt_tokens=50, completion_tokens=10),
    )


@dataclass
class ScriptedChatModel:
    """Answers each chat call with the next scripted reply and records every request.

    A reply may be a ChatReply, plain text, an exception to raise, or a function of the
    request returning either. Running out of replies fails the test with a clear message.
    """

    replies: list[Reply] = field(default_factory=list)
    delay_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        role: str = "executor",
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        json_mode: bool = False,
        json_schema: dict[str, Any] | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> ChatReply:
        request = {
            "messages": messages, "role": role, "tools": tools,
            "tool_choice": tool_choice, "json_mode": json_mode, "json_schema": json_schema,
            "started": time.monotonic(),
        }
        with self._lock:
            self.requests.append(request)
            if not self.replies:
                raise AssertionError(f"ScriptedChatModel ran out of replies at request {request}")
            reply = self.replies.pop(0)
        if self.delay_s:
            time.sleep(self.delay_s)
        request["finished"] = time.monotonic()
        if callable(reply) and not isinstance(reply, ChatReply):
            reply = reply(request)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, str):
            reply = ChatReply(
                content=reply, finish_reason="stop",
                usage=Usage(llm_calls=1, prompt_tokens=100, completion_tokens=20),
            )
        if on_text is not None and reply.content:
            on_text(reply.content)  # a model that does not stream: the whole text at once
        return reply


def lookup(step_id: str, key: str, *deps: str, **extra: Any) -> Step:
    """A step calling the tests' ``lookup`` tool with ``key``."""
    return Step(id=step_id, description=f"look up {key}", tool="lookup", args={"key": key},
                depends_on=list(deps), **extra)


def answer(step_id: str, *deps: str) -> Step:
    """A synthesis step over ``deps``."""
    return Step(id=step_id, description="answer the user", depends_on=list(deps))
