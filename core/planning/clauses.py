"""How the engine reads a request without a model: its clauses, and its search words.

All three are about language, not about any tool: a request splits on sentence ends and
joining words (另外, also, then …), a clause's search words are the clause without filler words
and punctuation, and a request asks for something to be done again when it says so ("twice",
"again", "两次", "再…一次"). What a clause is about in a toolset's domain is the packs' to read
(core.planning.packs.Reading).
"""

from __future__ import annotations

import re

__all__ = ["asks_repeat", "clean_query", "split_clauses"]

_MAX_CLAUSE_CHARS = 600
_SPLIT = re.compile(
    r"[。；;！!？?\n]+|\.(?:\s+|$)|另外|此外|顺便|还有|然后|同时|并且|并(?=给|生成|提供|写|做|把)"
    r"|\b(?:and also|also|then|after that|in addition|besides|additionally)\b",
    re.IGNORECASE,
)
_FILLER_ZH = re.compile(
    r"我家|我们|我想|我要|帮我|帮忙|请你|请|麻烦|想要|想买|要买|一台|一个|一下|看看|给我|你好|推荐"
    r"|的话|的|了|吗|呢|吧"
)
_FILLER_EN = re.compile(
    r"\b(?:please|help me|can you|could you|i want|i need|i'd like|my|me|a|an|the|to|that|is"
    r"|recommend|find|some|for)\b", re.IGNORECASE
)


# "twice", "again", "3 times", "两次", "再…一次": the request asks for a thing more than once
_REPEAT = re.compile(
    r"\b(?:twice|thrice|again|once more|one more time|repeat(?:ed|edly)?"
    r"|(?:[2-9]|\d{2,}|two|three|four|five|several|multiple)\s+times)\b"
    r"|(?:[2-9两二三四五六七八九十]|\d{2,})\s*[次遍回]|再次|再.{0,12}?一[次遍回]|重复|又一次",
    re.IGNORECASE)
_SECOND_QUESTION = re.compile(
    r",\s*and\s+(?=(?:what|when|where|who|which|how|why|whether)\b)", re.IGNORECASE)


def split_clauses(text: str, *, questions: bool = False) -> list[str]:
    """Split a request into clauses on sentence ends and joining words (另外, also, then …).

    ``questions`` also splits before a second question joined by ", and what/how …": a
    check that every part of the request is planned needs it, while the rule drafts keep
    such a question with the one it refers back to ("…, and what is the cause of each?").
    """
    parts = _SPLIT.split(text or "")
    if questions:
        parts = [piece for part in parts for piece in _SECOND_QUESTION.split(part)]
    clauses = [part.strip(" \t,，、:：") for part in parts]
    return [clause[:_MAX_CLAUSE_CHARS] for clause in clauses if clause]


def clean_query(clause: str, *, filler: re.Pattern[str] | None = None) -> str:
    """The search words of a clause: filler words (and ``filler``'s) and punctuation removed."""
    text = _FILLER_ZH.sub(" ", clause)
    text = _FILLER_EN.sub(" ", text)
    if filler is not None:
        text = filler.sub(" ", text)
    text = re.sub(r"[^\w\u3400-\u9fff¥￥.+-]+", " ", text)
    return " ".join(text.split())[:200]


def asks_repeat(text: str) -> bool:
    """Whether ``text`` asks for something to be done more than once ("twice", "again",
    "3 times", "两次", "再…一次"): then a call planned twice may be meant twice."""
    return bool(_REPEAT.search(text or ""))
