"""Tool calls and results as plain turns for llama.cpp-style templates (fake server)."""

from __future__ import annotations

import json

import pytest

from core.base.usage import Usage
from core.execution.react import run_react
from core.llm.client import OpenAIChatModel
from core.llm.tool_messages import inline_tool_messages
from core.tools.toolsets import default_registry
from tests.support.fake_openai import text, tool_call

CALL = {"role": "assistant", "content": "",
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "query_order",
                                     "arguments": "{\"order_id\": \"70412\"}"}}]}
RESULT = {"role": "tool", "tool_call_id": "call_1",
          "content": json.dumps({"status": "in_transit", "expected_delivery": "2026-06-25"})}
ASK = {"role": "user", "content": "When will order 70412 arrive?"}


def test_calls_become_assistant_text_and_results_user_turns_naming_the_tool():
    turns = inline_tool_messages([ASK, CALL, RESULT])
    assert turns[0] == ASK
    assert turns[1] == {"role": "assistant",
                        "content": 'I call query_order with {"order_id": "70412"}.'}
    assert turns[2]["role"] == "user"
    assert turns[2]["content"].startswith("Result of query_order:\n")
    assert "2026-06-25" in turns[2]["content"]
    assert all("tool_calls" not in turn and turn["role"] != "tool" for turn in turns)


@pytest.mark.parametrize(("provider", "inlined"), [("llamacpp", True), ("openai", False)])
def test_the_profile_decides_what_the_server_receives(fake_openai, provider, inlined):
    fake_openai.script(text("It arrives on 2026-06-25."))
    with OpenAIChatModel(fake_openai.settings(provider=provider)) as model:
        model.chat([ASK, CALL, RESULT], role="executor")
    sent = fake_openai.chat_bodies[-1]["messages"]
    roles = [message["role"] for message in sent]
    if inlined:
        assert roles == ["user", "assistant", "user"]
        assert "Result of query_order" in sent[2]["content"]
    else:
        assert roles == ["user", "assistant", "tool"]
        assert sent[1]["tool_calls"][0]["function"]["name"] == "query_order"


class Tally:
    """What run_react adds its usage to."""

    def __init__(self) -> None:
        self.usage = Usage()


def test_a_react_round_on_llamacpp_shows_the_model_the_tools_result(fake_openai):
    fake_openai.script(tool_call("query_order", {"order_id": "70412"}),
                       text("Order 70412 is in transit."))
    with OpenAIChatModel(fake_openai.settings(provider="llamacpp")) as model:
        result = run_react(model, default_registry({}), [ASK], tally=Tally())
    assert result.text == "Order 70412 is in transit."
    second = fake_openai.chat_bodies[1]["messages"]
    assert second[-1]["role"] == "user" and "Result of query_order" in second[-1]["content"]
    assert "in_transit" in second[-1]["content"]
