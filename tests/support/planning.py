"""Planning in tests: a request planned against the fake OpenAI server (as a llama.cpp
endpoint), and a scripted planner with its own order lookup and refund tools."""

from __future__ import annotations

from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.planning.exchange import PlanningResult
from core.planning.planner import plan_request
from core.runs.session import request_language
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, tool
from tests.support.fake_openai import FakeOpenAI
from tests.support.fakes import ScriptedChatModel

__all__ = ["REQUEST", "apply_refund", "engine_with", "planner_registry", "planning",
           "query_order"]


def planning(fake_openai: FakeOpenAI, registry: ToolRegistry, request: str,
             *replies: str) -> PlanningResult:
    """Plan ``request``, the fake server answering with ``replies`` in turn."""
    fake_openai.script(*replies)
    with OpenAIChatModel(fake_openai.settings(provider="llamacpp")) as model:
        return plan_request(request, Engine(registry=registry, model=model),
                            language=request_language(request))


@tool(read_only=True)
def query_order(order_id: str) -> dict:
    """Look up an order and its status.

    Args:
        order_id: the order number.
    """
    return {"order_id": order_id, "status": "delivered"}


@tool
def apply_refund(order_id: str, reason: str = "not given") -> dict:
    """Request a refund for an order.

    Args:
        order_id: the order number.
        reason: why.
    """
    return {"order_id": order_id, "refund": "requested"}


REQUEST = "Check order 88231 and refund it if it was delivered"


def planner_registry() -> ToolRegistry:
    """The built-in tools plus this module's order lookup and refund (also for replanning)."""
    registry = ToolRegistry()
    register_builtin_tools(registry)
    registry.add(query_order)
    registry.add(apply_refund)
    return registry


def engine_with(registry: ToolRegistry, *replies) -> tuple[Engine, ScriptedChatModel]:
    model = ScriptedChatModel(replies=list(replies))
    return Engine(registry=registry, model=model), model
