"""Short text forms of values (one-line previews, clipped text) and model replies without
their ``<think>`` blocks."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["as_text", "clip", "preview", "strip_think"]

_ELLIPSIS = "…"
_THINK_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)


def as_text(value: Any) -> str:
    """A string as it is; anything else as compact JSON (Chinese kept readable)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)


def clip(value: Any, limit: int) -> str:
    """``value`` as text, cut to ``limit`` characters with an ellipsis (line breaks kept)."""
    text = as_text(value)
    return text if len(text) <= limit else text[: limit - 1] + _ELLIPSIS


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
