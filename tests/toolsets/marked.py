"""A toolset that notes which process loaded it: ``register`` appends the process id to the
file ``MARKED_TOOLSET_FILE`` names. Tests name it in PLANBOARD_TOOLSETS to see whether a
process loaded the tools."""

from __future__ import annotations

import os

from core.tools.registry import ToolRegistry


def register(registry: ToolRegistry) -> None:
    """Note this process; add no tool."""
    with open(os.environ["MARKED_TOOLSET_FILE"], "a", encoding="utf-8") as marks:
        marks.write(f"{os.getpid()}\n")
