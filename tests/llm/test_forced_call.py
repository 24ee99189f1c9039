"""force_tool_call: one tool exposed, the provider ladder walked, and the reply checked."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from core.base.usage import Usage
from core.errors import LLMAuthError, LLMBadRequestError
from core.llm.client import OpenAIChatModel
from core.llm.forced_call import force_tool_call, tool_choice_for
from core.llm.providers import PROFILES, ProviderProfile
from core.tools.builtin import calculate
from tests.support.fake_openai import (
    FakeOpenAI,
    error,
    text,
    tool_call,
    tool_calls,
)
from tests.support.fakes import ScriptedChatModel
from tests.support.fakes import tool_reply as scripted_tool_reply

MESSAGES = [{"role": "user", "content": "What is 6 times 7?"}]
NAMED = {"type": "function", "function": {"name": "calculate"}}


@dataclass
class ProfiledModel(ScriptedChatModel):
    """A scripted model that carries a provider profile, like OpenAIChatModel does."""

    profile: ProviderProfile = PROFILES["generic"]


def test_named_choice_honoured_exposes_only_that_tool():
    model = ScriptedChatModel([scripted_tool_reply("calculate", {"expression": "6*7"})])
    forced = force_tool_call(model, MESSAGES, calculate)
    assert forced.call is not None and forced.call.name == "calculate"
    assert json.loads(forced.call.arguments) == {"expression": "6*7"}
    assert forced.mode_used == "named"
    assert forced.notes == []
    assert forced.usage == Usage(llm_calls=1, prompt_tokens=50, completion_tokens=10)
    [request] = model.requests
    assert request["tools"] == [calculate.openai_spec()]
    assert request["tool_choice"] == NAMED
    assert request["role"] == "executor"


def test_rejected_named_choice_moves_down_to_required():
    model = ScriptedChatModel([
        LLMBadRequestError("The endpoint rejected the request (400): bad tool_choice."),
        scripted_tool_reply("calculate", {"expression": "6*7"}),
    ])
    forced = force_tool_call(model, MESSAGES, calculate, role="planner")
    assert forced.call is not None
    assert forced.mode_used == "required"
    assert [r["tool_choice"] for r in model.requests] == [NAMED, "required"]
    assert model.requests[0]["role"] == "planner"
    assert len(forced.notes) == 1 and "'named' was rejected" in forced.notes[0]
    assert "retrying with 'required'" in forced.notes[0]
    assert forced.usage.llm_calls == 2
    assert forced.usage.prompt_tokens == 50


def test_ignored_choice_with_a_text_answer_gives_no_call():
    model = ProfiledModel(["The answer is 42."], profile=PROFILES["ollama"])
    forced = force_tool_call(model, MESSAGES, calculate)
    assert forced.call is None
    assert forced.mode_used == "auto"
    assert forced.content == "The answer is 42."
    assert "not honoured" in forced.notes[-1] and "answered with text" in forced.notes[-1]
    assert model.requests[0]["tool_choice"] == "auto"
    assert forced.usage.llm_calls == 1


def test_a_call_to_another_tool_is_not_accepted():
    model = ScriptedChatModel([scripted_tool_reply("get_current_time", {})])
    forced = force_tool_call(model, MESSAGES, calculate)
    assert forced.call is None
    assert "called get_current_time instead of 'calculate'" in forced.notes[-1]


def test_every_rung_rejected_raises_with_the_last_reason():
    model = ProfiledModel([LLMBadRequestError("no object"), LLMBadRequestError("no required"),
                           LLMBadRequestError("no tools at all")])
    with pytest.raises(LLMBadRequestError, match=r"named, required, auto.*no tools at all"):
        force_tool_call(model, MESSAGES, calculate)
    assert len(model.requests) == 3


def test_other_errors_are_not_swallowed():
    model = ScriptedChatModel([LLMAuthError("The endpoint rejected the API key (401).")])
    with pytest.raises(LLMAuthError):
        force_tool_call(model, MESSAGES, calculate)
    assert len(model.requests) == 1


def test_tool_choice_for_each_rung():
    assert tool_choice_for("named", "calculate") == NAMED
    assert tool_choice_for("required", "calculate") == "required"
    assert tool_choice_for("auto", "calculate") == "auto"


def _model(server: FakeOpenAI, provider: str) -> OpenAIChatModel:
    return OpenAIChatModel(server.settings(provider=provider))


def test_over_http_lm_studio_rejects_the_object_and_required_is_used():
    with FakeOpenAI(reject_object_tool_choice=True) as server:
        server.script(tool_call("calculate", {"expression": "6*7"}))
        with _model(server, "generic") as model:
            forced = force_tool_call(model, MESSAGES, calculate)
        assert forced.call is not None and forced.mode_used == "required"
        assert [r.status for r in server.requests] == [400, 200]
        assert [b["tool_choice"] for b in server.chat_bodies] == [NAMED, "required"]
        assert "Invalid tool_choice type" in forced.notes[0]


def test_over_http_dashscope_sends_enable_thinking_false(fake_openai):
    fake_openai.script(tool_call("calculate", {"expression": "6*7"}))
    with _model(fake_openai, "dashscope") as model:
        forced = force_tool_call(model, MESSAGES, calculate)
    body = fake_openai.chat_bodies[0]
    assert body["enable_thinking"] is False
    assert body["tools"] == [calculate.openai_spec()]
    assert body["tool_choice"] == NAMED
    assert forced.call is not None
    assert forced.usage.llm_calls == 1 and forced.usage.prompt_tokens > 0


def test_over_http_deepseek_disables_thinking_and_llamacpp_checks_auto(fake_openai):
    fake_openai.script(tool_call("calculate", {"expression": "1"}),
                       text("I would rather just say 42."))
    with _model(fake_openai, "deepseek") as deepseek, _model(fake_openai, "llamacpp") as llama:
        assert force_tool_call(deepseek, MESSAGES, calculate).call is not None
        ignored = force_tool_call(llama, MESSAGES, calculate)
    first, second = fake_openai.chat_bodies
    assert first["thinking"] == {"type": "disabled"}
    assert second["tool_choice"] == "auto" and "thinking" not in second
    assert ignored.call is None and ignored.content == "I would rather just say 42."


def test_over_http_several_calls_take_the_matching_one(fake_openai):
    fake_openai.script(tool_calls(("get_current_time", {}), ("calculate", {"expression": "2"})))
    with _model(fake_openai, "openai") as model:
        forced = force_tool_call(model, MESSAGES, calculate)
    assert forced.call is not None and json.loads(forced.call.arguments) == {"expression": "2"}
    assert "2 tool calls" in forced.notes[0]


def test_over_http_server_rejecting_everything_raises(fake_openai):
    fake_openai.script(error(400, "tools unsupported"))
    with _model(fake_openai, "ollama") as model, pytest.raises(LLMBadRequestError,
                                                               match="tools unsupported"):
        force_tool_call(model, MESSAGES, calculate)
