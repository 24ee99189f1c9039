"""What a run needs to work: the tools, and the model (None when PlanBoard runs offline)."""

from __future__ import annotations

from dataclasses import dataclass

from core.llm.client import ChatModel
from core.llm.settings import LLMSettings
from core.tools.registry import ToolRegistry

__all__ = ["Engine", "engine_for"]


@dataclass
class Engine:
    """The tools and the chat model of a run; ``model is None`` means offline (no LLM)."""

    registry: ToolRegistry
    model: ChatModel | None = None

    @property
    def offline(self) -> bool:
        """True when no language model is available."""
        return self.model is None


def engine_for(registry: ToolRegistry, settings: LLMSettings | None) -> Engine:
    """The tools plus a chat model for ``settings``; ``None`` settings mean offline."""
    if settings is None:
        return Engine(registry=registry, model=None)
    from core.llm.client import OpenAIChatModel

    return Engine(registry=registry, model=OpenAIChatModel(settings))
