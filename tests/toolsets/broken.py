"""A toolset whose register() fails: the other toolsets must still load."""

from __future__ import annotations

from core.tools.registry import ToolRegistry


def register(registry: ToolRegistry) -> None:
    raise RuntimeError("the weather service is down")
