"""AG-UI events: an agent's reported into its approved run, and any run streamed as them."""

from __future__ import annotations

import json

import pytest
from ag_ui.core import Event, EventType
from pydantic import TypeAdapter

from core.errors import InputError
from core.llm.engine import Engine
from core.review.agent_events import accept_event
from core.review.agui_stream import agui_events, follow_events
from core.review.intake import read_submission
from core.review.reviews import approve_review, submit_review
from core.tools.toolsets import default_registry
from demo.offline import offline_plan
from tests.support.review import agent_plan, store_content
from tests.support.waiting import DEFAULT_TIMEOUT_S

EVENTS = TypeAdapter(Event)


@pytest.fixture
def approved(store):
    review = submit_review(store, read_submission(agent_plan()), None)
    approve_review(store, review, None)
    return review


def _events(run_id: str) -> list[dict]:
    """The agent's run of the approved plan: each step by its own name, one tool call."""
    found = [{"type": "RUN_STARTED", "threadId": "t", "runId": run_id}]
    for name in ("find", "read", "draft", "mail"):
        found.append({"type": "STEP_STARTED", "stepName": name})
        if name == "mail":
            found += [
                {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "send_email"},
                {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"to": "ann@'},
                {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": 'example.com"}'},
                {"type": "TOOL_CALL_END", "toolCallId": "c1"},
                {"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "messageId": "m1",
                 "content": '{"sent": true}'}]
        found.append({"type": "STEP_FINISHED", "stepName": name})
    found.append({"type": "RUN_FINISHED", "threadId": "t", "runId": run_id, "result": "sent"})
    return [{**event, "metadata": {"eventId": f"e{n}"}} for n, event in enumerate(found)]


def test_the_agents_events_become_the_runs_steps_and_answer(store, approved):
    for event in _events(approved):
        assert accept_event(store, approved, event, None) is True
    record = store.get_run(approved)
    assert (record.status, record.answer) == ("completed", "sent")
    assert [s.status for s in record.plan.steps] == ["completed"] * 4
    mail = record.plan.step("s4")
    assert (mail.resolved_args, mail.result) == ({"to": "ann@example.com"}, {"sent": True})
    kinds = [e.kind for e in store.events(approved)]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("step_started") == kinds.count("step_completed") == 4


def test_a_run_error_fails_the_step_still_running_with_the_error(store, approved):
    for event in [{"type": "RUN_STARTED", "threadId": "t", "runId": approved},
                  {"type": "STEP_STARTED", "stepName": "find"},
                  {"type": "STEP_FINISHED", "stepName": "find"},
                  {"type": "STEP_STARTED", "stepName": "read"},
                  {"type": "RUN_ERROR", "message": "TimeoutError: fetch took too long"}]:
        accept_event(store, approved, event, None)
    run = store.get_run(approved)
    assert run.status == "failed"
    assert [(s.id, s.status) for s in run.plan.steps] == [
        ("s1", "completed"), ("s2", "failed"), ("s3", "pending"), ("s4", "pending")]
    assert run.plan.step("s2").error == "TimeoutError: fetch took too long"
    assert run.plan.step("s2").finished_at is not None


def test_an_event_sent_twice_is_applied_once(store, approved):
    first, started = _events(approved)[:2]
    assert accept_event(store, approved, first, None) is True
    assert accept_event(store, approved, started, None) is True
    before = store_content(store)
    assert accept_event(store, approved, started, None) is False
    assert store_content(store) == before


@pytest.mark.parametrize(("event", "match"), [
    ({"type": "STEP_STARTED", "stepName": "s9"}, 'no step "s9"; its steps are s1, s2, s3, s4'),
    ({"type": "STEP_FINISHED", "stepName": "find"}, "step s1 is pending"),
    ({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}, "not taken"),
    ({"type": "STEP_STARTED"}, "not an AG-UI event"),
    ({"type": "TOOL_CALL_END", "toolCallId": "never"}, 'tool call "never"'),
    ({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}, "cannot come now"),
])
def test_an_event_that_cannot_be_taken_is_refused_and_nothing_is_written(store, approved,
                                                                          event, match):
    accept_event(store, approved, _events(approved)[0], None)  # the run has started
    before = store_content(store)
    with pytest.raises(InputError, match=match):
        accept_event(store, approved, event, None)
    assert store_content(store) == before


def test_nothing_is_taken_before_the_plan_is_approved(store):
    review = submit_review(store, read_submission(agent_plan()), None)
    before = store_content(store)
    with pytest.raises(InputError, match="not approved"):
        accept_event(store, review, _events(review)[0], None)
    assert store_content(store) == before


def test_an_outside_run_streams_back_the_events_it_reported(store, approved):
    sent = _events(approved)
    for event in sent:
        accept_event(store, approved, event, None)
    streamed = [json.loads(line.removeprefix("data: "))
                for line in "".join(follow_events(store, approved)).split("\n\n") if line]
    assert streamed == sent


def test_an_offline_demo_run_streams_as_ag_ui_events(runner, store):
    engine = Engine(registry=default_registry({}), model=None)
    plan = offline_plan("帮我查一下订单 88231 的物流", engine.registry)
    run_id = runner.start("帮我查一下订单 88231 的物流", plan, engine=engine)
    assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"
    finished = store.get_run(run_id).plan
    streamed = [EVENTS.validate_json(line.removeprefix("data: "))
                for line in "".join(follow_events(store, run_id)).split("\n\n") if line]
    assert [e.type for e in streamed] == [e.type for _, e in agui_events(store, run_id)]
    types = [e.type for e in streamed if e.type != EventType.CUSTOM]
    assert types[0] == EventType.RUN_STARTED and types[-1] == EventType.RUN_FINISHED
    for step in finished.steps:
        pair = [e.type for e in streamed if getattr(e, "step_name", None) == step.id]
        assert pair == [EventType.STEP_STARTED, EventType.STEP_FINISHED]
    tools = [s for s in finished.steps if s.tool]
    assert tools
    starts = [e for e in streamed if e.type == EventType.TOOL_CALL_START]
    assert sorted(e.tool_call_name for e in starts) == sorted(s.tool for s in tools)
    for start in starts:
        assert [e.type for e in streamed if getattr(e, "tool_call_id", None) ==
                start.tool_call_id] == [EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS,
                                        EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT]
