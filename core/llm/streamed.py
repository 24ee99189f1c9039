"""A streamed chat completion read as it arrives: server-sent events into one ChatReply.

OpenAI-compatible servers stream a reply as ``data: {chunk}`` lines, each chunk carrying a
``delta`` of the text (or of tool calls), then the finish reason, a usage chunk when asked
for one, and ``data: [DONE]``. :func:`read_events` gathers them into the
:class:`ChatReply` a whole reply would have given, telling ``on_text`` the text so far each
time more arrives. A stream that ends before its finish reason or ``[DONE]``, sends an error
event or a chunk that is not JSON is *broken*: the caller asks again without streaming.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from core.llm.reply import ChatReply, parse_reply

__all__ = ["StreamBroken", "TextListener", "read_events", "settled_text"]

TextListener = Callable[[str], None]
"""Told the reply's text so far each time more of it arrives."""

# the longest HTML entity an escaping chat template writes ("&#34;", "&amp;")
_LONGEST_ENTITY = 5


class StreamBroken(Exception):
    """The stream ended or failed before the reply was complete (a fallback, never shown)."""


@dataclass
class _Gathered:
    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish: str | None = None
    done: bool = False
    usage: dict[str, Any] | None = None
    model: str | None = None
    response_id: str | None = None

    def add(self, chunk: dict[str, Any]) -> bool:
        """Take one chunk; True when it added text."""
        self.model = self.model or _text_or_none(chunk.get("model"))
        self.response_id = self.response_id or _text_or_none(chunk.get("id"))
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            return False
        self.finish = _text_or_none(choice.get("finish_reason")) or self.finish
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return False
        for position, call in enumerate(delta.get("tool_calls") or []):
            self._add_call(position, call)
        piece = delta.get("content")
        if isinstance(piece, str) and piece:
            self.text.append(piece)
            return True
        return False

    def _add_call(self, position: int, call: Any) -> None:
        if not isinstance(call, dict):
            return
        index = call.get("index") if isinstance(call.get("index"), int) else position
        gathered = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        gathered["id"] = gathered["id"] or _text_or_none(call.get("id")) or ""
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        gathered["name"] += _text_or_none(function.get("name")) or ""
        gathered["arguments"] += _text_or_none(function.get("arguments")) or ""

    def reply(self, base_url: str) -> ChatReply:
        """The reply these chunks make, read as a whole reply is (one parser for both)."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.calls:
            message["tool_calls"] = [
                {"id": call["id"], "type": "function",
                 "function": {"name": call["name"], "arguments": call["arguments"]}}
                for _, call in sorted(self.calls.items())]
        body = {"id": self.response_id, "model": self.model, "usage": self.usage,
                "choices": [{"index": 0, "message": message, "finish_reason": self.finish}]}
        return parse_reply(json.dumps(body), base_url)


def read_events(lines: Iterable[str], base_url: str, on_text: TextListener, *,
                decode: Callable[[str], str] | None = None) -> ChatReply:
    """The reply the server-sent event ``lines`` carry; StreamBroken if they stop short.

    ``on_text`` hears the text so far (through ``decode`` when the template escapes it,
    a trailing entity held back until it is whole, so that what it hears only grows).
    """
    gathered = _Gathered()
    for line in lines:
        if not line.startswith("data:"):
            continue  # comments, event names, keep-alives, blank separators
        data = line[len("data:"):].strip()
        if data == "[DONE]":
            gathered.done = True
            break
        try:
            chunk = json.loads(data)
        except ValueError:
            raise StreamBroken(f"a chunk that is not JSON: {data[:80]!r}") from None
        if not isinstance(chunk, dict) or "error" in chunk:
            raise StreamBroken(f"an error event: {data[:200]!r}")
        if gathered.add(chunk):
            text = "".join(gathered.text)
            on_text(settled_text(text, decode) if decode is not None else text)
    if not gathered.done and gathered.finish is None:
        raise StreamBroken("the stream ended before the reply was complete")
    return gathered.reply(base_url)


def settled_text(text: str, decode: Callable[[str], str]) -> str:
    """``text`` decoded, without a trailing ``&…`` that may still become an entity."""
    tail = text.rfind("&", max(0, len(text) - _LONGEST_ENTITY + 1))
    if tail >= 0 and ";" not in text[tail:]:
        text = text[:tail]
    return decode(text)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
