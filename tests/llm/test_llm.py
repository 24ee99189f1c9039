"""OpenAIChatModel against the fake OpenAI-compatible server: replies, usage, errors."""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.errors import (
    ConfigError,
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMModelNotFoundError,
    LLMResponseError,
)
from core.llm.client import OpenAIChatModel
from core.llm.settings import LLMSettings
from tests.support.fake_openai import (
    FakeOpenAI,
    FakeRaw,
    FakeReply,
    error,
    text,
    tool_call,
)
from tests.support.fake_openai_server import load_script

HELLO = [{"role": "user", "content": "hello"}]
CALC_SPEC = {
    "type": "function",
    "function": {"name": "calculate", "description": "Evaluate arithmetic.",
                 "parameters": {"type": "object",
                                "properties": {"expression": {"type": "string"}},
                                "required": ["expression"]}},
}


@pytest.fixture
def model_for(fake_openai):
    """Build OpenAIChatModels on the fake server and close them after the test."""
    made: list[OpenAIChatModel] = []

    def build(**overrides):
        made.append(OpenAIChatModel(fake_openai.settings(**overrides)))
        return made[-1]

    yield build
    for model in made:
        model.close()


def test_importing_and_constructing_make_no_client():
    assert "core.llm.client" in sys.modules
    model = OpenAIChatModel(LLMSettings(api_key="sk-x"))
    assert model._client is None
    assert model.profile.name == "openai"


def test_text_reply_with_usage(fake_openai, model_for):
    fake_openai.script(text("Hi there", usage=(42, 7)))
    reply = model_for().chat(HELLO)
    assert reply.content == "Hi there"
    assert reply.tool_calls == []
    assert reply.finish_reason == "stop"
    assert (reply.usage.llm_calls, reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
        1, 42, 7)
    request = fake_openai.requests[0]
    assert (request.method, request.path, request.status) == ("POST", "/v1/chat/completions", 200)
    assert request.auth_ok
    assert request.body["messages"] == HELLO
    assert "tools" not in request.body and "response_format" not in request.body


def test_role_selects_the_model(fake_openai, model_for):
    fake_openai.script("plan", "act")
    model = model_for(planner_model="fake-planner", executor_model="fake-executor")
    model.chat(HELLO, role="planner")
    model.chat(HELLO)
    assert [body["model"] for body in fake_openai.chat_bodies] == ["fake-planner",
                                                                  "fake-executor"]


def test_tool_call_reply_and_tools_passed_through(fake_openai, model_for):
    fake_openai.script(tool_call("calculate", {"expression": "6*7"}))
    choice = {"type": "function", "function": {"name": "calculate"}}
    reply = model_for().chat(HELLO, tools=[CALC_SPEC], tool_choice=choice)
    assert reply.content is None
    assert reply.finish_reason == "tool_calls"
    [call] = reply.tool_calls
    assert call.name == "calculate"
    assert json.loads(call.arguments) == {"expression": "6*7"}
    assert call.id
    body = fake_openai.chat_bodies[0]
    assert body["tools"] == [CALC_SPEC]
    assert body["tool_choice"] == choice
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


def test_json_mode_sends_response_format_only_when_supported(fake_openai, model_for):
    fake_openai.script("{}", "{}", "{}")
    model_for().chat(HELLO, json_mode=True)
    model_for(provider="lmstudio").chat(HELLO, json_mode=True)
    model_for().chat(HELLO, json_mode=False)
    formats = [body.get("response_format") for body in fake_openai.chat_bodies]
    assert formats == [{"type": "json_object"}, None, None]


def test_extra_body_is_merged_into_the_request(fake_openai, model_for):
    fake_openai.script("ok")
    model_for().chat(HELLO, extra_body={"enable_thinking": False})
    assert fake_openai.chat_bodies[0]["enable_thinking"] is False


def test_missing_usage_counts_the_call_with_zero_tokens(fake_openai, model_for):
    fake_openai.script(FakeReply(content="no usage", include_usage=False))
    reply = model_for().chat(HELLO)
    assert reply.content == "no usage"
    assert reply.usage.llm_calls == 1
    assert reply.usage.total_tokens == 0


