"""The demo pack: a shop, a knowledge base, an ops fleet and an analytics database.

It is a toolset like any person's own (``PLANBOARD_TOOLSETS=builtin,demo``): the engine in
``core/`` imports nothing from it.
"""

from __future__ import annotations

from core.tools.analytics import register_analytics_tools
from core.tools.knowledge import register_knowledge_tools
from core.tools.ops import register_ops_tools
from core.tools.registry import ToolRegistry
from core.tools.shop import register_shop_tools

__all__ = ["register"]


def register(registry: ToolRegistry) -> None:
    """Add the shop, knowledge, ops and analytics tools to ``registry``."""
    register_shop_tools(registry)
    register_knowledge_tools(registry)
    register_ops_tools(registry)
    register_analytics_tools(registry)
