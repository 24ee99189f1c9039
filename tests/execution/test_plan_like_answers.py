"""A final answer that announces a plan instead of doing it ("I will follow these steps: 1. …")
fails its answer step through a whole run: the step is replanned, and the run ends ``failed``
unless a later version answers (seed-000-en ended ``completed`` with such a plan)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.execution.options import RunOptions
from core.execution.scheduler import RunOutcome, run_plan
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan
from core.tools.toolsets import default_registry
from tests.support.fake_openai import FakeOpenAI, FakeReply, text

EN = "Check order 88231 and tell me when it will arrive"
ZH = "查一下订单 88231，告诉我什么时候到"


def plan_for(request: str) -> dict[str, Any]:
    return {"goal": request, "steps": [
        {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
         "args": {"order_id": "88231"}, "depends_on": []},
        {"id": "s2", "description": "Tell the user when it arrives", "tool": None,
         "depends_on": ["s1"]},
    ]}


def run_with(request: str, executor_replies: list[str]) -> RunOutcome:
    """Run the two-step plan for ``request`` (one replan allowed) against the fake server:
    the replanner gets the same plan again, the answer steps ``executor_replies`` in turn."""
    replies = iter(executor_replies)

    def respond(body: dict[str, Any]) -> FakeReply:
        if "replanner" in body["messages"][0]["content"]:
            return text(json.dumps(plan_for(request)))
        return text(next(replies))

    with FakeOpenAI(responder=respond) as server, \
            OpenAIChatModel(server.settings()) as model:
        return run_plan(Plan.model_validate(plan_for(request)),
                        Engine(default_registry({}), model),
                        options=RunOptions(max_replans=1))


@pytest.mark.parametrize(("request_text", "plan_like", "why"), [
    (EN, "To meet the goal, I will follow these steps:\n1. Check order 88231.\n"
         "2. Tell the user when it arrives.", "announces what it will do"),
    (ZH, "我将按照以下步骤完成：1. 查询订单 88231 2. 告诉用户到达时间", "打算怎么做"),
], ids=["en", "zh"])
def test_an_answer_that_only_announces_a_plan_fails_the_run(request_text, plan_like, why):
    outcome = run_with(request_text, [plan_like, plan_like])
    assert (outcome.status, len(outcome.versions)) == ("failed", 2)  # replanned once
    failed = [s for s in outcome.plan.steps if s.status == "failed"]
    assert [s.tool for s in failed] == [None] and why in (failed[0].error or "")
    assert not outcome.answer.startswith(plan_like)  # the answer lists what was done


def test_a_real_answer_after_an_announced_plan_completes_the_run():
    answer = "I checked order 88231: it was delivered on 2026-06-22."
    outcome = run_with(EN, ["First, I will check the order status with query_order.", answer])
    assert (outcome.status, len(outcome.versions)) == ("completed", 2)
    assert outcome.answer == answer
