"""A person's read-only tools that count their calls across processes: each call appends its
tool's name to the file ``PLANBOARD_TEST_CALLS`` names, so that a test can tell whether a
process that crashed and the one that resumed its run called a tool twice."""

from __future__ import annotations

import os
from pathlib import Path

from core.tools.registry import ToolHints, tool

CALLS_ENV = "PLANBOARD_TEST_CALLS"
HANDBOOK = {"title": "Handbook: opening hours",
            "content": "The help desk is open from 9:00 to 17:00 on weekdays.",
            "score": 1.0, "source": "handbook.md"}


def calls() -> list[str]:
    """The tools called so far, in order, by every process of the test."""
    path = Path(os.environ[CALLS_ENV])
    return path.read_text().split() if path.exists() else []


def _count(name: str) -> None:
    with open(os.environ[CALLS_ENV], "a", encoding="utf-8") as handle:
        handle.write(name + "\n")


@tool(read_only=True, hints=ToolHints(answers_questions=True))
def search_handbook(query: str) -> dict:
    """Search the team handbook.

    Args:
        query: the question.
    """
    _count("search_handbook")
    return {"hits": [HANDBOOK]}


@tool(read_only=True)
def lookup_ticket(ticket_id: str) -> dict:
    """Look up a support ticket.

    Args:
        ticket_id: the ticket's number, for example T-7.
    """
    _count("lookup_ticket")
    return {"ticket_id": ticket_id, "status": "waiting for parts"}
