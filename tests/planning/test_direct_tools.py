"""Direct answers that use tools: a request a tool fits opens with a call of it (made
directly when the rules read its arguments; the forced call is tests/llm/test_forced_call.py)."""

from __future__ import annotations

from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.runs.answers import answer_direct
from core.runs.session import request_language
from tests.support.fake_openai import text

ORDER_QUESTION = "Check order 70412 and tell me when it will arrive"
ANSWER = "Order 70412 (Bit AirPure air purifier) is in transit with tracking YT9876543210."


def ask(fake_openai, registry, request: str, provider: str = "generic"):
    with OpenAIChatModel(fake_openai.settings(provider=provider)) as model:
        return answer_direct(request, Engine(registry=registry, model=model),
                             language=request_language(request))


def offered(body: dict) -> list[str]:
    return [spec["function"]["name"] for spec in body.get("tools") or []]


PARCEL = {"tracking_no": "YT9876543210"}


def test_the_first_rounds_call_the_order_then_its_parcel_without_the_model(fake_openai,
                                                                          registry):
    # the rules read the order number from the request and the tracking number from the
    # order: both calls are made directly, as a plan's step with all its arguments is
    fake_openai.script(text(ANSWER))
    answer, usage, calls = ask(fake_openai, registry, ORDER_QUESTION)
    [body] = fake_openai.chat_bodies
    call, observation = body["messages"][-4:-2]
    assert call["role"] == "assistant" and call["content"] == ""  # llama.cpp refuses null
    assert call["tool_calls"][0]["function"]["name"] == "query_order"
    assert observation["role"] == "tool" and "in_transit" in observation["content"]
    assert "Zhengzhou" in body["messages"][-1]["content"]  # the parcel's last scan
    assert [(c.name, c.args) for c in calls] == [
        ("query_order", {"order_id": "70412"}), ("query_logistics", PARCEL)]
    assert calls[0].result["status"] == "in_transit"
    assert answer == ANSWER and usage.llm_calls == 1


def test_an_endpoint_that_takes_no_tool_messages_reads_the_results_as_turns(fake_openai,
                                                                            registry):
    fake_openai.script(text(ANSWER))
    answer, _, calls = ask(fake_openai, registry, ORDER_QUESTION, provider="llamacpp")
    [body] = fake_openai.chat_bodies
    # the parcel's tracking number comes from the order's result, not from the model
    assert [(c.name, c.args) for c in calls] == [
        ("query_order", {"order_id": "70412"}), ("query_logistics", PARCEL)]
    assistant, observation = body["messages"][2:4]  # plain turns: see core.llm.tool_messages
    assert assistant["role"] == "assistant" and '"order_id": "70412"' in assistant["content"]
    assert observation["role"] == "user"
    assert observation["content"].startswith("Result of query_order:")
    assert "YT9876543210" in observation["content"]
    assert answer == ANSWER


def test_an_unknown_order_ends_the_chain_and_the_model_answers(fake_openai, registry):
    fake_openai.script(text("Order 12345 does not exist."))
    answer, _, calls = ask(fake_openai, registry, "Check order 12345 and tell me when it "
                                                  "will arrive")
    assert [c.name for c in calls] == ["query_order"] and calls[0].error
    assert answer == "Order 12345 does not exist." and len(fake_openai.chat_bodies) == 1


def test_a_request_no_tool_fits_is_not_forced(fake_openai, registry):
    fake_openai.script(text("Why did the scarecrow win an award? He was outstanding."))
    answer, _, calls = ask(fake_openai, registry, "tell me a joke")
    [body] = fake_openai.chat_bodies
    assert "tool_choice" not in body and "query_order" in offered(body)
    assert "apply_refund" not in offered(body)
    assert calls == [] and "scarecrow" in answer