def test_wrong_key_is_an_auth_error(fake_openai, model_for):
    with pytest.raises(LLMAuthError) as caught:
        model_for(api_key="sk-wrong-key-987").chat(HELLO)
    assert str(caught.value) == (
        "The endpoint rejected the API key (401). Check OPENAI_API_KEY or the key in the sidebar."
    )
    assert not fake_openai.requests[0].auth_ok
    assert fake_openai.requests[0].headers["authorization"] == "***"


def test_unknown_model_names_the_model_and_the_variable(fake_openai, model_for):
    with pytest.raises(LLMModelNotFoundError) as caught:
        model_for(planner_model="gpt-9-ultra").chat(HELLO, role="planner")
    message = str(caught.value)
    assert "'gpt-9-ultra'" in message
    assert "PLANBOARD_PLANNER_MODEL" in message
    assert fake_openai.base_url in message


def test_closed_port_is_a_connection_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = LLMSettings(api_key="sk-secret-closed", base_url=f"http://127.0.0.1:{port}/v1",
                           max_retries=0, timeout_s=5)
    with OpenAIChatModel(settings) as model, pytest.raises(LLMConnectionError) as caught:
        model.chat(HELLO)
    assert str(caught.value) == (
        f"Cannot reach http://127.0.0.1:{port}/v1. Check OPENAI_BASE_URL and that the server "
        "is running."
    )


def test_server_error_is_a_response_error_and_retries_are_honoured(fake_openai, model_for):
    fake_openai.script(error(500, "The server had an error", type="server_error"),
                       error(500, "The server had an error", type="server_error"))
    with pytest.raises(LLMResponseError, match=r"answered 500: The server had an error\. "):
        model_for().chat(HELLO)
    assert len(fake_openai.requests) == 1
    fake_openai.script("recovered")
    # One retry: the second scripted reply is the recovery after the remaining 500.
    reply = model_for(max_retries=1).chat(HELLO)
    assert reply.content == "recovered"
    assert len(fake_openai.requests) == 3


def test_bad_request_keeps_the_server_reason(fake_openai, model_for):
    fake_openai.script(error(400, "Invalid tool_choice type: 'object'."))
    with pytest.raises(LLMBadRequestError, match="rejected the request \\(400\\): Invalid"):
        model_for().chat(HELLO)


def test_wrong_path_says_check_the_base_url(fake_openai, model_for):
    model = model_for(base_url=fake_openai.base_url.removesuffix("/v1"))
    with pytest.raises(LLMResponseError, match=r"OPENAI_BASE_URL .*ends in /v1"):
        model.chat(HELLO)


def test_garbage_body_is_a_response_error(fake_openai, model_for):
    fake_openai.script(FakeRaw(body='{"choices": []}'))
    with pytest.raises(LLMResponseError, match="without choices"):
        model_for().chat(HELLO)


def test_timeout_is_a_connection_error(fake_openai, model_for):
    fake_openai.script(text("late", delay_s=0.5))
    with pytest.raises(LLMConnectionError, match=r"did not answer within 0\.1s"):
        model_for(timeout_s=0.1).chat(HELLO)


def test_key_never_appears_in_errors_or_logs(fake_openai, model_for, caplog):
    key = fake_openai.api_key
    fake_openai.script(error(400, f"Bad key format {key} in header"),
                       error(403, f"Project of {key} has no access"))
    caplog.set_level(logging.DEBUG)
    for expected in (LLMBadRequestError, LLMAuthError):
        with pytest.raises(expected) as caught:
            model_for().chat(HELLO)
        assert key not in str(caught.value)
        assert "***" in str(caught.value)
    with pytest.raises(LLMAuthError) as caught:
        model_for(api_key="sk-another-wrong").chat(HELLO)
    assert "sk-another-wrong" not in str(caught.value)
    assert key not in caplog.text and "sk-another-wrong" not in caplog.text


