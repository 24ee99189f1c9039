"""How plainly a text asks for a tool: its keywords, the parts of its name, its description.

The one measure the generic rules use to match words to tools (a clause to the tool it asks
for, a step's description to the tool it calls, a request to the tools worth describing to
the planner); it reads only what the tool declares.
"""

from __future__ import annotations

import re

from core.base.language import terms
from core.tools.registry import Tool

__all__ = ["PLAIN_MATCH", "matches", "relevance", "score_tool"]

# two keyword hits ("流失" and "原因" for an analytics tool): text that plainly asks for it
PLAIN_MATCH = 6

# words of four letters or more that say nothing about what a tool is for: counted in a long
# description they would rank every wordy tool above a terse one that fits
_COMMON_WORDS = frozenset((
    "about", "after", "also", "been", "does", "each", "from", "given", "have", "into",
    "just", "like", "more", "most", "only", "other", "over", "returns", "same", "some",
    "such", "than", "that", "their", "them", "then", "there", "these", "they", "this",
    "those", "under", "used", "uses", "using", "what", "when", "where", "which", "while",
    "will", "with", "without", "would", "your"))
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_MAX_TRANSLATED_HITS = 4  # Chinese bigrams of a translated description: a bounded signal


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


def relevance(candidate: Tool, request: str) -> int:
    """How relevant a tool is to a whole request, to rank a catalogue by: the weights of
    what it matches (:func:`matches`), added up."""
    return sum(matches(candidate, request).values())


def matches(candidate: Tool, request: str) -> dict[str, int]:
    """What of ``request`` a tool matches, each with its weight: its keywords (3 each),
    parts of its name (2 each: an MCP tool's server is one), parts of its arguments' names
    and words of its description (1 each, common words aside), and Chinese word pairs
    shared with its texts in other languages (1 each, at most 4). A word counts once, at
    its highest weight.

    A Chinese request finds a tool through its Chinese keywords and translated texts; a
    tool described only in English is found by the English words in the request (or, in
    the planner's prompt, by its name in the list of every tool).
    """
    text = request.lower()
    found: dict[str, int] = {}
    named = _parts([candidate.name])
    arguments = _parts(_argument_names(candidate))
    described = set(re.findall(r"[a-z]{4,}", candidate.description.lower())) - _COMMON_WORDS
    for weight, words in ((1, described), (1, arguments), (2, named),
                          (3, {kw.lower() for kw in candidate.keywords})):
        found.update({word: weight for word in words if _contains(text, word)})
    pairs = {term for term in terms(request) if _CJK.match(term)}
    if pairs:
        translated = set().union(set(), *(terms(given.description)
                                          for given in candidate.translations.values()))
        shared = sorted((pairs & translated) - set(found))[:_MAX_TRANSLATED_HITS]
        found.update(dict.fromkeys(shared, 1))
    return found


def _parts(names: list[str]) -> set[str]:
    return {part for name in names for part in re.split(r"[_\-]+", name.lower())
            if len(part) > 2}


def _argument_names(candidate: Tool) -> list[str]:
    properties = candidate.parameters.get("properties")
    return [str(name) for name in properties] if isinstance(properties, dict) else []


def _contains(text: str, word: str) -> bool:
    if re.fullmatch(r"[a-z0-9 _-]+", word):
        return re.search(rf"\b{re.escape(word)}", text) is not None
    return word in text
