"""What an MCP tool call becomes in a run: the step's result, or the step's failure.

- ``isError``: the call failed; the server's text is the error (ToolExecutionError).
- Structured content (a JSON object the server returns beside its text) is the result, as
  data: ``{{s1.field}}`` and conditions read its fields.
- Otherwise the text (every text block, joined by blank lines; other blocks named in
  brackets). Text that is a JSON object is parsed into one, so that its fields can be read
  too; any other text stays text (``"42"`` is not a number, ``[1, 2]`` not a list: only an
  object has fields to read).
- A result bigger than :data:`MAX_RESULT_CHARS` characters (its JSON, for data) is cut to
  that many characters of text with a note saying how big it was: a 5 MB answer must not
  fill the run store, an export or a model's prompt. Data that big becomes its cut JSON
  text, no longer data.

Secrets of the configuration are redacted from all of it first.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from core.base.messages import msg
from core.errors import ToolExecutionError
from core.tools.mcp.secrets import Secrets

__all__ = ["MAX_ERROR_CHARS", "MAX_RESULT_CHARS", "call_result", "cut"]

MAX_RESULT_CHARS = 65_536
MAX_ERROR_CHARS = 2_000


def call_result(result: types.CallToolResult, *, server: str, tool: str, name: str,
                secrets: Secrets) -> Any:
    """The step result of ``result`` (the answer of ``tool`` on ``server``, known in
    PlanBoard as ``name``); ToolExecutionError when the server says the call failed."""
    text = secrets.redact(_text(result.content))
    if result.is_error:
        raise ToolExecutionError(msg("mcp.tool_error", tool=name, server=server,
                                     error=cut(text.strip() or "(no text)", MAX_ERROR_CHARS)))
    if result.structured_content is not None:
        data = secrets.redact(result.structured_content)
        dumped = json.dumps(data, ensure_ascii=False, default=str)
        return data if len(dumped) <= MAX_RESULT_CHARS else cut(dumped, MAX_RESULT_CHARS)
    if len(text) > MAX_RESULT_CHARS:
        return cut(text, MAX_RESULT_CHARS)
    return _object(text)


def cut(text: str, limit: int) -> str:
    """``text`` when it fits in ``limit`` characters, else its start with a note of its size."""
    if len(text) <= limit:
        return text
    return (f"{text[:limit]}… [cut: the answer was {len(text):,} characters; "
            f"PlanBoard keeps the first {limit:,}]")


def _text(blocks: list[Any]) -> str:
    return "\n\n".join(part for part in (_block(block) for block in blocks) if part)


def _block(block: Any) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, {len(block.data):,} characters of base64]"
    if isinstance(block, types.EmbeddedResource):
        inner = block.resource
        text = getattr(inner, "text", None)
        if isinstance(text, str):
            return text
        return f"[resource {inner.uri}: {getattr(inner, 'mime_type', None) or 'binary'}]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link {block.uri}]"
    return f"[{getattr(block, 'type', type(block).__name__)} content]"


def _object(text: str) -> Any:
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            return text
        if isinstance(parsed, dict):
            return parsed
    return text
