"""Which language a request is written in (so that plans and answers follow it), and its words."""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["LANGUAGES", "Language", "detect_language", "terms", "words", "written_in"]

Language = Literal["en", "zh"]
LANGUAGES: tuple[Language, ...] = ("en", "zh")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_WORD_OR_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+|[a-z0-9_]+")
_MIN_TERM = 3


def detect_language(text: str) -> Language:
    """"zh" when the text holds Chinese characters that outweigh its English words, else "en".

    A request's language is decided once, where it enters (tests/test_language_once.py
    names those places), and carried on its plan and run from there.
    """
    return "zh" if _reads_chinese(text) else "en"


def written_in(text: str, language: Language) -> bool:
    """Whether ``text`` (a model's answer, a line of a document, a word of a tool's hints)
    reads as ``language``: a check of written text against a language already decided."""
    return _reads_chinese(text) == (language == "zh")


def _reads_chinese(text: str) -> bool:
    chinese = len(_CJK.findall(text))
    english = len(_LATIN_WORD.findall(text))
    return bool(chinese) and chinese >= english


def words(text: str, *, characters: bool = False) -> list[str]:
    """The one tokenizer: lower-cased English words (letters, digits, ``_``) and, since
    Chinese has no spaces, each run of Chinese characters as overlapping bigrams.

    ``characters`` adds every Chinese character on its own (an index that must match
    one-character queries); a one-character run is always kept.
    """
    tokens: list[str] = []
    for run in _WORD_OR_RUN.findall(text.lower()):
        if not _CJK.match(run):
            tokens.append(run)
            continue
        if characters or len(run) == 1:
            tokens.extend(run)
        tokens.extend(run[i:i + 2] for i in range(len(run) - 1))
    return tokens


def terms(text: str) -> set[str]:
    """Terms for matching two texts: Chinese bigrams and English words of 3+ characters."""
    return {w for w in words(text or "") if len(w) >= _MIN_TERM or _CJK.match(w)}
