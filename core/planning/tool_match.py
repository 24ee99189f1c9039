"""How plainly a text asks for a tool: its keywords, the parts of its name, its description.

The one measure the generic rules use to match words to tools (a clause to the tool it asks
for, a step's description to the tool it calls, a request to the tools worth describing to
the planner); it reads only what the tool declares.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

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
_PLAIN_WORD = re.compile(r"[a-z0-9 _-]+")
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
    for weight, words in _weighted_words(candidate.name, candidate.description,
                                         candidate.keywords, tuple(_argument_names(candidate))):
        found.update({word: weight for word in words if _contains(text, word)})
    pairs = {term for term in terms(request) if _CJK.match(term)} if _CJK.search(request) else ()
    if pairs:
        translated = set().union(set(), *(terms(given.description)
                                          for given in candidate.translations.values()))
        shared = sorted((pairs & translated) - set(found))[:_MAX_TRANSLATED_HITS]
        found.update(dict.fromkeys(shared, 1))
    return found


@lru_cache(maxsize=4096)
def _weighted_words(name: str, description: str, keywords: tuple[str, ...],
                    arguments: tuple[str, ...]) -> tuple[tuple[int, frozenset[str]], ...]:
    """A tool's words by weight, lowest first (read once per tool: a catalogue is matched
    against every request and every step)."""
    described = set(re.findall(r"[a-z]{4,}", description.lower())) - _COMMON_WORDS
    return ((1, frozenset(described)), (1, frozenset(_parts(list(arguments)))),
            (2, frozenset(_parts([name]))), (3, frozenset(kw.lower() for kw in keywords)))


def _parts(names: list[str]) -> set[str]:
    return {part for name in names for part in re.split(r"[_\-]+", name.lower())
            if len(part) > 2}


def _argument_names(candidate: Tool) -> list[str]:
    properties = candidate.parameters.get("properties")
    return [str(name) for name in properties] if isinstance(properties, dict) else []


def _contains(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word``; a plain ASCII word only where a word starts (the
    regular expression ``\\bword``, found with ``str.find``: this runs for every word of
    every tool against every request and plan step, and a search per word cost the
    planner's checks most of their time)."""
    if not _plain(word):
        return word in text
    starts_word = _word_char(word[0])
    found = text.find(word)
    while found != -1:
        after_word = found > 0 and _word_char(text[found - 1])
        if after_word != starts_word:  # a word boundary: one side a word character
            return True
        found = text.find(word, found + 1)
    return False


@cache
def _plain(word: str) -> bool:
    return _PLAIN_WORD.fullmatch(word) is not None


def _word_char(char: str) -> bool:
    """What ``\\w`` matches in a ``str`` pattern."""
    return char.isalnum() or char == "_"
