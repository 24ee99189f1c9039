"""A plan sent for review, read in its three shapes, with its tools; and what is refused."""

from __future__ import annotations

import json

import pytest

from core.base.messages import render
from core.errors import InputError, InputTooLargeError, ToolExecutionError
from core.plan.approval import has_side_effect
from core.review.declared_tools import declared_registry, read_declared_tools
from core.review.intake import MAX_BODY_BYTES, read_body, read_submission
from core.review.markdown import markdown_steps
from tests.support.review import TOOLS, agent_plan


def test_steps_with_tool_args_and_depends_on_get_planboard_ids_and_keep_their_names():
    read = read_submission(agent_plan())
    plan = read.plan
    assert plan.goal == "Mail a summary of the news"
    assert [(s.id, s.tool, s.depends_on) for s in plan.steps] == [
        ("s1", "search", []), ("s2", "fetch", ["s1"]), ("s3", None, ["s2"]),
        ("s4", "send_email", ["s3"])]
    assert plan.steps[0].args == {"query": "news"}
    assert all(step.status == "pending" for step in plan.steps)
    assert read.step_names == {"s1": "find", "s2": "read", "s3": "draft", "s4": "mail"}
    assert read.agent == "research-graph"


def test_planboard_plan_json_keeps_its_ids_and_fields_and_drops_runtime_state():
    body = {"plan": {"goal": "g", "definition_of_done": "done", "constraints": ["c"],
                     "steps": [
                         {"id": "s1", "description": "look", "tool": None, "status": "completed",
                          "result": 3},
                         {"id": "s2", "description": "answer", "depends_on": ["s1"],
                          "success_criteria": "short"}]}}
    read = read_submission(body)
    assert read.step_names == {}
    assert read.plan.canonical()["steps"] == [
        {"id": "s1", "description": "look", "tool": None, "depends_on": []},
        {"id": "s2", "description": "answer", "tool": None, "depends_on": ["s1"],
         "success_criteria": "short"}]
    assert (read.plan.definition_of_done, read.plan.constraints) == ("done", ["c"])
    assert read.plan.steps[0].status == "pending" and read.plan.steps[0].result is None


def test_a_markdown_plan_becomes_a_chain_of_its_outermost_items():
    text = ("# Add a retry to the client\n\nSome context.\n\n1. Read `client.py`\n"
            "2. Write a failing test\n   - for a timeout\n   - for a 503\n"
            "```python\n- not an item\n```\n3. Add the retry\n")
    read = read_submission({"plan": text})
    assert read.plan.goal == "Add a retry to the client"
    assert [(s.id, s.description, s.depends_on) for s in read.plan.steps] == [
        ("s1", "Read `client.py`", []),
        ("s2", "Write a failing test; for a timeout; for a 503", ["s1"]),
        ("s3", "Add the retry", ["s2"])]
    assert read.step_names == {}
    assert markdown_steps("- [ ] one\n- [x] two") == ("", ["one", "two"])


def test_side_effects_come_from_the_declared_tools_and_nothing_declared_is_one():
    tools = read_declared_tools([*TOOLS, {"name": "mcp_read", "annotations": {
        "read_only_hint": True}}, {"type": "function", "function": {"name": "openai_style"}}])
    registry = declared_registry(tools, "agent")
    assert {t.name: t.side_effect for t in registry} == {
        "search": False, "fetch": False, "send_email": True, "mcp_read": False,
        "openai_style": True}
    plan = read_submission(agent_plan()).plan
    assert [has_side_effect(s, registry) for s in plan.steps] == [False, False, False, True]


def test_arguments_are_checked_against_the_declared_schemas_but_not_undescribed_ones():
    wrong = agent_plan()
    wrong["plan"]["steps"][0]["args"] = {"query": 3}
    with pytest.raises(InputError, match="3 is not of type 'string'"):
        read_submission(wrong)
    free = {"tools": [{"name": "anything"}],
            "plan": [{"tool": "anything", "args": {"whatever": 1}}]}
    assert read_submission(free).plan.steps[0].args == {"whatever": 1}


