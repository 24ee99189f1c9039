"""StepReader: each step of a growing planning reply, as soon as its object is complete, read
as the finished reply's parser reads it."""

from __future__ import annotations

import json

from core.plan.parse import parse_plan
from core.plan.step_stream import StepReader

REPLY = json.dumps({"goal": "g", "constraints": ["a [b] {c}"], "steps": [
    {"id": "s1", "description": 'look up "x" {not json} [nor this]', "tool": "lookup",
     "args": {"key": "x", "nested": {"deep": [1, {"two": 2}]}}, "depends_on": []},
    {"id": "s2", "description": "escape \\\" and }", "tool": "lookup", "args": {"key": "y"},
     "depends_on": ["s1"]},
    {"id": "s3", "description": "answer", "tool": None, "depends_on": ["s1", "s2"]},
]})


def grown(text: str) -> list[list[str]]:
    """The ids the reader yields, fed ``text`` one character more at a time."""
    reader = StepReader("g")
    return [[step.id for step in steps] for end in range(1, len(text) + 1)
            if (steps := reader.feed(text[:end]))]


def test_each_step_is_read_once_its_closing_brace_arrives():
    assert grown(REPLY) == [["s1"], ["s1", "s2"], ["s1", "s2", "s3"]]
    first_end = REPLY.index(', {"id": "s2"') - 1  # s1's own closing brace
    reader = StepReader("g")
    assert reader.feed(REPLY[:first_end]) == []
    assert [step.id for step in reader.feed(REPLY[:first_end + 1])] == ["s1"]


def test_the_steps_read_early_are_the_finished_replys_steps():
    reader = StepReader("g")
    for end in range(1, len(REPLY) + 1):
        reader.feed(REPLY[:end])
    assert reader.steps == parse_plan(REPLY, "g").steps


def test_a_fenced_bare_array_after_thinking_is_read_too():
    steps = [{"stepId": 1, "description": "first"}, {"stepId": 2, "description": "second"}]
    reply = ("<think>the steps: [{\"id\": \"s9\"}]</think>\n```json\n" + json.dumps(steps)
             + "\n```")
    assert grown(reply) == [["s1"], ["s1", "s2"]]


def test_text_that_does_not_continue_the_last_starts_the_reading_over():
    reader = StepReader()
    reader.feed(REPLY[:REPLY.index('{"id": "s3"')])
    assert [step.id for step in reader.steps] == ["s1", "s2"]
    asked_again = json.dumps({"steps": [{"id": "s1", "description": "only", "tool": None}]})
    assert [step.description for step in reader.feed(asked_again)] == ["only"]


def test_a_reply_without_steps_shows_none():
    questions = json.dumps({"questions": [{"q": "which order?"}, {"q": "which day?"}]})
    assert grown(questions) == []
