"""An OpenAI Agents SDK agent (integrations.agents_review) on the scripted endpoint: its
``needs_approval`` tool runs once when the person approves, never when they reject."""

from __future__ import annotations

import asyncio

import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, function_tool
from openai import AsyncOpenAI

from core.review.client import ReviewClient
from core.review.reviews import approve_review, reject_review
from integrations.agents_review import run_reviewed
from tests.support.fake_openai import DEFAULT_KEY, text, tool_call
from tests.support.review import in_process, person_deciding


@pytest.fixture
def refund_agent(fake_openai):
    """An agent whose refund tool needs approval, and the refunds it made."""
    refunds: list[int] = []

    @function_tool(needs_approval=True)
    def refund(order: int) -> str:
        """Refund an order."""
        refunds.append(order)
        return f"refunded {order}"

    model = OpenAIChatCompletionsModel(
        model="fake-executor",
        openai_client=AsyncOpenAI(base_url=fake_openai.base_url, api_key=DEFAULT_KEY))
    return Agent(name="refunds", instructions="Refund what is asked.", tools=[refund],
                 model=model), refunds


def _run(agent, api, store, decide):
    thread = person_deciding(store, decide)
    client = ReviewClient("http://testserver", send=in_process(api))
    try:
        return asyncio.run(run_reviewed(agent, "Refund order 7", client, timeout=30,
                                        run_config=RunConfig(tracing_disabled=True)))
    finally:
        thread.join()


def test_an_approved_call_runs_once_and_is_reported(refund_agent, fake_openai, api, store):
    agent, refunds = refund_agent
    fake_openai.script(tool_call("refund", {"order": 7}), text("Order 7 is refunded."))
    result = _run(agent, api, store, lambda s, r: approve_review(s, r, None))
    assert (refunds, result.final_output) == ([7], "Order 7 is refunded.")
    run = store.list_runs()[0]
    assert store.get_run(run.run_id).status == "completed"
    step = store.get_run(run.run_id).plan.steps[0]
    assert (step.tool, step.status, step.resolved_args) == ("refund", "completed", {"order": 7})


def test_a_rejected_call_never_runs_and_the_model_hears_why(refund_agent, fake_openai, api,
                                                            store):
    agent, refunds = refund_agent
    fake_openai.script(tool_call("refund", {"order": 7}), text("I did not refund it."))
    result = _run(agent, api, store, lambda s, r: reject_review(s, r, None, "Not this one."))
    assert (refunds, result.final_output) == ([], "I did not refund it.")
    told = [m for m in fake_openai.chat_bodies[-1]["messages"] if m["role"] == "tool"]
    assert told and "Not this one." in told[0]["content"]
