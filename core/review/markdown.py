"""A Markdown plan read as steps: its numbered or bulleted items become a chain.

A coding assistant's plan mode writes its plan as Markdown: a title, some prose and a list
of what it will do. The items at the outermost level of the lists are the steps, in
order, each depending on the one before; an item's nested items and continuation lines
stay part of its description. Code blocks are text, never items.
"""

from __future__ import annotations

import re

__all__ = ["markdown_steps"]

_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?:\d{1,9}[.)]|[-*+])[ \t]+(?P<text>\S.*)$")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(?P<text>.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_CHECKBOX = re.compile(r"^\[[ xX]\][ \t]+")


def markdown_steps(text: str) -> tuple[str, list[str]]:
    """The plan's goal (its first heading, else its first line of prose, else empty) and
    the description of each outermost item, in order (empty when it has no items)."""
    goal = ""
    items: list[tuple[int, list[str]]] = []  # (indent, lines) of every item, in order
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.strip():
            continue
        item = _ITEM.match(line)
        if item:
            indent = len(item["indent"].expandtabs(4))
            items.append((indent, [_CHECKBOX.sub("", item["text"].strip())]))
        elif items and line[:1] in (" ", "\t"):
            items[-1][1].append(line.strip())  # a continuation of the item above
        elif not goal:
            heading = _HEADING.match(line)
            goal = (heading["text"] if heading else line).strip()
    if not items:
        return goal, []
    outermost = min(indent for indent, _ in items)
    steps: list[list[str]] = []
    for indent, lines in items:
        if indent == outermost or not steps:
            steps.append(list(lines))
        else:
            steps[-1].extend(lines)
    return goal, ["; ".join(lines) for lines in steps]
