"""Tests of clarifying questions: offline rules, the planner's question reply, merged answers."""

from __future__ import annotations

import pytest

from core.planning.clarify import (
    merge_answers,
    needs_clarification_offline,
    parse_questions,
)
from core.tools.registry import ToolRegistry

SEED_REQUEST = (
    "我家老人想要一台扫地机，预算 2000 以内，要好操作的。另外帮我看看订单 88231 到了没，"
    "到了的话帮我把那台坏的退掉。"
)


@pytest.mark.parametrize(("request_text", "expected"), [
    ("帮我把那台坏的退掉", ["请提供订单号（例如 88231），这样才能查询或办理。"]),
    ("Please refund my order, it arrived broken",
     ["Which order is it? Please give the order number (for example 88231)."]),
    ("推荐一款性价比高的扫地机", ["您的预算大概是多少？"]),
    ("recommend an affordable robot vacuum", ["What is your budget, roughly?"]),
    ("查一下订单 88231", []),
    (SEED_REQUEST, []),
    ("推荐一款扫地机", []),  # conservative: the price was not said to matter
    ("退货政策是什么？", []),
    ("我的订单到了吗？另外我的快递到哪了", ["请提供订单号（例如 88231），这样才能查询或办理。"]),
])
def test_offline_questions(registry: ToolRegistry, request_text: str,
                           expected: list[str]) -> None:
    assert needs_clarification_offline(request_text, registry) == expected


def test_no_order_question_without_order_tools() -> None:
    assert needs_clarification_offline("帮我把那台坏的退掉", ToolRegistry()) == []


@pytest.mark.parametrize(("reply", "expected"), [
    ('{"questions": ["订单号是多少？", "预算多少？"]}', ["订单号是多少？", "预算多少？"]),
    ('<think>missing id</think>```json\n{"questions": ["Which order?"]}\n```', ["Which order?"]),
    ('Before planning: {"questions": ["Which order?", ""]} thanks', ["Which order?"]),
    ('{"questions": []}', None),
    ('{"goal": "x", "steps": [{"id": "s1", "description": "y"}], "questions": ["z"]}', None),
    ("I will plan this now.", None),
    ('{"questions": "which order?"}', None),
])
def test_parse_questions(reply: str, expected: list[str] | None) -> None:
    assert parse_questions(reply) == expected


def test_merge_answers() -> None:
    merged = merge_answers("帮我把那台坏的退掉", ["订单号是多少？", "原因？"], ["88231", " "], "zh")
    assert merged == "帮我把那台坏的退掉（88231）"
    english = merge_answers("Refund my order.", ["Which order?"], ["88231"], "en")
    assert english == "Refund my order (88231)"
    assert merge_answers("x", ["q"], [""], "en") == "x"


def test_merged_answers_satisfy_the_offline_rules(registry: ToolRegistry) -> None:
    questions = needs_clarification_offline("帮我把那台坏的退掉", registry)
    merged = merge_answers("帮我把那台坏的退掉", questions, ["订单 88231"], "zh")
    assert needs_clarification_offline(merged, registry) == []


