"""``python -m core review-hook``: a coding assistant's plan-mode hook answered from PlanBoard."""

from __future__ import annotations

import io
import json

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from core.cli.main import main
from core.cli.review_hook import answer_hook
from core.review.client import ReviewClient
from core.review.reviews import approve_review, reject_review
from tests.support.browser import free_port
from tests.support.review import in_process, person_deciding
from ui.review_api import api_routes

# what the assistant sends a PermissionRequest hook with the matcher ExitPlanMode
HOOK_INPUT = json.dumps({
    "session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": "/repo",
    "permission_mode": "plan", "hook_event_name": "PermissionRequest",
    "tool_name": "ExitPlanMode",
    "tool_input": {"plan": "# Add a retry\n\n1. Read client.py\n2. Add a test\n3. Add the "
                           "retry\n"},
})


@pytest.fixture
def hook_client():
    with TestClient(Starlette(routes=api_routes())) as api:
        yield ReviewClient("http://testserver", send=in_process(api))


def _answer(client: ReviewClient, store, decide, timeout: float = 30) -> tuple[dict, str]:
    thread = person_deciding(store, decide)
    log = io.StringIO()
    try:
        answer = answer_hook(HOOK_INPUT, client, timeout=timeout, log=log)
    finally:
        thread.join()
    return answer, log.getvalue()


def test_an_approved_plan_is_allowed(hook_client, store):
    answer, log = _answer(hook_client, store, lambda s, r: approve_review(s, r, None))
    assert answer == {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                             "decision": {"behavior": "allow"}}}
    assert "/?review=" in log
    review = store.list_runs()[0]
    assert [s.description for s in store.get_run(review.run_id).plan.steps] == [
        "Read client.py", "Add a test", "Add the retry"]


def test_a_rejected_plan_is_denied_with_the_comment(hook_client, store):
    answer, _ = _answer(hook_client, store,
                        lambda s, r: reject_review(s, r, None, "Test the timeout first."))
    assert answer == {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
        "behavior": "deny", "message": "Test the timeout first."}}}


def test_without_a_decision_in_time_it_answers_nothing(hook_client):
    log = io.StringIO()
    assert answer_hook(HOOK_INPUT, hook_client, timeout=0.2, log=log) is None
    assert "no decision" in log.getvalue()


@pytest.mark.parametrize("hook_input", ["not json", "{}", '{"tool_input": {"plan": ""}}'])
def test_input_without_a_plan_answers_nothing(hook_client, hook_input):
    log = io.StringIO()
    assert answer_hook(hook_input, hook_client, timeout=1, log=log) is None
    assert "holds no plan" in log.getvalue()


def test_with_the_dashboard_stopped_it_exits_0_and_prints_nothing(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(HOOK_INPUT))
    code = main(["review-hook", "--url", f"http://127.0.0.1:{free_port()}", "--timeout", "5"])
    out, err = capsys.readouterr()
    assert (code, out) == (0, "")
    assert "cannot be reached" in err and err[-1] == "\n" and err.count("\n") == 1
