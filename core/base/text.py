"""Short text forms of values (one-line previews, clipped text, text cut where a word ends),
model replies without their ``<think>`` blocks, and the longest request that is planned."""

from __future__ import annotations

import json
import re
from typing import Any

from core.base.messages import msg
from core.errors import ConfigError

__all__ = ["REQUEST_CHARS", "as_text", "clip", "clip_words", "preview", "refuse_long_request",
           "strip_think"]

REQUEST_CHARS = 4000
"""The longest request (or follow-up) that is planned or answered: a longer one is refused
with this limit, never cut without a word."""
_ELLIPSIS = "…"
_THINK_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)
# where a sentence ends, and where a word ends: before white space, or after punctuation
# (the ends of Chinese words are unmarked; its punctuation marks the ends of its clauses)
_SENTENCE_END = re.compile(r"(?<=[。！？；.!?;])")
_WORD_END = re.compile(r"(?=\s)|(?<=[。！？；，、：.!?;,:)）」』”])")


def as_text(value: Any) -> str:
    """A string as it is; anything else as compact JSON (Chinese kept readable)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)


def clip(value: Any, limit: int) -> str:
    """``value`` as text, cut to ``limit`` characters with an ellipsis (line breaks kept)."""
    text = as_text(value)
    return text if len(text) <= limit else text[: limit - 1] + _ELLIPSIS


def clip_words(value: Any, limit: int) -> str:
    """``value`` as text within ``limit`` characters, cut where a word ends, with an ellipsis.

    The cut comes after the last sentence that keeps at least half of ``limit``, else at
    the last word end that does; a text with neither there (one long token, Chinese
    without punctuation) is cut at ``limit``.
    """
    text = as_text(value)
    if len(text) <= limit:
        return text
    room = limit - 1
    for end in (_SENTENCE_END, _WORD_END):
        ends = [m.start() for m in end.finditer(text[: room + 1])
                if room // 2 <= m.start() <= room]
        if ends:
            return text[: ends[-1]].rstrip() + _ELLIPSIS
    return text[:room] + _ELLIPSIS


def refuse_long_request(text: str) -> None:
    """ConfigError naming the limit when ``text`` (a request or a follow-up) is longer than
    :data:`REQUEST_CHARS`: cut, it would be planned without what was cut off."""
    if len(text) > REQUEST_CHARS:
        raise ConfigError(msg("config.request_too_long", length=len(text), limit=REQUEST_CHARS))


def preview(value: Any, limit: int) -> str:
    """``value`` as text on one line (runs of white space folded), cut to ``limit``."""
    return clip(" ".join(as_text(value).split()), limit)


def strip_think(text: str) -> str:
    """A model's reply without its ``<think>``/``<thinking>`` blocks, in one pass.

    A closing tag with no opening one (a provider that drops it) ends the thinking: only
    what follows it is kept; an opening tag that is never closed (a reply cut off while
    thinking) drops everything after it.
    """
    kept: list[str] = []
    cursor, inside = 0, False
    for tag in _THINK_TAG.finditer(text or ""):
        closing = tag.group(1) == "/"
        if not inside and closing:
            kept.clear()  # all before a stray closing tag was thinking
        elif not inside:
            kept.append(text[cursor:tag.start()])
            inside = True
        elif closing:
            inside = False
        if not inside:
            cursor = tag.end()
    if not inside:
        kept.append(text[cursor:])
    return "".join(kept)
