"""A real LangGraph graph (integrations.langgraph_review) planning on the scripted
OpenAI-compatible endpoint, its plan reviewed through the API's routes in this process."""

from __future__ import annotations

import json

import openai
import pytest

from core.review.client import ReviewClient
from core.review.reviews import approve_review, reject_review
from integrations.langgraph_review import review_graph
from tests.support.fake_openai import DEFAULT_KEY, text
from tests.support.review import TOOLS, in_process, person_deciding

PLAN = {"goal": "Mail Ann a summary of the news", "steps": [
    {"id": "find", "tool": "search", "args": {"query": "news"}},
    {"id": "read", "tool": "fetch", "args": {"url": "https://example.com/a"},
     "depends_on": ["find"]},
    {"id": "pick", "tool": "search", "args": {"query": "weather"}, "depends_on": ["read"]},
    {"id": "mail", "tool": "send_email", "args": {"to": "ann@example.com", "body": "news"},
     "depends_on": ["pick"]},
]}


@pytest.fixture
def graph_parts(api, fake_openai):
    """The graph's planner (a chat model on the scripted endpoint), its tools (recording
    each call) and its client."""
    fake_openai.script(text(json.dumps(PLAN)))
    model = openai.OpenAI(base_url=fake_openai.base_url, api_key=DEFAULT_KEY)

    def planner(request: str) -> dict:
        reply = model.chat.completions.create(
            model="fake-planner", messages=[{"role": "user", "content": request}])
        return json.loads(reply.choices[0].message.content)

    calls: list[tuple[str, dict]] = []

    def tool(name: str):
        return lambda **args: calls.append((name, args)) or {"ok": name}

    tools = {name: tool(name) for name in ("search", "fetch", "send_email")}
    client = ReviewClient("http://testserver", send=in_process(api))
    return review_graph(planner, tools, client, tool_schemas=TOOLS, timeout=30), calls


def _edit_step_3_and_approve(store, review: str) -> None:
    edited = store.get_run(review).plan.model_copy(deep=True)
    edited.step("s3").args = {"query": "weather in Paris"}
    approve_review(store, review, None, edited)


def test_the_graph_executes_exactly_the_approved_edit_and_reports_its_steps(graph_parts,
                                                                           store):
    graph, calls = graph_parts
    person = person_deciding(store, _edit_step_3_and_approve)
    final = graph.invoke({"request": "Mail Ann a summary of the news"})
    person.join()
    assert calls == [("search", {"query": "news"}), ("fetch", {"url": "https://example.com/a"}),
                     ("search", {"query": "weather in Paris"}),
                     ("send_email", {"to": "ann@example.com", "body": "news"})]
    assert "rejected" not in final
    run = store.get_run(final["review_id"])
    assert run.status == "completed" and run.plan.version == 2
    assert [(s.id, s.status) for s in run.plan.steps] == [
        ("s1", "completed"), ("s2", "completed"), ("s3", "completed"), ("s4", "completed")]
    assert run.plan.step("s3").resolved_args == {"query": "weather in Paris"}


def test_a_rejection_reaches_the_graph_and_no_tool_runs(graph_parts, store):
    graph, calls = graph_parts
    person = person_deciding(store, lambda s, r: reject_review(s, r, None, "Do not mail Ann."))
    final = graph.invoke({"request": "Mail Ann a summary of the news"})
    person.join()
    assert (final["rejected"], calls) == ("Do not mail Ann.", [])
    assert store.get_run(final["review_id"]).status == "cancelled"
