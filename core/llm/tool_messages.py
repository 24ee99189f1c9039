"""Tool calls and results written as plain chat turns, for servers whose template drops them.

llama-cpp-python's ``chatml-function-calling`` format renders an assistant's tool calls but
has no case for ``role: "tool"``: the result of a call never reaches the model, which then
answers from memory ("order 70412 will arrive on June 15, 2023"). For such a profile the
client sends each call as assistant text and each result as a user turn that names the
tool, so the model reads what the tool returned.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["inline_tool_messages"]


def inline_tool_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with tool calls as assistant text and tool results as user turns."""
    names: dict[str, str] = {}
    inlined: list[dict[str, Any]] = []
    for message in messages:
        calls = message.get("tool_calls") or []
        if message.get("role") == "assistant" and calls:
            lines = [str(message.get("content") or "").strip()]
            for call in calls:
                function = call.get("function") or {}
                names[str(call.get("id"))] = str(function.get("name"))
                lines.append(f"I call {function.get('name')} with {function.get('arguments')}.")
            inlined.append({"role": "assistant", "content": "\n".join(filter(None, lines))})
        elif message.get("role") == "tool":
            name = names.get(str(message.get("tool_call_id")), "the tool")
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, default=str)
            inlined.append({"role": "user", "content": f"Result of {name}:\n{text}"})
        else:
            inlined.append(message)
    return inlined
