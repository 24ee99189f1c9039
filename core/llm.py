"""The language-model interface the engine uses, and its OpenAI-compatible implementation."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from core.usage import Usage

__all__ = ["ChatModel", "ChatReply", "ModelRole", "ToolCall"]

ModelRole = Literal["planner", "executor"]


class ToolCall(BaseModel):
    """A function call the model asked for; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str


class ChatReply(BaseModel):
    """One chat completion: text and/or tool calls, and what it cost."""

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=lambda: Usage(llm_calls=1))


class ChatModel(Protocol):
    """What the planner and executor need from a model (tests pass a scripted fake)."""

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        role: ModelRole = "executor",
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        json_mode: bool = False,
    ) -> ChatReply:
        """Send one chat completion request and return the reply."""
        ...
