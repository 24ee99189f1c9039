"""A real LangGraph graph (integrations.langgraph_review) planning on the scripted
OpenAI-compatible endpoint, its plan reviewed through the API's routes in this process."""

from __future__ import annotations

import pytest

from core.review.client import ReviewClient
from core.review.reviews import approve_review, reject_review
from tests.support.review import in_process, langgraph_agent, person_deciding


@pytest.fixture
def graph_parts(api, fake_openai):
    """The graph, its tools' calls; its client reaches the API's routes in this process."""
    return langgraph_agent(fake_openai, ReviewClient("http://testserver", send=in_process(api)))


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
