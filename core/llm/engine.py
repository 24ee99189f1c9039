"""What a run needs to work: the tools, and the model (None when PlanBoard runs offline)."""

from __future__ import annotations

from dataclasses import dataclass

from core.llm.client import ChatModel
from core.tools.registry import ToolRegistry

__all__ = ["Engine"]


@dataclass
class Engine:
    """The tools and the chat model of a run; ``model is None`` means offline (no LLM)."""

    registry: ToolRegistry
    model: ChatModel | None = None

    @property
    def offline(self) -> bool:
        """True when no language model is available."""
        return self.model is None
