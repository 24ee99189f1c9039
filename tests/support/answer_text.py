"""An answer read as a person reads it: its Markdown tables as rows of cells, its sentences."""

from __future__ import annotations

import re

from tests.support.markdown_tokens import parse


def tables(text: str) -> list[list[list[str]]]:
    """Every table a CommonMark (GFM tables) parser finds in ``text``, as rows of cells."""
    found: list[list[list[str]]] = []
    in_cell = False
    for token in parse(text):
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            found[-1].append([])
        elif token.type in ("th_open", "td_open", "th_close", "td_close"):
            in_cell = token.type.endswith("_open")
        elif token.type == "inline" and in_cell:
            found[-1][-1].append(token.content)
    return found


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?。！？])\s+|\n+", text)
    return [p.strip(" -") for p in parts if len(p.strip(" -")) > 8]
