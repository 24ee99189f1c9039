"""Direct answers that use tools: a request a tool fits opens with a forced call of it."""

from __future__ import annotations

import pytest

from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.runs.answers import answer_direct
from core.tools.toolsets import default_registry
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


PARCEL = {"tracking_no": "YT9876543210"}


def test_the_first_rounds_force_the_order_then_its_parcel(fake_openai, registry):
    fake_openai.script(tool_call("query_order", {"order_id": "70412"}),
                       tool_call("query_logistics", PARCEL), text(ANSWER))
    answer, usage, calls = ask(fake_openai, registry, ORDER_QUESTION)
    first, second, third = fake_openai.chat_bodies
    assert offered(first) == ["query_order"]
    assert first["tool_choice"] == {"type": "function", "function": {"name": "query_order"}}
    assert offered(second) == ["query_logistics"]
    observation = second["messages"][-1]
    assert observation["role"] == "tool" and "in_transit" in observation["content"]
    call = second["messages"][-2]  # llama.cpp's server refuses an assistant message with null
    assert call["role"] == "assistant" and call["content"] == "" and call["tool_calls"]
    assert "Zhengzhou" in third["messages"][-1]["content"]  # the parcel's last scan
    assert [(c.name, c.args) for c in calls] == [
        ("query_order", {"order_id": "70412"}), ("query_logistics", PARCEL)]
    assert calls[0].result["status"] == "in_transit"
    assert answer == ANSWER and usage.llm_calls == 3


def test_an_endpoint_that_ignores_the_choice_still_gets_the_tool_results(fake_openai, registry):
    # llama.cpp's ladder is "auto" only; this model answers from memory instead
    memory = "Orders usually arrive in 3-5 days; check the courier's site."
    fake_openai.script(text(memory), text(memory), text(ANSWER))
    answer, _, calls = ask(fake_openai, registry, ORDER_QUESTION, provider="llamacpp")
    first, second, _third = fake_openai.chat_bodies
    assert offered(first) == ["query_order"] and first["tool_choice"] == "auto"
    # the parcel's tracking number comes from the order's result, not from the model
    assert [(c.name, c.args) for c in calls] == [
        ("query_order", {"order_id": "70412"}), ("query_logistics", PARCEL)]
    assistant, observation = second["messages"][-2:]  # plain turns: see core.llm.tool_messages
    assert assistant["role"] == "assistant" and '"order_id": "70412"' in assistant["content"]
    assert observation["role"] == "user"
    assert observation["content"].startswith("Result of query_order:")
    assert "YT9876543210" in observation["content"]
    assert answer == ANSWER


def test_an_unknown_order_ends_the_chain_and_the_model_answers(fake_openai, registry):
    fake_openai.script(tool_call("query_order", {"order_id": "12345"}),
                       text("Order 12345 does not exist."))
    answer, _, calls = ask(fake_openai, registry, "Check order 12345 and tell me when it "
                                                  "will arrive")
    assert [c.name for c in calls] == ["query_order"] and calls[0].error
    assert answer == "Order 12345 does not exist." and len(fake_openai.chat_bodies) == 2


def test_a_request_no_tool_fits_is_not_forced(fake_openai, registry):
    fake_openai.script(text("Why did the scarecrow win an award? He was outstanding."))
    answer, _, calls = ask(fake_openai, registry, "tell me a joke")
    [body] = fake_openai.chat_bodies
    assert "tool_choice" not in body and "query_order" in offered(body)
    assert "apply_refund" not in offered(body)
    assert calls == [] and "scarecrow" in answer


def test_arguments_that_are_not_json_fall_back_to_the_request(fake_openai, registry):
    fake_openai.script(tool_call("query_order", "{order_id: 70412"),
                       tool_call("query_logistics", PARCEL), text(ANSWER))
    _, _, calls = ask(fake_openai, registry, ORDER_QUESTION)
    assert [(c.name, c.args) for c in calls] == [
        ("query_order", {"order_id": "70412"}), ("query_logistics", PARCEL)]
