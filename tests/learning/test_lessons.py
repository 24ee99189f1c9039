"""Tests of the lessons pool: relevance, prompt lines, storage, and the lesson loop end to end."""

from __future__ import annotations

import json

import pytest

from core.errors import StoreError
from core.execution.executor import execute_step
from core.execution.options import RunOptions
from core.learning.lessons import (
    Lesson,
    LessonBook,
    lesson_prompt_lines,
    likely_tools,
    relevant_lessons,
    terms,
)
from core.learning.reflection import reflect
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.planning.planner import make_plan
from core.runs.runner import Runner
from core.runs.session import request_language
from core.store.run_store import RunStore
from core.tools.toolsets import default_registry
from demo.offline import offline_plan
from tests.support.fake_openai import text
from tests.support.waiting import DEFAULT_TIMEOUT_S

REFUND_LESSON = Lesson(id=1, text="退款前先用 query_order 确认订单已签收", tools=["apply_refund"])
SQL_LESSON = Lesson(id=2, text="Describe the tables before writing churn SQL", tools=["run_sql"])
OFF = Lesson(id=3, text="退款前先确认订单已签收（旧）", tools=["apply_refund"], enabled=False)


def test_terms_are_bigrams_and_words() -> None:
    assert terms("退款政策 for Orders") == {"退款", "款政", "政策", "orders"}


def test_relevant_lessons_by_terms_and_tools() -> None:
    pool = [REFUND_LESSON, SQL_LESSON, OFF]
    assert relevant_lessons("帮我把订单 88231 退款", [], pool) == [REFUND_LESSON]
    assert relevant_lessons("why do users churn?", [], pool) == [SQL_LESSON]
    assert relevant_lessons("hello", ["run_sql"], pool) == [SQL_LESSON]
    assert relevant_lessons("hello", ["calculate"], pool) == []
    assert relevant_lessons("订单退款 churn", ["apply_refund", "run_sql"], pool, limit=1) == [
        REFUND_LESSON]


def test_lesson_prompt_lines() -> None:
    assert lesson_prompt_lines([REFUND_LESSON, Lesson(text="  plain\n text ")]) == [
        "[apply_refund] 退款前先用 query_order 确认订单已签收", "plain text"]


def test_likely_tools() -> None:
    tools = likely_tools("帮我看看订单 88231 到了没，到了的话退掉", default_registry({}))
    assert tools == ["query_order", "apply_refund"]


def test_lesson_book_crud_and_persistence() -> None:
    book = LessonBook(RunStore())
    first = book.add("Check  the order\nfirst", ["apply_refund"], run_id="run1")
    assert first.id is not None and first.text == "Check the order first"
    assert first.created_at is not None and first.created_at.tzinfo is not None
    assert book.add("check the order FIRST", ["x"]).id == first.id  # no duplicates
    second = book.add("Another lesson", [])
    assert [lesson.id for lesson in book.list_lessons()] == [second.id, first.id]
    assert [lesson.run_id for lesson in book.list_lessons(run_id="run1")] == ["run1"]
    edited = book.update(first.id, text="Check the order status first", enabled=False)
    assert edited.text == "Check the order status first" and not edited.enabled
    assert [lesson.id for lesson in book.list_lessons(enabled_only=True)] == [second.id]
    again = LessonBook(RunStore())  # a new store on the same database sees it
    assert again.get(first.id).text == "Check the order status first"
    again.delete(second.id)
    with pytest.raises(StoreError, match="no lesson"):
        book.get(second.id)
    with pytest.raises(StoreError, match="no lesson"):
        book.update(999, enabled=True)
    with pytest.raises(StoreError, match="no lesson"):
        book.delete(999)


