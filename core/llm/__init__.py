"""Talking to OpenAI-compatible models: client, providers, settings, forced tool calls.

The face of the wing: a chat model, its settings and the engine (tools + model) a run uses.
"""

from core.llm.client import ChatModel, OpenAIChatModel
from core.llm.engine import Engine, engine_for
from core.llm.settings import LLMSettings

__all__ = ["ChatModel", "Engine", "LLMSettings", "OpenAIChatModel", "engine_for"]
