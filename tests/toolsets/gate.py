"""A tool that holds its step until a file exists: a test stops a worker at a known point
of a run (the step is under way) and lets the run go on by creating the file."""

from __future__ import annotations

import time
from pathlib import Path

from core.tools.registry import tool

HOLD_S = 60.0  # then the step goes on anyway, saying the gate never opened


@tool(read_only=True)
def hold(gate: str) -> dict:
    """Wait until the file ``gate`` exists, then go on.

    Args:
        gate: the path of the file that opens the gate.
    """
    deadline = time.monotonic() + HOLD_S
    while not Path(gate).exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # another process creates it: a file is the only signal it sees
    return {"opened": Path(gate).exists()}
