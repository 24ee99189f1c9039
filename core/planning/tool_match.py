"""How plainly a text asks for a tool: its keywords, the parts of its name, its description.

The one measure the generic rules use to match words to tools (a clause to the tool it asks
for, a step's description to the tool it calls); it reads only what the tool declares.
"""

from __future__ import annotations

import re

from core.tools.registry import Tool

__all__ = ["PLAIN_MATCH", "score_tool"]

# two keyword hits ("流失" and "原因" for an analytics tool): text that plainly asks for it
PLAIN_MATCH = 6


def score_tool(candidate: Tool, clause: str) -> int:
    """How well a clause matches a tool: keyword hits (3 each), name parts (2 each) and
    description words (1 each)."""
    text = clause.lower()
    score = 3 * sum(1 for kw in candidate.keywords if _contains(text, kw.lower()))
    score += 2 * sum(1 for part in candidate.name.split("_") if len(part) > 2
                     and _contains(text, part))
    words = {w for w in re.findall(r"[a-z]{4,}", candidate.description.lower())}
    score += sum(1 for w in words if _contains(text, w))
    return score


def _contains(text: str, word: str) -> bool:
    if re.fullmatch(r"[a-z0-9 _-]+", word):
        return re.search(rf"\b{re.escape(word)}", text) is not None
    return word in text
