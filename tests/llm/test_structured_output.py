"""Structured output for plans: the request body per provider profile, and the 400 fallback.

Against the fake OpenAI-compatible server, which records every request body.
"""

from __future__ import annotations

import json

import pytest

from core.errors import LLMBadRequestError
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.llm.providers import PROFILES
from core.planning.exchange import schema_for
from core.planning.planner import plan_request, replan_request
from core.runs.session import request_language
from tests.support.fake_openai import error

REQUEST = "Check order 88231"
PLAN = json.dumps({
    "goal": REQUEST,
    "steps": [
        {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
         "args": {"order_id": "88231"}, "depends_on": []},
        {"id": "s2", "description": "Tell the user", "tool": None, "depends_on": ["s1"]},
    ],
})
EXPECTED_FORM = {
    "openai": "json_schema", "dashscope": "json_schema", "ollama": "json_schema",
    "lmstudio": "json_schema", "vllm": "json_schema", "llamacpp": "json_object_schema",
    "deepseek": "json_object", "generic": "json_object",
}


def engine_for(fake_openai, registry, provider: str) -> tuple[Engine, OpenAIChatModel]:
    model = OpenAIChatModel(fake_openai.settings(provider=provider))
    return Engine(registry=registry, model=model), model


def schema_of(response_format: dict) -> dict:
    if response_format["type"] == "json_schema":
        return response_format["json_schema"]["schema"]
    return response_format["schema"]


def test_every_profile_is_covered():
    assert set(EXPECTED_FORM) == set(PROFILES)


@pytest.mark.parametrize("provider", sorted(EXPECTED_FORM))
def test_the_plan_request_carries_the_schema_in_the_providers_form(
    fake_openai, registry, provider
):
    fake_openai.script(PLAN)
    engine, model = engine_for(fake_openai, registry, provider)
    with model:
        result = plan_request(REQUEST, engine, language=request_language(REQUEST))
    assert [s.tool for s in result.plan.steps] == ["query_order", None]
    sent = fake_openai.chat_bodies[0]["response_format"]
    form = EXPECTED_FORM[provider]
    if form == "json_object":
        assert sent == {"type": "json_object"}
        return
    if form == "json_schema":
        assert sent["type"] == "json_schema"
        assert sent["json_schema"]["name"] == "plan"
        assert sent["json_schema"]["strict"] is False  # a step's args are free-form
    else:
        assert sent["type"] == "json_object" and "schema" in sent
    schema = schema_of(sent)
    assert schema["required"] == ["goal", "steps"]
    variants = schema["properties"]["steps"]["items"]["anyOf"]
    named = [name for step in variants for name in step["properties"]["tool"]["enum"]]
    assert sorted(named, key=str) == sorted([*registry.names(), None], key=str)
    assert len(named) == len(set(named))


@pytest.mark.parametrize(("provider", "switch", "form"), [
    ("llamacpp", "off", None), ("llamacpp", "on", "json_object_schema"),
    ("generic", "on", "json_schema"), ("deepseek", "auto", None),
])
def test_the_switch_overrides_the_profile_s_structured_output(fake_openai, registry, provider,
                                                               switch, form):
    from core.llm.settings import LLMSettings

    settings = LLMSettings.from_env({"PLANBOARD_CONSTRAINED_OUTPUT": switch,
                                     "PLANBOARD_PROVIDER": provider})
    assert settings.profile.structured_output == (form or "none")
    fake_openai.script(PLAN)
    model = OpenAIChatModel(fake_openai.settings(provider=provider,
                                                 constrained_output=settings.constrained_output))
    with model:
        plan_request(REQUEST, Engine(registry=registry, model=model),
                     language=request_language(REQUEST))
    sent = fake_openai.chat_bodies[0]["response_format"]
    assert ("schema" in sent or "json_schema" in sent) is (form is not None)


def test_the_schema_bounds_what_a_grammar_lets_a_small_model_write(registry):
    # a 1.5B model under llama.cpp's grammar wrote one step as the whole reply (extra keys
    # were allowed) and repeated steps until the reply ran out of tokens (no step limit)
    schema = schema_for(registry)["schema"]
    steps = schema["properties"]["steps"]
    assert schema["additionalProperties"] is False
    assert steps["items"]["additionalProperties"] is False
    assert steps["items"]["properties"]["args"] == {"type": "object"}  # free-form arguments
    assert 10 <= steps["maxItems"] <= 24


def test_the_described_tools_steps_follow_their_parameters(registry):
    import jsonschema

    described = [registry.get("query_order")]
    schema = schema_for(registry, described=described)["schema"]

    def plan(*steps: dict) -> dict:
        return {"goal": REQUEST, "steps": [
            {"id": f"s{n}", "description": "d", "depends_on": [], **step}
            for n, step in enumerate(steps, 1)]}

    def valid(reply: dict) -> bool:
        return not list(jsonschema.Draft202012Validator(schema).iter_errors(reply))

    order = {"tool": "query_order"}
    assert valid(plan({**order, "args": {"order_id": "88231"}}, {"tool": None}))
    assert valid(plan({**order, "args": {}}))  # left to be inferred when the step runs
    assert valid(plan({**order, "args": {"order_id": "{{s0.order_id}}"}}))
    assert not valid(plan({**order, "args": {"order": "88231"}}))  # a name it does not take
    assert not valid(plan({**order, "args": {"order_id": 88231}}))  # the wrong type
    assert not valid(plan({"tool": "no_such_tool"}))
    other = registry.names()[0] if registry.names()[0] != "query_order" else registry.names()[1]
    assert valid(plan({"tool": other, "args": {"anything": 1}}))  # not described: free
    follow_up = schema_for(registry, described=described, steps_only=True)["schema"]
    assert follow_up["required"] == ["steps"]


