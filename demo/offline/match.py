"""Filling a tool's arguments from what a clause names (the demo's entities)."""

from __future__ import annotations

from typing import Any

from core.planning.clauses import clean_query
from core.tools.registry import Tool
from demo.offline.text import Entities

__all__ = ["fill_args"]


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
