"""Planning a request against the fake OpenAI server, as a llama.cpp endpoint."""

from __future__ import annotations

from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.planning.exchange import PlanningResult
from core.planning.planner import plan_request
from core.runs.session import request_language
from core.tools.registry import ToolRegistry
from tests.support.fake_openai import FakeOpenAI

__all__ = ["planning"]


def planning(fake_openai: FakeOpenAI, registry: ToolRegistry, request: str,
             *replies: str) -> PlanningResult:
    """Plan ``request``, the fake server answering with ``replies`` in turn."""
    fake_openai.script(*replies)
    with OpenAIChatModel(fake_openai.settings(provider="llamacpp")) as model:
        return plan_request(request, Engine(registry=registry, model=model),
                            language=request_language(request))