@pytest.mark.parametrize(("body", "expected"), [
    ({"plan": [{"id": "a", "description": "x", "depends_on": ["b"]}]},
     'Step a depends on "b", which is not a step of the plan.'),
    ({"plan": [{"id": "s1", "description": "x", "depends_on": ["s2"]},
               {"id": "s2", "description": "y", "depends_on": ["s1"]}]},
     "The plan cannot be reviewed: s1, s2 form a dependency cycle; remove one link"),
    ({"plan": "Just prose, no list."},
     "The Markdown plan has no numbered or bulleted items; write each step as one."),
    ({"steps": [{"id": "a", "description": "x"}, {"id": "a", "description": "y"}]},
     "Two steps are named a; give each step its own id."),
    ({"plan": [{"tool": "nope"}], "tools": TOOLS}, "The plan cannot be reviewed: s1"),
    ({"plan": "1. x", "callback_url": "https://agent.example/done"},
     "PlanBoard calls no agent back: leave callback_url out"),
    ({"agent": "a"}, 'The body has no plan; put it under "plan"'),
    ({"plan": 5}, '"plan" is a JSON number; send an object with steps'),
    ({"plan": {"steps": "x"}}, "plan.steps: not a list"),
    ({"plan": {"phases": [{"steps": []}], "steps": []}},
     "plan.phases: a plan sent for review has steps, not phases"),
    ({"plan": {"steps": [{"description": "x"}], "constraints": [1]}},
     "plan.constraints: not a list of texts"),
    ({"plan": []}, "the plan has no steps; add at least one step"),
    ({"plan": ["look it up"]}, "steps[0]: not an object"),
    ({"plan": [{"id": True, "description": "x"}]}, "steps[0].id: not a text or a number"),
    ({"plan": [{"description": "x", "args": [1]}]}, "steps[0].args: not an object"),
    ({"plan": [{"description": "x", "depends_on": "0"}]}, "steps[0].depends_on: not a list"),
    ({"plan": [{"description": 5}]}, "steps[0].description: not text"),
    ({"plan": [{"description": "x" * 10_001}]},
     "steps[0].description: 10,001 characters, more than 10,000"),
    ({"plan": "1. x", "tools": {"name": "a"}}, "tools: not a list"),
    ({"plan": "1. x", "tools": [{"name": f"t{i}"} for i in range(501)]},
     "tools: 501 tools, more than 500"),
    ({"plan": "1. x", "tools": ["search"]}, "tools[0]: not an object"),
    ({"plan": "1. x", "tools": [{"description": "finds"}]}, "tools[0].name: missing or not text"),
    ({"plan": "1. x", "tools": [{"name": "a"}, {"name": "a"}]},
     "Tool a cannot be taken: it is declared twice."),
    ({"plan": "1. x", "tools": [{"name": "a", "parameters": {"type": 5}}]},
     "Tool a cannot be taken: "),
])
def test_a_plan_that_cannot_be_reviewed_is_refused_in_one_line(body, expected):
    with pytest.raises(InputError) as refused:
        read_submission(body)
    text = str(refused.value)
    assert expected in text and "\n" not in text
    assert render(refused.value, "zh") != text  # worded in Chinese too


def test_limits_refuse_a_large_body_and_too_many_steps():
    with pytest.raises(InputTooLargeError, match="1,000,000"):
        read_body(b" " * (MAX_BODY_BYTES + 1))
    with pytest.raises(InputTooLargeError, match="5,000 steps"):
        read_submission({"plan": [{"description": f"step {i}"} for i in range(5000)]})


@pytest.mark.parametrize(("body", "code"), [
    (b"{", "review.not_json"), (b"[1]", "review.not_object"), (b"\xff", "review.not_json")])
def test_a_body_that_is_not_a_json_object_is_refused(body, code):
    with pytest.raises(InputError) as refused:
        read_body(body)
    assert refused.value.message.code == code
    assert json.loads(json.dumps(str(refused.value)))  # one plain line


def test_a_declared_tool_is_never_called_by_planboard():
    [tool] = read_declared_tools([{"type": "function", "function": {
        "name": "send_email", "description": "sends", "parameters": {"type": "object"}}}])
    registry = declared_registry([tool], "research-graph")
    with pytest.raises(ToolExecutionError, match="send_email belongs to the agent"):
        registry.get("send_email").function(to="x")
