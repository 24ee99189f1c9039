"""Reflection after a failed run, the review of a run that needed a replan, and what an
attempt leaves behind (its lesson, and the plan of the next attempt when one is advised)."""

from __future__ import annotations

import json

import pytest

from core.errors import PlanParseError
from core.execution.scheduler import RunOutcome
from core.learning.after_run import learn_from_run
from core.learning.lessons import LessonBook
from core.learning.reflection import (
    Reflection,
    reflect,
    reflect_offline,
    review_success,
    trajectory,
)
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.store.run_store import RunStore
from core.tools.registry import ToolRegistry
from core.tools.toolsets import default_registry
from tests.support.fakes import ScriptedChatModel

OFFLINE = Engine(ToolRegistry())


def failed_plan(goal: str, error: str, tool: str | None = "apply_refund") -> Plan:
    return Plan(goal=goal, version=3, steps=[
        Step(id="s1", description="Look up order 70412", tool="query_order",
             args={"order_id": "70412"}, status="completed",
             result={"order_id": "70412", "status": "in_transit"}),
        Step(id="s2", description="Refund order 70412", tool=tool,
             args={"order_id": "70412"}, depends_on=["s1"], status="failed", error=error),
        Step(id="s3", description="Summarise", depends_on=["s1", "s2"]),
    ])


REFUSED = "order 70412 is in transit (运输中), not delivered; a refund can be requested once"


def test_reflect_with_llm_is_one_plain_call() -> None:
    answer = {"root_cause": "refund before delivery", "lesson": "check delivery first",
              "should_retry": True, "retry_hint": "add a condition on s1.status"}
    model = ScriptedChatModel(["<think>why?</think>```json\n" + json.dumps(answer) + "\n```"])
    plan = failed_plan("Refund order 70412", REFUSED)
    found, usage = reflect(plan, "s2 failed", Engine(ToolRegistry(), model))
    assert found.lesson == "check delivery first" and found.should_retry
    assert found.retry_hint == "add a condition on s1.status"
    assert found.tools == ["apply_refund"]
    assert usage.llm_calls == 1
    sent = model.requests[0]
    assert sent["role"] == "planner" and sent["tools"] is None and sent["json_mode"]
    user = sent["messages"][1]["content"]
    assert "not delivered" in user and "Plan versions tried: 3" in user
    assert "at least one concrete decision" in sent["messages"][0]["content"]


@pytest.mark.parametrize("reply", [
    "The run failed because of bad luck.",
    '{"root_cause": "x", "lesson": "", "should_retry": false, "retry_hint": ""}',
])
def test_unusable_reflection_raises(reply: str) -> None:
    with pytest.raises(PlanParseError) as caught:
        reflect(failed_plan("g", "x"), "x", Engine(ToolRegistry(), ScriptedChatModel([reply])))
    assert caught.value.raw == reply


def test_offline_reflection_on_a_refused_refund() -> None:
    found, usage = reflect(failed_plan("Refund order 70412", REFUSED), "", OFFLINE)
    assert usage.llm_calls == 0
    assert "query_order" in found.lesson and "apply_refund" in found.lesson
    assert "s2" in found.root_cause and not found.should_retry
    assert found.tools == ["apply_refund"]
    assert "s1.<field> == <value>" in found.lesson  # a condition over the lookup's result
    chinese = reflect_offline(failed_plan("帮我把订单 70412 退掉", REFUSED))
    assert "query_order" in chinese.lesson and "条件" in chinese.lesson


@pytest.mark.parametrize(("error", "retry", "word"), [
    ("query_order timed out after 10 s", True, "retry"),
    ("order '12345' does not exist; check the number", False, "confirm the id"),
    ("unknown tool 'refund'; registered tools are: query_order", True, "registered"),
    ("apply_refund: order_id: Field required (check the tool's parameter schema)", True,
     "argument"),
    ("this reasoning step needs an LLM; configure one", False, "without an LLM"),
    ("something odd happened", False, "another route"),
])
def test_offline_reflection_rules(error: str, retry: bool, word: str) -> None:
    found = reflect_offline(failed_plan("Refund order 70412", error))
    assert found.should_retry is retry
    assert word in found.lesson + found.retry_hint


def test_offline_reflection_without_failed_steps() -> None:
    plan = Plan(goal="g", steps=[Step(id="s1", description="x")])
    found = reflect_offline(plan, "cancelled by a person")
    assert found.root_cause == "cancelled by a person" and found.lesson