def test_the_replan_request_carries_the_schema_too(fake_openai, registry):
    fake_openai.script(PLAN)
    engine, model = engine_for(fake_openai, registry, "vllm")
    with model:
        plan = plan_request(REQUEST, engine, language=request_language(REQUEST)).plan
        fake_openai.script(json.dumps({"steps": [
            {"id": "s3", "description": "Tell the user", "tool": None, "depends_on": []}]}))
        replan_request(plan, "s1 failed", engine)
    assert fake_openai.chat_bodies[1]["response_format"]["type"] == "json_schema"


def test_a_rejected_schema_is_retried_without_it_and_not_sent_again(fake_openai, registry):
    fake_openai.script(
        error(400, "response_format type must be one of text or json_object"), PLAN, PLAN)
    engine, model = engine_for(fake_openai, registry, "dashscope")
    with model:
        first = plan_request(REQUEST, engine, language=request_language(REQUEST))
        second = plan_request(REQUEST, engine, language=request_language(REQUEST))
    assert first.plan is not None and not first.fallback and second.plan is not None
    formats = [body.get("response_format") for body in fake_openai.chat_bodies]
    assert formats[0]["type"] == "json_schema"
    assert formats[1:] == [{"type": "json_object"}, {"type": "json_object"}]
    assert model.schema_refused


def test_without_json_mode_the_retry_sends_no_response_format(fake_openai, registry):
    fake_openai.script(error(400, "Unknown response_format"), PLAN)
    engine, model = engine_for(fake_openai, registry, "lmstudio")
    with model:
        plan_request(REQUEST, engine, language=request_language(REQUEST))
    first, retry = fake_openai.chat_bodies
    assert first["response_format"]["type"] == "json_schema"
    assert "response_format" not in retry


def test_a_400_that_is_not_about_the_schema_is_raised_and_not_remembered(
    fake_openai, registry
):
    fake_openai.script(error(400, "context length exceeded"),
                       error(400, "context length exceeded"))
    engine, model = engine_for(fake_openai, registry, "openai")
    with model, pytest.raises(LLMBadRequestError):
        plan_request(REQUEST, engine, language=request_language(REQUEST))
    assert not model.schema_refused and len(fake_openai.chat_bodies) == 2


def test_a_reply_is_validated_even_when_a_schema_was_sent(fake_openai, registry):
    ignored = json.dumps({"goal": REQUEST, "steps": [
        {"id": "s1", "description": "Look up the order", "tool": "lookup_order_status",
         "args": {"order_id": "88231"}, "depends_on": []},
        {"id": "s2", "description": "Tell the user", "tool": None, "depends_on": ["s1"]}]})
    fake_openai.script(ignored, PLAN)
    engine, model = engine_for(fake_openai, registry, "ollama")
    with model:
        result = plan_request(REQUEST, engine, language=request_language(REQUEST))
    assert result.attempts == 2 and "lookup_order_status" in result.errors[0]
    assert [s.tool for s in result.plan.steps] == ["query_order", None]


@pytest.mark.parametrize(("provider", "style"), [("llamacpp", "compact"), ("ollama", "compact"),
                                                  ("lmstudio", "compact"), ("openai", "full")])
def test_local_providers_get_the_compact_prompt(fake_openai, registry, provider, style):
    fake_openai.script(PLAN)
    engine, model = engine_for(fake_openai, registry, provider)
    with model:
        plan_request(REQUEST, engine, language=request_language(REQUEST))
    system = fake_openai.chat_bodies[0]["messages"][0]["content"]
    compact = 'Args: {"order_id": "10001"}' in system and "Planning principles" not in system
    assert compact is (style == "compact")


@pytest.mark.parametrize(("request_text", "example"), [
    ("How many subscriptions were cancelled in Q1 2026? Count the churn events.",
     '"tool": "describe_tables", "args": {}'),
    ("Which of our services are degraded right now?", '"tool": "list_services", "args": {}'),
    ("订单 70412 签收了吗？", '"tool": "query_order", "args": {"order_id": "10001"}'),
])
def test_the_compact_example_step_calls_the_tool_the_request_starts_with(
        fake_openai, registry, request_text, example):
    # with query_logistics always in the example, a 1.5B model planned a churn count as
    # parcel lookups, twice
    fake_openai.script(PLAN, PLAN)  # the plan does not fit these requests: one retry
    engine, model = engine_for(fake_openai, registry, "llamacpp")
    with model:
        plan_request(request_text, engine, language=request_language(request_text))
    system = fake_openai.chat_bodies[0]["messages"][0]["content"]
    example_step = system.split("JSON:", 1)[1]
    assert example in example_step and "query_logistics" not in example_step
