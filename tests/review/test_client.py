"""The review client (core.review.client) against the API's routes, in this process."""

from __future__ import annotations

import pytest

from core.review.client import ReviewClient, ReviewError, UnreachableError
from core.review.reviews import approve_review, reject_review
from tests.support.browser import free_port
from tests.support.review import agent_plan, in_process, person_deciding


@pytest.fixture
def client(api) -> ReviewClient:
    return ReviewClient("http://testserver", send=in_process(api))


def test_review_waits_for_the_approval_and_returns_the_approved_plan(client, store):
    sent = agent_plan()
    person = person_deciding(store, lambda s, review: approve_review(s, review, None))
    decision = client.review(sent["plan"], tools=sent["tools"], agent="graph", timeout=30)
    person.join()
    assert decision.approved and decision.version == 1
    assert [step["tool"] for step in decision.plan["steps"]] == [
        "search", "fetch", None, "send_email"]
    assert decision.step_names["s4"] == "mail"


def test_review_returns_a_rejection_with_its_comment(client, store):
    person = person_deciding(store, lambda s, review: reject_review(s, review, None, "No."))
    decision = client.review("1. one\n2. two", timeout=30)
    person.join()
    assert (decision.rejected, decision.comment) == (True, "No.")


def test_review_returns_pending_past_its_timeout(client):
    assert client.review("1. one", timeout=0.2).status == "pending"


def test_report_gives_each_event_an_id_and_a_repeat_is_applied_once(client, store):
    review = client.submit("1. one")
    approve_review(store, review, None)
    started = {"type": "RUN_STARTED", "threadId": "t", "runId": review}
    assert client.report(review, started) is True
    step = {"type": "STEP_STARTED", "stepName": "s1", "metadata": {"eventId": "x"}}
    assert client.report(review, step) is True
    assert client.report(review, step) is False
    assert store.get_run(review).plan.steps[0].status == "running"


def test_a_refusal_carries_the_apis_reason_and_code(client):
    with pytest.raises(ReviewError) as refused:
        client.submit([{"id": "a", "description": "x", "depends_on": ["b"]}])
    assert (refused.value.http_status, refused.value.code) == (422, "review.unknown_dependency")
    assert str(refused.value) == 'Step a depends on "b", which is not a step of the plan.'


def test_a_stopped_dashboard_is_unreachable():
    with pytest.raises(UnreachableError, match="cannot be reached"):
        ReviewClient(f"http://127.0.0.1:{free_port()}", timeout=5).submit("1. one")
