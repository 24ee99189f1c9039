"""Short text forms of values: one-line previews for lists and cells, clipped text for prompts."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["as_text", "clip", "preview"]

_ELLIPSIS = "…"


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