def test_trajectory_lists_every_step() -> None:
    lines = trajectory(failed_plan("g", REFUSED)).splitlines()
    assert [json.loads(line)["status"] for line in lines] == ["completed", "failed", "pending"]


def test_review_success_after_a_replan() -> None:
    first = failed_plan("Track order 88231", "query_logistics timed out", "query_logistics")
    final = first.model_copy(deep=True, update={"version": 2})
    final.steps = [first.steps[0].model_copy(), first.steps[1].model_copy(), Step(
        id="s4", description="Look up the order again", tool="query_order",
        status="completed", result={"status": "delivered"})]
    found, usage = review_success([first, final], OFFLINE)
    assert isinstance(found, Reflection) and usage.llm_calls == 0
    assert "query_logistics" in found.lesson and "query_order" in found.lesson
    assert review_success([final], OFFLINE) == (None, usage)
    model = ScriptedChatModel(['{"root_cause": "timeout", "lesson": "use query_order", '
                               '"should_retry": true, "retry_hint": ""}'])
    found, usage = review_success([first, final], Engine(ToolRegistry(), model))
    assert found is not None and found.lesson == "use query_order"
    assert not found.should_retry and usage.llm_calls == 1
    assert "Version 2" in model.requests[0]["messages"][1]["content"]


def outcome(status: str, *versions: Plan) -> RunOutcome:
    return RunOutcome(status=status, plan=versions[-1], versions=list(versions))


def test_a_failed_attempt_keeps_its_lesson_and_plans_a_retry_that_carries_it() -> None:
    store = RunStore()
    timeout = failed_plan("Track order 70412", "query_logistics timed out", "query_logistics")
    run_id = store.create_run("Track order 70412", {}, timeout)
    lesson = "query_logistics can time out for order 70412; allow one retry"
    model = ScriptedChatModel([
        json.dumps({"root_cause": "a timeout", "lesson": lesson, "should_retry": True,
                    "retry_hint": "retry the tracking lookup once"}),
        json.dumps({"steps": [{"id": "s4", "description": "Summarise what is known",
                               "tool": None, "depends_on": ["s1"]}]}),
    ])
    engine = Engine(default_registry({}), model)
    learned = learn_from_run(store, run_id, "Track order 70412", outcome("failed", timeout),
                             engine, attempt=1, max_attempts=2)
    assert learned.lesson is not None and learned.lesson.run_id == run_id
    assert learned.lesson.tools == ["query_logistics"]
    assert [item.run_id for item in LessonBook(store).list_lessons()] == [run_id]
    assert learned.retry_plan is not None and learned.retry_plan.version == 4
    assert learned.usage.llm_calls == 2
    retry_prompt = model.requests[1]["messages"][0]["content"]
    assert lesson in retry_prompt and "retry the tracking lookup once" in retry_prompt


def test_no_retry_when_retrying_cannot_help_or_attempts_are_used_up() -> None:
    store = RunStore()
    refused = failed_plan("Refund order 70412", REFUSED)
    model = ScriptedChatModel(["not json"])  # the reflection falls back to the rules
    learned = learn_from_run(store, "run1", "Refund order 70412", outcome("failed", refused),
                             Engine(default_registry({}), model), attempt=1, max_attempts=3)
    assert len(model.requests) == 1 and learned.retry_plan is None
    assert learned.reflection is not None and not learned.reflection.should_retry
    assert "apply_refund" in learned.reflection.lesson
    timeout = failed_plan("Track order 70412", "query_logistics timed out", "query_logistics")
    last = learn_from_run(store, "run2", "Track order 70412", outcome("failed", timeout),
                          OFFLINE, attempt=2, max_attempts=2)
    assert last.reflection is not None and last.reflection.should_retry
    assert last.retry_plan is None


def test_a_success_that_needed_a_replan_keeps_a_lesson_and_a_cancelled_run_none() -> None:
    store = RunStore()
    first = failed_plan("Track order 88231", "query_logistics timed out", "query_logistics")
    final = first.model_copy(deep=True, update={"version": 2})
    final.steps.append(Step(id="s4", description="Look up again", tool="query_order",
                            status="completed", result={}))
    learned = learn_from_run(store, "run7", "Track order 88231",
                             outcome("completed", first, final), OFFLINE,
                             attempt=1, max_attempts=2)
    assert learned.lesson is not None and learned.retry_plan is None
    assert "query_order" in LessonBook(store).list_lessons()[0].text
    cancelled = learn_from_run(store, "run8", "x", outcome("cancelled", first), OFFLINE,
                               attempt=1, max_attempts=2)
    assert cancelled.reflection is None and cancelled.lesson is None
