"""A planner's reply read as a stream: the fake server streams as OpenAI does, the client
hears the text as it arrives and returns the reply a whole answer gives, and a server that
refuses to stream, or a stream that breaks, ends in today's single reply."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from core.llm.client import OpenAIChatModel
from core.llm.reply import decode_template_entities
from core.llm.streamed import StreamBroken, read_events, settled_text
from tests.support.fake_openai import FakeOpenAI, streamed

PLAN = json.dumps({"goal": "sums", "steps": [
    {"id": "s1", "description": "add", "tool": "calculate", "args": {"expression": "2+2"}},
    {"id": "s2", "description": "answer", "tool": None, "depends_on": ["s1"]},
]})
ASK = [{"role": "user", "content": "plan it"}]


def test_a_streamed_reply_is_heard_as_it_grows_and_ends_as_the_whole_reply(fake_openai):
    fake_openai.script(streamed(PLAN, chunk_chars=10), PLAN)
    model = OpenAIChatModel(fake_openai.settings())
    heard: list[str] = []
    streamed_reply = model.chat(ASK, role="planner", on_text=heard.append)
    whole_reply = model.chat(ASK, role="planner")

    assert len(heard) == -(-len(PLAN) // 10)  # one piece per chunk of ten characters
    assert all(later.startswith(earlier) for earlier, later in pairwise(heard))
    assert heard[-1] == PLAN
    assert streamed_reply.content == whole_reply.content == PLAN
    assert streamed_reply.finish_reason == "stop"
    assert streamed_reply.usage.completion_tokens > 0  # the usage chunk was asked for and read
    first, second = fake_openai.chat_bodies
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert "stream" not in second


def test_a_profile_whose_server_sends_no_stream_usage_is_not_asked_for_it(fake_openai):
    fake_openai.script(streamed(PLAN))
    model = OpenAIChatModel(fake_openai.settings(provider="llamacpp"))
    reply = model.chat(ASK, role="planner", on_text=lambda _text: None)
    assert reply.content == PLAN
    assert fake_openai.chat_bodies[0]["stream"] is True
    assert "stream_options" not in fake_openai.chat_bodies[0]
    assert reply.usage.completion_tokens == 0  # no usage chunk: nothing invented


def test_a_server_that_refuses_to_stream_answers_whole_and_is_not_asked_again():
    with FakeOpenAI(streams=False) as server:
        server.script(PLAN, PLAN)
        model = OpenAIChatModel(server.settings())
        heard: list[str] = []
        first = model.chat(ASK, role="planner", on_text=heard.append)
        second = model.chat(ASK, role="planner", on_text=heard.append)
        bodies = server.chat_bodies
    assert first.content == second.content == PLAN
    assert heard == [PLAN, PLAN]  # told the whole text once per reply
    assert [body.get("stream", False) for body in bodies] == [True, False, False]
    assert model.stream_refused


def test_a_stream_that_breaks_is_asked_for_again_whole(fake_openai):
    fake_openai.script(streamed(PLAN, chunk_chars=8, cut_after='"s1"'), PLAN)
    model = OpenAIChatModel(fake_openai.settings())
    heard: list[str] = []
    reply = model.chat(ASK, role="planner", on_text=heard.append)
    assert reply.content == PLAN
    assert heard[-1] == PLAN and not heard[-2].endswith("}")  # a part, then the whole
    assert [body.get("stream", False) for body in fake_openai.chat_bodies] == [True, False]
    assert not model.stream_refused  # the next reply is streamed again


@pytest.mark.parametrize("lines", [
    ['data: {"choices": [{"delta": {"content": "a"}}]}'],  # no finish, no [DONE]
    ['data: {"error": {"message": "overloaded"}}'],
    ["data: not json"],
])
def test_streams_that_stop_short_are_broken(lines):
    with pytest.raises(StreamBroken):
        read_events(lines, "http://x/v1", lambda _text: None)


def test_escaped_text_is_heard_decoded_and_only_ever_grows():
    escaped = '{&#34;steps&#34;: [{&#34;id&#34;: &#34;s1&#34;}]}'
    heard = [settled_text(escaped[:end], decode_template_entities)
             for end in range(1, len(escaped) + 1)]
    assert heard[-1] == '{"steps": [{"id": "s1"}]}'
    assert all(later.startswith(earlier) for earlier, later in pairwise(heard))


def test_an_escaping_templates_reply_is_decoded_once_streamed_or_whole(fake_openai):
    escaped = '{&#34;steps&#34;: [{&#34;description&#34;: &#34;a &amp;amp; b&#34;}]}'
    fake_openai.script(streamed(escaped, chunk_chars=5), escaped)
    model = OpenAIChatModel(fake_openai.settings(provider="llamacpp"))
    heard: list[str] = []
    streamed_reply = model.chat(ASK, role="planner", on_text=heard.append)
    whole_reply = model.chat(ASK, role="planner")
    decoded = '{"steps": [{"description": "a &amp; b"}]}'
    assert streamed_reply.content == whole_reply.content == decoded
    assert heard[-1].startswith('{"steps": [{"description": "a &')