def test_missing_key_is_a_config_error_but_local_servers_need_none():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIChatModel(LLMSettings()).chat(HELLO)
    with FakeOpenAI(api_key=None) as server:
        server.script("local")
        settings = LLMSettings(base_url=server.base_url, provider="ollama", max_retries=0)
        with OpenAIChatModel(settings) as model:
            assert model.chat(HELLO).content == "local"


def test_parallel_calls_overlap_on_the_fake_server(fake_openai, model_for):
    fake_openai.latency_s = 0.2
    barrier = threading.Barrier(4, timeout=20)  # passes only when four requests are in flight

    def echo(body):
        barrier.wait()
        return f"echo {body['messages'][-1]['content']}"

    fake_openai.responder = echo
    model = model_for()
    with ThreadPoolExecutor(max_workers=4) as pool:
        replies = list(pool.map(
            lambda i: model.chat([{"role": "user", "content": f"q{i}"}]), range(4)))
    assert sorted(r.content for r in replies) == ["echo q0", "echo q1", "echo q2", "echo q3"]
    spans = [(r.started, r.finished) for r in fake_openai.requests]
    assert all(end - start >= 0.2 for start, end in spans)
    assert max(start for start, _ in spans) < min(end for _, end in spans)  # all overlap


def test_usage_estimate_grows_with_the_prompt(fake_openai, model_for):
    fake_openai.script("a", "b")
    model = model_for()
    short = model.chat(HELLO).usage.prompt_tokens
    long = model.chat([{"role": "user", "content": "word " * 400}]).usage.prompt_tokens
    assert long > short * 20


def _get(url: str, key: str | None) -> tuple[int, str, dict]:
    request = urllib.request.Request(url)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.headers["Content-Type"], json.load(response)
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.headers["Content-Type"], json.load(exc)


def test_fake_server_speaks_http_like_a_real_endpoint(fake_openai):
    status, content_type, body = _get(f"{fake_openai.base_url}/models", fake_openai.api_key)
    assert (status, content_type) == (200, "application/json")
    assert body["object"] == "list"
    assert "gpt-4o-mini" in [m["id"] for m in body["data"]]
    status, _, body = _get(f"{fake_openai.base_url}/models", "sk-nope")
    assert status == 401
    assert body["error"]["code"] == "invalid_api_key"
    assert set(body["error"]) == {"message", "type", "param", "code"}
    status, _, body = _get(f"{fake_openai.base_url}/engines", fake_openai.api_key)
    assert status == 404 and body["error"]["code"] == "unknown_url"
    assert [r.path for r in fake_openai.requests] == ["/v1/models"] * 2 + ["/v1/engines"]


def test_fake_server_script_file_for_standalone_use(tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([
        "plain text",
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "1+2"}}]},
        {"error": {"status": 503, "message": "overloaded"}},
    ]))
    with FakeOpenAI() as server:
        server.script(*load_script(str(script)))
        with OpenAIChatModel(server.settings()) as model:
            assert model.chat(HELLO).content == "plain text"
            assert model.chat(HELLO).tool_calls[0].name == "calculate"
            with pytest.raises(LLMResponseError, match="answered 503: overloaded"):
                model.chat(HELLO)


@pytest.mark.parametrize(
    ("status", "message", "code", "expected"),
    [
        (400, "Model Not Exist", None, LLMModelNotFoundError),  # DeepSeek
        (404, 'model "qwen3:8b" not found, try pulling it first', None,
         LLMModelNotFoundError),  # Ollama
        (400, "The model is unavailable", "model_not_found", LLMModelNotFoundError),
        (400, "Invalid tool_choice for this model: object", None, LLMBadRequestError),
        (422, "tools are not supported by this model server", None, LLMBadRequestError),
        (429, "Rate limit reached", None, LLMResponseError),
    ],
)
def test_provider_error_shapes_map_to_the_right_class(fake_openai, model_for, status, message,
                                                      code, expected):
    fake_openai.script(error(status, message, code=code))
    with pytest.raises(expected) as caught:
        model_for().chat(HELLO)
    assert type(caught.value) is expected
    assert "\n" not in str(caught.value)


