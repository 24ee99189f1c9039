"""What a server's prompt cache spares: the part of a prompt it does not read again.

llama.cpp's server keeps, per slot, the key-value cache of the last prompt and of the reply
it wrote, and reads a new prompt only from the first token where the two differ
(``cache_prompt``, on by default); llama-cpp-python's server does the same with its one
context (a ``prefix-match hit`` in its log). On a small local model reading is the slow
part (a 1,500-token planning prompt took 50 s on 2 cores), so what a call re-reads is
what it costs before its first word. Hosted endpoints say what their cache served
(OpenAI and vLLM: ``usage.prompt_tokens_details.cached_tokens``; DeepSeek:
``usage.prompt_cache_hit_tokens``), read into ``ChatReply.cached_tokens``; llama-cpp-python
says nothing, so :class:`PromptCache` estimates it as such a one-slot server would: the
share of the prompt's text before the first difference from the last prompt. The server
holds the reply's tokens too, but a reply sent back in a follow-up turn rarely matches
them (llama-cpp-python's template escapes the quotes a grammar made the model write as
``"``; measured: a corrective turn after a 1,529-token prompt re-read 560 tokens, the reply
and the correction), so the estimate counts no reply as served. It knows no chat template
and no tokenizer (a Chinese character counts as a token, four other characters as one, in
proportion), and calls running side by side share the one slot in the order they arrive,
as they would on the server.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from core.llm.reply import ChatReply

__all__ = ["CacheUse", "PromptCache", "rendered", "shared_prefix"]

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\uffef\u3000-\u303f]")


@dataclass(frozen=True)
class CacheUse:
    """One call: its prompt tokens, how many the cache served (reported or estimated), and
    the characters of its text, shared with what the cache held."""

    prompt_tokens: int
    cached_tokens: int
    chars: int
    shared_chars: int
    reported: bool

    @property
    def reread_tokens(self) -> int:
        """The prompt tokens the server read again."""
        return self.prompt_tokens - self.cached_tokens


def rendered(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    """A request as one text in the order a chat template lays it out: each turn's role and
    content (an assistant turn's tool calls after its text), the tools after the first
    system turn (or first of all without one)."""
    parts: list[str] = []
    specs = json.dumps(tools, ensure_ascii=False, sort_keys=True) if tools else ""
    if specs and (not messages or messages[0].get("role") != "system"):
        parts.append(f"<tools>{specs}\n")
        specs = ""
    for message in messages:
        parts.append(_turn(message))
        if specs:
            parts.append(f"<tools>{specs}\n")
            specs = ""
    return "".join(parts)


def _turn(message: dict[str, Any]) -> str:
    calls = message.get("tool_calls") or []
    called = "".join(json.dumps(call.get("function", call), ensure_ascii=False, sort_keys=True)
                     for call in calls if isinstance(call, dict))
    return f"<{message.get('role', '')}>{message.get('content') or ''}{called}\n"


def shared_prefix(first: str, second: str) -> int:
    """How many characters the two texts share from their start."""
    low, high = 0, min(len(first), len(second))
    while low < high:  # halving: slices compare in C, a prompt is tens of thousands long
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class PromptCache:
    """The one slot of a local server, as seen from the client: the last prompt's text;
    :meth:`use` says what each new call could take from it."""

    def __init__(self) -> None:
        self._held = ""
        self._lock = threading.Lock()

    def use(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
            reply: ChatReply) -> CacheUse:
        """What the cache served to the call that sent ``messages`` (and ``tools``) and got
        ``reply`` (its usage and any cached tokens it reports); the slot then holds that
        prompt."""
        text = rendered(messages, tools)
        with self._lock:
            shared = shared_prefix(self._held, text)
            self._held = text
        prompt = reply.usage.prompt_tokens
        if reply.cached_tokens is not None:
            return CacheUse(prompt, min(prompt, reply.cached_tokens), len(text), shared, True)
        whole = _weight(text)
        cached = prompt * _weight(text[:shared]) // whole if whole else 0
        return CacheUse(prompt, cached, len(text), shared, False)


def _weight(text: str) -> int:
    """About how many tokens ``text`` holds: a Chinese character is about one, four other
    characters are about one (what matters is the share of the shared part)."""
    chinese = len(_CJK.findall(text))
    return chinese * 4 + len(text) - chinese
