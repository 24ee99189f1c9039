"""A step's id: ``s`` and a number (s1, s2, …), the one pattern every wing reads it with."""

from __future__ import annotations

import re

__all__ = ["STEP_ID", "step_number"]

STEP_ID = re.compile(r"^s(\d+)$")


def step_number(step_id: str) -> int | None:
    """The number of a step id (``s12`` → 12), None for anything else."""
    match = STEP_ID.match(step_id)
    return int(match.group(1)) if match else None
