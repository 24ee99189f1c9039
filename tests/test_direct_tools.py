"""Direct answers that use tools: a request a tool fits opens with a forced call of it."""

from __future__ import annotations

import pytest

from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.runs.answers import answer_direct
from core.tools.catalog import default_registry
from tests.fake_openai import text, tool_call

ORDER_QUESTION = "Check order 70412 and tell me when it will arrive"
ANSWER = "Order 70412 (Bit AirPure air purifier) is in transit with tracking YT9876543210."


@pytest.fixture
def registry():
    return default_registry({})


def ask(fake_openai, registry, request: str, provider: str = "generic"):
    with OpenAIChatModel(fake_openai.settings(provider=provider)) as model:
        return answer_direct(request, Engine(registry=registry, model=model))


def offered(body: dict) -> list[str]:
    return [spec["function"]["name"] for spec in body.get("tools") or []]


def test_the_first_round_forces_the_order_lookup(fake_openai, registry):
    fake_openai.script(tool_call("query_order", {"order_id": "70412"}), text(ANSWER))
    answer, usage, calls = ask(fake_openai, registry, ORDER_QUESTION)
    first, second = fake_openai.chat_bodies
    assert offered(first) == ["query_order"]
    assert first["tool_choice"] == {"type": "function", "function": {"name": "query_order"}}
    observation = second["messages"][-1]
    assert observation["role"] == "tool" and "in_transit" in observation["content"]
    call = second["messages"][-2]  # llama.cpp's server refuses an assistant message with null
    assert call["role"] == "assistant" and call["content"] == "" and call["tool_calls"]
    assert [(c.name, c.args, c.result["status"]) for c in calls] == [
        ("query_order", {"order_id": "70412"}, "in_transit")]
    assert answer == ANSWER and usage.llm_calls == 2


def test_an_endpoint_that_ignores_the_choice_still_gets_the_tool_result(fake_openai, registry):
    # llama.cpp's ladder is "auto" only; this model answers from memory instead
    fake_openai.script(text("Orders usually arrive in 3-5 days; check the courier's site."),
                       text(ANSWER))
    answer, _, calls = ask(fake_openai, registry, ORDER_QUESTION, provider="llamacpp")
    first, second = fake_openai.chat_bodies
    assert offered(first) == ["query_order"] and first["tool_choice"] == "auto"
    assert [c.name for c in calls] == ["query_order"]
    assistant, observation = second["messages"][-2:]  # plain turns: see core.llm.tool_messages
    assert assistant["role"] == "assistant" and '"order_id": "70412"' in assistant["content"]
    assert observation["role"] == "user"
    assert observation["content"].startswith("Result of query_order:")
    assert "YT9876543210" in observation["content"]
    assert answer == ANSWER


def test_a_request_no_tool_fits_is_not_forced(fake_openai, registry):
    fake_openai.script(text("Why did the scarecrow win an award? He was outstanding."))
    answer, _, calls = ask(fake_openai, registry, "tell me a joke")
    [body] = fake_openai.chat_bodies
    assert "tool_choice" not in body and "query_order" in offered(body)
    assert "apply_refund" not in offered(body)
    assert calls == [] and "scarecrow" in answer


def test_arguments_that_are_not_json_fall_back_to_the_request(fake_openai, registry):
    fake_openai.script(tool_call("query_order", "{order_id: 70412"), text(ANSWER))
    _, _, calls = ask(fake_openai, registry, ORDER_QUESTION)
    assert [(c.name, c.args) for c in calls] == [("query_order", {"order_id": "70412"})]
