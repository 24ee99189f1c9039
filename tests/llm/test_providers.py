"""Provider profiles: detection from the base URL, overrides, and the quirks each one carries."""

from __future__ import annotations

import json

import pytest

from core.errors import ConfigError
from core.llm.client import OpenAIChatModel
from core.llm.providers import GENERIC, LOCAL_MAX_TOKENS, PROFILES, detect_profile, profile_names
from tests.support.fake_openai import text, tool_call


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        (None, "openai"),
        ("https://api.openai.com/v1", "openai"),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "dashscope"),
        ("https://api.deepseek.com/v1", "deepseek"),
        ("http://localhost:11434/v1", "ollama"),
        ("http://ollama.internal/v1", "ollama"),
        ("http://127.0.0.1:1234/v1", "lmstudio"),
        ("http://localhost:8080/v1", "llamacpp"),
        ("http://llama-server.lan/v1", "llamacpp"),
        ("http://gpu-box:8000/v1", "vllm"),
        ("https://my-gateway.example.com/v1", "generic"),
    ],
)
def test_detected_from_the_base_url(base_url, expected):
    assert detect_profile(base_url).name == expected


def test_override_wins_and_auto_detects():
    assert detect_profile("http://localhost:11434/v1", "deepseek").name == "deepseek"
    assert detect_profile("http://localhost:11434/v1", "auto").name == "ollama"
    assert detect_profile("http://localhost:11434/v1", " LMStudio ").name == "lmstudio"


def test_unknown_override_lists_every_name():
    with pytest.raises(ConfigError) as caught:
        detect_profile("http://x/v1", "bedrock")
    for name in profile_names():
        assert name in str(caught.value)


def test_quirks_of_each_profile():
    assert PROFILES["openai"].tool_choice_ladder == ("named", "required", "auto")
    assert GENERIC.tool_choice_ladder == ("named", "required", "auto")
    assert PROFILES["dashscope"].forced_extra_body == {"enable_thinking": False}
    assert PROFILES["deepseek"].forced_extra_body == {"thinking": {"type": "disabled"}}
    assert PROFILES["ollama"].tool_choice_ladder == ("auto",)
    assert PROFILES["llamacpp"].tool_choice_ladder == ("auto",)
    assert PROFILES["lmstudio"].tool_choice_ladder == ("required", "auto")
    assert not PROFILES["lmstudio"].supports_json_mode
    assert all(PROFILES[n].needs_key for n in ("openai", "dashscope", "deepseek", "generic"))
    assert not any(PROFILES[n].needs_key for n in ("ollama", "lmstudio", "llamacpp", "vllm"))


def test_structured_output_and_prompt_style_per_profile():
    schema = {"name": "plan", "schema": {"type": "object"}}
    assert PROFILES["openai"].response_format(json_schema=schema) == {
        "type": "json_schema", "json_schema": {"strict": False, **schema}}
    assert PROFILES["llamacpp"].response_format(json_schema=schema) == {
        "type": "json_object", "schema": {"type": "object"}}
    assert PROFILES["deepseek"].response_format(json_schema=schema) == {"type": "json_object"}
    assert PROFILES["lmstudio"].response_format(json_mode=True) is None
    assert GENERIC.response_format() is None
    compact = {name for name, profile in PROFILES.items() if profile.prompt_style == "compact"}
    assert compact == {"ollama", "lmstudio", "llamacpp"}


@pytest.mark.parametrize(("provider", "temperature"), [
    ("llamacpp", 0.0), ("ollama", 0.0), ("lmstudio", 0.0), ("vllm", 0.0),
    ("openai", None), ("deepseek", None), ("dashscope", None), ("generic", None),
])
def test_local_servers_are_asked_for_temperature_zero_hosted_ones_for_none(
        fake_openai, provider, temperature):
    fake_openai.script("ok")
    with OpenAIChatModel(fake_openai.settings(provider=provider)) as model:
        model.chat([{"role": "user", "content": "hi"}], role="planner")
    body = fake_openai.chat_bodies[-1]
    assert body.get("temperature") == temperature and ("temperature" in body) == (
        temperature is not None)


@pytest.mark.parametrize(("provider", "cap"), [
    ("llamacpp", LOCAL_MAX_TOKENS), ("ollama", LOCAL_MAX_TOKENS),
    ("lmstudio", LOCAL_MAX_TOKENS), ("vllm", LOCAL_MAX_TOKENS),
    ("openai", None), ("deepseek", None), ("dashscope", None), ("generic", None),
])
def test_local_servers_get_a_reply_length_cap_hosted_ones_none(fake_openai, provider, cap):
    fake_openai.script("ok")
    with OpenAIChatModel(fake_openai.settings(provider=provider)) as model:
        model.chat([{"role": "user", "content": "hi"}], role="planner")
    body = fake_openai.chat_bodies[-1]
    assert body.get("max_tokens") == cap and ("max_tokens" in body) == (cap is not None)


_ESCAPED_PLAN = ('{"goal": "Tom &amp; Jerry&#39;s order", "steps": [{"id": "s1", "description": '
                 '"Say &#34;hi&#34; &lt;now&gt;", "tool": null}]}')


@pytest.mark.parametrize(("provider", "decoded"), [("llamacpp", True), ("ollama", False),
                                                   ("openai", False)])
def test_replies_of_an_html_escaping_template_are_decoded(fake_openai, provider, decoded):
    # llama-cpp-python's chatml-function-calling template autoescapes every turn, and the
    # model writes the entities back
    fake_openai.script(text(_ESCAPED_PLAN), text("Order {&#34;id&#34;: 1} &amp; refund"),
                       tool_call("run_sql", '{"query": "SELECT &#39;a&#39; &lt; &#34;b&#34;"}'))
    with OpenAIChatModel(fake_openai.settings(provider=provider)) as model:
        plan, prose, call = (model.chat([{"role": "user", "content": "hi"}], role="planner")
                             for _ in range(3))
    if not decoded:
        assert plan.content == _ESCAPED_PLAN
        return
    assert json.loads(plan.content) == {"goal": "Tom & Jerry's order", "steps": [
        {"id": "s1", "description": 'Say "hi" <now>', "tool": None}]}
    assert prose.content == 'Order {"id": 1} & refund'
    assert json.loads(call.tool_calls[0].arguments) == {"query": "SELECT 'a' < \"b\""}
