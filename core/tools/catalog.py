"""The default tool catalogue: built-in tools plus every demo toolset."""

from __future__ import annotations

import os
from collections.abc import Mapping

from core.tools.analytics import register_analytics_tools
from core.tools.builtin import register_builtin_tools
from core.tools.knowledge import register_knowledge_tools
from core.tools.ops import register_ops_tools
from core.tools.registry import ToolRegistry
from core.tools.research import register_research_tools
from core.tools.shop import register_shop_tools

__all__ = ["default_registry"]


def default_registry(environ: Mapping[str, str] | None = None) -> ToolRegistry:
    """A registry with builtin, shop, knowledge, ops and analytics tools (+ web_search if set)."""
    registry = ToolRegistry()
    register_builtin_tools(registry)
    register_shop_tools(registry)
    register_knowledge_tools(registry)
    register_ops_tools(registry)
    register_analytics_tools(registry)
    register_research_tools(registry, os.environ if environ is None else environ)
    return registry
