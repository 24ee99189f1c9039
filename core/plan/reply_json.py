"""Find the JSON in a model's reply: past <think> blocks, fences, prose and broken text.

Linear in the size of the reply whatever it holds; values nested deeper than
:data:`MAX_DEPTH` are refused, and lone surrogates become U+FFFD so that anything found
can be stored and printed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from core.base.text import strip_think
from core.errors import PlanParseError

__all__ = ["MAX_DEPTH", "extract_json", "without_lone_surrogates"]

_FENCE = "```"
_FENCE_TAG = re.compile(r"[\w-]*[ \t]*\n?")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
MAX_DEPTH = 32  # JSON nested deeper than this is no plan (and would strain every reader)
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_MAX_STARTS = 200
_FULL_PLAN = 3
_JSON_START = re.compile(r"[\[{]")


def extract_json(text: str) -> Any:
    """The JSON value in ``text`` that looks most like a plan.

    Survives ``<think>`` blocks, code fences, prose before and after the JSON, and a
    trailing comma before ``}`` or ``]``. Raises PlanParseError (keeping ``raw``) otherwise.
    """
    text = without_lone_surrogates(text or "")
    cleaned = strip_think(text)
    if not cleaned.strip():
        reason = "the reply holds only a <think> block" if text.strip() else "the reply is empty"
        raise PlanParseError(f"{reason}; expected a JSON plan", raw=text)
    best: list[Any] = []
    best_score = -1
    too_deep = False
    for chunk in _chunks(cleaned):
        escapes_surrogates = _SURROGATE_ESCAPE.search(chunk) is not None
        for value in _decode_all(chunk):
            if value is _NESTED_TOO_DEEP or not _nested_within(value, MAX_DEPTH):
                too_deep = True
                continue
            if escapes_surrogates:  # "\ud800" in JSON decodes to a lone surrogate
                value = _sanitised(value)
            score = _plan_score(value)
            if score == _FULL_PLAN:
                return value
            if score > best_score:
                best, best_score = [value], score
    if best:
        return best[0]
    if too_deep:
        raise PlanParseError(f"the JSON is nested deeper than {MAX_DEPTH} levels; send a flat "
                             'plan: {"steps": [...]}', raw=text)
    raise PlanParseError(
        "the reply holds no JSON object or array; answer with the plan as JSON", raw=text
    )


# ---- finding the JSON ---------------------------------------------------------------------


def _fenced_blocks(text: str) -> list[str]:
    """The bodies of complete ``` fences, found with plain searches (linear in ``text``)."""
    blocks: list[str] = []
    position = 0
    while (start := text.find(_FENCE, position)) >= 0:
        tag = _FENCE_TAG.match(text, start + len(_FENCE))
        body_start = tag.end() if tag else start + len(_FENCE)
        end = text.find(_FENCE, body_start)
        if end < 0:
            break
        blocks.append(text[body_start:end])
        position = end + len(_FENCE)
    return blocks


def _chunks(text: str) -> Iterator[str]:
    fenced = _fenced_blocks(text)
    for chunk in [*fenced, text]:
        yield chunk
    for chunk in [*fenced, text]:
        fixed = _TRAILING_COMMA.sub(r"\1", chunk)
        if fixed != chunk:
            yield fixed


def _decode_all(chunk: str) -> Iterator[Any]:
    decoder = json.JSONDecoder()
    position, starts = 0, 0
    while starts < _MAX_STARTS:
        match = _JSON_START.search(chunk, position)
        if not match:
            return
        starts += 1
        try:
            value, end = decoder.raw_decode(chunk, match.start())
        except ValueError:  # not JSON here, or a number past Python's int limits
            position = match.start() + 1
            continue
        except RecursionError:
            yield _NESTED_TOO_DEEP
            position = match.start() + 1
            continue
        yield value
        position = end


_NESTED_TOO_DEEP = object()  # what _decode_all yields where the decoder ran out of stack


def without_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (unencodable in UTF-8) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


def _nested_within(value: Any, limit: int) -> bool:
    """True when lists and objects in ``value`` nest at most ``limit`` levels deep."""
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return False
            pending.extend((child, depth + 1) for child in children
                           if isinstance(child, (dict, list)))
    return True


def _sanitised(value: Any) -> Any:
    """``value`` with lone surrogates replaced (its depth is already known to be bounded)."""
    if isinstance(value, str):
        return without_lone_surrogates(value)
    if isinstance(value, list):
        return [_sanitised(item) for item in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(key): _sanitised(item) for key, item in value.items()}
    return value


def _plan_score(value: Any) -> int:
    """3: an object with "steps"; 2: a list of step objects; 1: a list of texts; else 0."""
    while isinstance(value, dict):
        if isinstance(value.get("steps"), list):
            return _FULL_PLAN
        value = value.get("plan")
    if isinstance(value, list) and value:
        if all(isinstance(item, dict) for item in value):
            return 2
        if all(isinstance(item, (dict, str)) for item in value):
            return 1
    return 0
