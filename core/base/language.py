"""Which language a request is written in, so that plans and answers can follow it."""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Language", "detect_language", "pick"]

Language = Literal["zh", "en"]
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def detect_language(text: str) -> Language:
    """"zh" when the text holds Chinese characters that outweigh its English words, else "en"."""
    chinese = len(_CJK.findall(text))
    english = len(_LATIN_WORD.findall(text))
    return "zh" if chinese and chinese >= english else "en"


def pick(lang: Language, zh: str, en: str) -> str:
    """The Chinese or the English text, by language."""
    return zh if lang == "zh" else en
