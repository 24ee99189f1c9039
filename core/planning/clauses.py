"""How the engine reads a request without a model: its clauses, and its search words.

Both are about language, not about any tool: a request splits on sentence ends and joining
words (另外, also, then …), and a clause's search words are the clause without filler words
and punctuation. What a clause is about in a toolset's domain is the packs' to read
(core.planning.packs.Reading).
"""

from __future__ import annotations

import re

__all__ = ["clean_query", "split_clauses"]

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