def test_a_failed_run_leaves_a_lesson_that_the_next_plan_carries(fake_openai) -> None:
    registry = default_registry({})
    offline = Engine(registry)
    plan = offline_plan("帮我把订单 70412 退掉", registry)
    refund = next(s for s in plan.steps if s.tool == "apply_refund")
    refund.condition = None  # a plan without the check, as a careless planner might write
    refund.depends_on = []
    for step in plan.steps[:-1]:
        outcome = execute_step(plan, step, offline)
        step.advance("running")
        step.advance(outcome.status)
        step.result, step.error = outcome.result, outcome.error
    assert refund.status == "failed"

    store = RunStore()
    run_id = store.create_run("帮我把订单 70412 退掉", {}, plan)
    reflection, _ = reflect(plan, refund.error or "", offline)
    book = LessonBook(store)
    stored = book.add_reflection(reflection, run_id=run_id)
    assert stored.run_id == run_id and "apply_refund" in stored.tools

    request = "订单 66001 坏了，帮我退掉"
    chosen = book.relevant(request, likely_tools(request, registry))
    assert [lesson.id for lesson in chosen] == [stored.id]
    answer = {"goal": request, "steps": [
        {"id": "s1", "description": "查询订单", "tool": "query_order",
         "args": {"order_id": "66001"}, "depends_on": []},
        {"id": "s2", "description": "回复", "tool": None, "depends_on": ["s1"]}]}
    fake_openai.script(text(json.dumps(answer, ensure_ascii=False)))
    with OpenAIChatModel(fake_openai.settings()) as model:
        make_plan(request, Engine(registry, model), lessons=lesson_prompt_lines(chosen),
                  language=request_language(request))
    system = fake_openai.chat_bodies[0]["messages"][0]["content"]
    assert stored.text in system


def test_attempt_loop_against_the_fake_endpoint(fake_openai) -> None:
    """Plan (LLM) → the run fails → reflection (LLM) → the retry's planner prompt carries
    the lesson, and the retry completes: the runner's own attempt loop, end to end."""
    registry = default_registry({})
    careless = {"goal": "退掉订单 70412", "steps": [
        {"id": "s1", "description": "申请退款", "tool": "apply_refund",
         "args": {"order_id": "70412", "reason": "坏了"}, "depends_on": []},
        {"id": "s2", "description": "回复", "tool": None, "depends_on": ["s1"]}]}
    careful = {"goal": "退掉订单 70412", "steps": [
        {"id": "s1", "description": "查询订单", "tool": "query_order",
         "args": {"order_id": "70412"}, "depends_on": []},
        {"id": "s2", "description": "已签收才退款", "tool": "apply_refund",
         "args": {"order_id": "70412", "reason": "坏了"}, "depends_on": ["s1"],
         "condition": "s1.status == 'delivered'"},
        {"id": "s3", "description": "回复", "tool": None, "depends_on": ["s1", "s2"]}]}
    lesson = "apply_refund 之前先用 query_order 确认已签收"
    fake_openai.script(
        text(json.dumps(careless, ensure_ascii=False)),
        text(json.dumps({"root_cause": "未签收就申请退款", "lesson": lesson,
                         "should_retry": True, "retry_hint": "加上签收条件"},
                        ensure_ascii=False)),
        text(json.dumps(careful, ensure_ascii=False)),
        text("订单 70412 还在运输中，签收后才能退款。"),
    )
    options = RunOptions(max_replans=0, max_attempts=2, confirm_side_effects=False)
    with OpenAIChatModel(fake_openai.settings()) as model, Runner(RunStore()) as runner:
        online = Engine(registry, model)
        plan = make_plan("退掉订单 70412", online, language="zh")
        run_id = runner.start("退掉订单 70412", plan, engine=online, options=options)
        record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed" and "运输中" in (record.answer or "")
    stored = LessonBook(runner.store).list_lessons()
    assert [(item.text, item.run_id) for item in stored] == [(lesson, run_id)]
    bodies = fake_openai.chat_bodies
    assert len(bodies) == 4
    assert lesson not in bodies[0]["messages"][0]["content"]
    assert "not delivered" in bodies[1]["messages"][1]["content"]  # the reflection's evidence
    assert lesson in bodies[2]["messages"][0]["content"]
    assert "加上签收条件" in bodies[2]["messages"][0]["content"]
