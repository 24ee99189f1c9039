"""Matching a clause to a registered tool, and filling the tool's arguments from the clause."""

from __future__ import annotations

import re
from typing import Any

from core.planning.offline.text import Entities, clean_query
from core.tools.registry import Tool

__all__ = ["PLAIN_MATCH", "fill_args", "score_tool"]

# two keyword hits ("流失" and "原因" for run_sql): text that plainly asks for the tool
PLAIN_MATCH = 6


def score_tool(candidate: Tool, clause: str) -> int:
    """How well a clause matches a tool: keyword hits, name parts and description words."""
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


def fill_args(chosen: Tool, clause: str, found: Entities) -> dict[str, Any] | None:
    """Arguments for ``chosen`` read from the clause; None when a required one is missing."""
    args: dict[str, Any] = {}
    properties = chosen.parameters.get("properties", {})
    for name in properties:
        value = _value_for(name, properties[name], clause, found)
        if value is not None:
            args[name] = value
        elif name in chosen.required:
            return None
    return args


def _value_for(name: str, schema: dict, clause: str, found: Entities) -> Any:
    lowered = name.lower()
    if "order" in lowered and found.orders:
        return found.orders[0]
    if "tracking" in lowered and found.tracking:
        return found.tracking[0]
    if "service" in lowered and found.services:
        return found.services[0]
    if lowered in {"query", "text", "question", "topic", "keyword", "keywords", "q"}:
        return clean_query(clause) or clause.strip()[:200]
    if schema.get("type") in {"number", "integer"} and found.numbers:
        number = found.numbers[0]
        return int(number) if schema.get("type") == "integer" else number
    return None
