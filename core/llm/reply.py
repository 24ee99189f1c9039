"""A model's reply as data: text, tool calls and usage, read defensively from the raw body.

Whatever an endpoint sends (a proxy's HTML page, an empty body, a wrong shape), reading it
ends in a :class:`ChatReply` or a one-line :class:`core.errors.LLMResponseError` quoting it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from core.base.text import preview
from core.base.usage import Usage
from core.errors import LLMResponseError

__all__ = [
    "ChatReply",
    "ToolCall",
    "decode_template_entities",
    "one_line",
    "parse_reply",
    "unescape_template_html",
]


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
    model: str | None = None  # the model that answered, as the endpoint names it
    response_id: str | None = None
    cached_tokens: int | None = None  # prompt tokens the server's cache served, if it says


def parse_reply(body: str, base_url: str) -> ChatReply:
    """Read a chat completion body; anything unusable is an LLMResponseError quoting it."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        raise _unusable(base_url, "an empty body" if not body.strip() else "a body that is "
                        "not JSON", body) from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        raise _unusable(base_url, "a reply without choices", body)
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise _unusable(base_url, "a choice without a message", body)
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        raise _unusable(base_url, "tool_calls that are not a list", body)
    finish = choice.get("finish_reason")
    model, response_id = data.get("model"), data.get("id")
    return ChatReply(
        content=_content(message.get("content"), base_url, body),
        tool_calls=[call for index, raw in enumerate(tool_calls)
                    if (call := _tool_call(raw, index)) is not None],
        finish_reason=finish if isinstance(finish, str) else None,
        usage=_usage(data.get("usage")),
        model=model if isinstance(model, str) else None,
        response_id=response_id if isinstance(response_id, str) else None,
        cached_tokens=_cached(data.get("usage")),
    )


def _content(content: Any, base_url: str, body: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": "..."}]
        texts = [part.get("text") for part in content if isinstance(part, dict)]
        return "".join(text for text in texts if isinstance(text, str))
    raise _unusable(base_url, "message content that is not text", body)


def _tool_call(raw: Any, index: int) -> ToolCall | None:
    function = raw.get("function") if isinstance(raw, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or not name:
        return None  # a call without a name cannot be run; the caller sees no call
    arguments = function.get("arguments")
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False, default=str)
    call_id = raw.get("id")
    return ToolCall(id=call_id if isinstance(call_id, str) and call_id else f"call_{index}",
                    name=name, arguments=arguments)


def _usage(usage: Any) -> Usage:
    def tokens(key: str) -> int:
        value = usage.get(key) if isinstance(usage, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
            else 0

    return Usage(llm_calls=1, prompt_tokens=tokens("prompt_tokens"),
                 completion_tokens=tokens("completion_tokens"))


def _cached(usage: Any) -> int | None:
    """The prompt tokens the server's cache served, where it says (OpenAI, vLLM and recent
    llama.cpp: ``prompt_tokens_details.cached_tokens``; DeepSeek: ``prompt_cache_hit_tokens``)."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details")
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    if value is None:
        value = usage.get("prompt_cache_hit_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _unusable(base_url: str, what: str, body: str) -> LLMResponseError:
    shown = f": {one_line(body, 80)!r}" if body.strip() else ""
    return LLMResponseError(
        f"{base_url} answered with {what}{shown}. Check that OPENAI_BASE_URL is an "
        "OpenAI-compatible chat completions endpoint."
    )


def one_line(text: object, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit``, without a closing full stop (messages add one)."""
    return preview(" ".join(str(text).split()).rstrip("."), limit)


# the entities Jinja's autoescape writes (markupsafe): & < > " '
_TEMPLATE_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&#34;": '"', "&#39;": "'"}
_TEMPLATE_ENTITY = re.compile("|".join(map(re.escape, _TEMPLATE_ENTITIES)))


def unescape_template_html(reply: ChatReply) -> ChatReply:
    """``reply`` with the HTML entities of an autoescaping chat template decoded.

    A reply that is JSON (a plan, tool-call arguments) is decoded string by string, so
    that a quote written ``&#34;`` inside a value cannot end the string; other text is
    decoded as a whole.
    """
    calls = [call.model_copy(update={"arguments": _unescape_json_text(call.arguments)})
             for call in reply.tool_calls]
    content = reply.content
    if content is not None:
        content = _unescape_json_text(content)
    return reply.model_copy(update={"content": content, "tool_calls": calls})


def decode_template_entities(text: str) -> str:
    """``text`` with the entities an autoescaping chat template writes decoded."""
    return _TEMPLATE_ENTITY.sub(lambda found: _TEMPLATE_ENTITIES[found.group()], text)


def _unescape_json_text(text: str) -> str:
    if not _TEMPLATE_ENTITY.search(text):
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return decode_template_entities(text)
    if isinstance(value, str | int | float | bool) or value is None:
        # prose that happens to parse ("&amp;" is not JSON)
        return decode_template_entities(text)
    return json.dumps(_unescape_strings(value), ensure_ascii=False)


def _unescape_strings(value: Any) -> Any:
    if isinstance(value, str):
        return decode_template_entities(value)
    if isinstance(value, dict):
        return {decode_template_entities(str(key)): _unescape_strings(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_unescape_strings(item) for item in value]
    return value
