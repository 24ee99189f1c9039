"""The demo pack: a shop, a knowledge base, an ops fleet and an analytics database.

It is a toolset like any person's own (``PLANBOARD_TOOLSETS=builtin,demo``): it imports the
engine in ``core/``, and the engine imports nothing from it. ``register`` adds the tools,
with their hints and Chinese descriptions, and the pack (demo.pack) beside them.
"""

from __future__ import annotations

from core.tools.registry import ToolRegistry
from core.tools.tool_texts import translated
from demo.analytics import ANALYTICS_TOOLS
from demo.knowledge import search_knowledge
from demo.ops import OPS_TOOLS
from demo.pack import DEMO_PACK
from demo.shop import SHOP_TOOLS
from demo.texts import TEXTS_ZH

__all__ = ["register"]


def register(registry: ToolRegistry) -> None:
    """Add the shop, knowledge, ops and analytics tools and the demo pack to ``registry``."""
    for demo_tool in (*SHOP_TOOLS, search_knowledge, *OPS_TOOLS, *ANALYTICS_TOOLS):
        registry.add(translated(demo_tool, {"zh": TEXTS_ZH[demo_tool.name]}))
    registry.add_pack(DEMO_PACK)
