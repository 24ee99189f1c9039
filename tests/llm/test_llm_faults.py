"""Malformed 200 replies from the endpoint end in one-line LLM errors, in the client and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli.main import main
from core.errors import LLMResponseError
from core.llm.client import OpenAIChatModel, parse_reply
from tests.support.fake_openai import FakeOpenAI, FakeRaw, text

HELLO = [{"role": "user", "content": "hello"}]
BASE = "http://127.0.0.1:9/v1"

MALFORMED = [
    ("not json", "not JSON"),
    ("", "an empty body"),
    ("   \n", "an empty body"),
    ('{"choices": "nope"}', "without choices"),
    ('{"choices": []}', "without choices"),
    ("[]", "without choices"),
    ("null", "without choices"),
    ('{"choices": [{}]}', "without a message"),
    ('{"choices": [{"message": null}]}', "without a message"),
    ('{"choices": ["x"]}', "without a message"),
    ('{"choices": [{"message": {"content": 5}}]}', "content that is not text"),
    ('{"choices": [{"message": {"tool_calls": "x"}}]}', "tool_calls that are not a list"),
    ("<html><body>502 Bad Gateway</body></html>", "not JSON"),
    ("[" * 100_000, "not JSON"),
]


@pytest.mark.parametrize(("body", "what"), MALFORMED)
def test_malformed_bodies_are_one_line_response_errors(body, what):
    with pytest.raises(LLMResponseError) as caught:
        parse_reply(body, BASE)
    message = str(caught.value)
    assert what in message and BASE in message
    assert "\n" not in message and len(message) < 300


@pytest.mark.parametrize(("body", "what"), MALFORMED[:5])
def test_the_client_reports_what_came_back_over_http(fake_openai, body, what):
    fake_openai.script(FakeRaw(body=body))
    with OpenAIChatModel(fake_openai.settings()) as model, \
            pytest.raises(LLMResponseError, match=what) as caught:
        model.chat(HELLO)
    assert fake_openai.base_url in str(caught.value)
    assert "\n" not in str(caught.value)


def test_invalid_utf8_and_a_non_json_content_type_are_response_errors(fake_openai):
    fake_openai.script(FakeRaw(body=b"\xff\xfe{"), FakeRaw(body="oops", content_type="text/html"))
    with OpenAIChatModel(fake_openai.settings()) as model:
        for _ in range(2):
            with pytest.raises(LLMResponseError, match="not JSON"):
                model.chat(HELLO)


def test_a_malformed_reply_is_tried_once_more_when_retries_are_allowed(fake_openai):
    fake_openai.script(FakeRaw(body="cut off {"), text("fine"))
    with OpenAIChatModel(fake_openai.settings(max_retries=2)) as model:
        assert model.chat(HELLO).content == "fine"
    assert len(fake_openai.chat_bodies) == 2


def test_a_malformed_reply_is_not_retried_forever(fake_openai):
    fake_openai.script(*[FakeRaw(body="") for _ in range(5)])
    with OpenAIChatModel(fake_openai.settings(max_retries=3)) as model, \
            pytest.raises(LLMResponseError, match="empty body"):
        model.chat(HELLO)
    assert len(fake_openai.chat_bodies) == 2


def test_the_key_echoed_in_a_malformed_body_is_never_shown(fake_openai):
    fake_openai.script(FakeRaw(body=f"bad key {fake_openai.api_key} here"))
    with OpenAIChatModel(fake_openai.settings()) as model, \
            pytest.raises(LLMResponseError) as caught:
        model.chat(HELLO)
    assert fake_openai.api_key not in str(caught.value)


def test_odd_but_usable_shapes_are_read():
    body = {"choices": [{"message": {
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, 3],
        "tool_calls": [None, {"function": {"name": ""}},
                       {"function": {"name": "calc", "arguments": {"x": 1}}}]},
        "finish_reason": 7}], "usage": {"prompt_tokens": "many", "completion_tokens": 4}}
    reply = parse_reply(json.dumps(body), BASE)
    assert reply.content == "ab" and reply.finish_reason is None
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("call_2", "calc", {"x": 1})]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (0, 4)


def _garbage_endpoint(monkeypatch, server: FakeOpenAI) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
    monkeypatch.setenv("PLANBOARD_MAX_RETRIES", "0")


@pytest.mark.parametrize("body", ["not json", "", '{"choices": "nope"}'])
def test_cli_plan_against_garbage_prints_one_line_and_exits_1(monkeypatch, capsys, body):
    with FakeOpenAI(responder=lambda _request: FakeRaw(body=body)) as server:
        _garbage_endpoint(monkeypatch, server)
        code = main(["plan", "look up order 88231"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("error: ") and err.count("\n") == 1
    assert server.base_url in err and "Traceback" not in err


def test_cli_run_with_garbage_during_a_step_fails_the_step_in_one_line(
    monkeypatch, capsys, tmp_path: Path
):
    plan = {"goal": "g", "steps": [
        {"id": "s1", "description": "look up the order", "tool": "query_order"},
        {"id": "s2", "description": "Summarise", "tool": None, "depends_on": ["s1"]}]}
    (tmp_path / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    with FakeOpenAI(responder=lambda _request: FakeRaw(body='{"choices": "nope"}')) as server:
        _garbage_endpoint(monkeypatch, server)
        code = main(["run", "--yes", "--plan", str(tmp_path / "plan.json"),
                     "--max-replans", "0", "--max-attempts", "1"])
    out, err = capsys.readouterr()
    assert code == 1
    failed = [line for line in out.splitlines() if " s1 failed:" in line]
    assert failed and "without choices" in failed[0]
    assert "Traceback" not in out + err
