"""Tools: the registry, the built-in tools and the demo toolsets."""

from core.tools.registry import Tool, ToolRegistry, tool

__all__ = ["Tool", "ToolRegistry", "tool"]
