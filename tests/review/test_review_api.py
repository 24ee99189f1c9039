"""The review API's routes in-process (Starlette's TestClient, no server, no network):
JSON answers, a 4xx and one line for each bad input with the store unchanged, tokens."""

from __future__ import annotations

import json
import logging

import pytest
from starlette.testclient import TestClient

from core import errors
from core.access.audit import acts
from core.access.tokens import MIN_TOKEN_CHARS, TOKENS_ENV
from core.base.messages import msg
from core.runs.live_views import process_store
from core.store.run_store import RunStore
from tests.support.failing_writes import failing_inserts
from tests.support.review import agent_plan, store_content
from ui.review_api import status_of

ANN = "a" * MIN_TOKEN_CHARS  # an approver's token
ED = "e" * MIN_TOKEN_CHARS  # an editor's token


@pytest.fixture
def api_with_tokens(monkeypatch, tmp_path):
    """Sign-in on, roles configured, two people with tokens."""
    monkeypatch.setattr("streamlit.auth_util.get_secrets_auth_section",
                        lambda: {"client_id": "x"})
    roles = tmp_path / "roles.toml"
    roles.write_text('[emails]\n"ann@example.com" = "approver"\n"ed@example.com" = "editor"\n',
                     encoding="utf-8")
    monkeypatch.setenv("PLANBOARD_ROLES", str(roles))
    monkeypatch.setenv(TOKENS_ENV, f"ann@example.com={ANN}, ed@example.com={ED}")


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_plan_is_sent_decided_and_reported_through_the_api(api, store):
    sent = api.post("/api/v1/reviews", json=agent_plan())
    assert sent.status_code == 201
    review = sent.json()["id"]
    assert sent.json()["review_url"].endswith(f"/?review={review}")
    assert api.get(f"/api/v1/reviews/{review}?wait=0.1").json()["status"] == "pending"
    plan = store.get_run(review).plan.canonical()
    plan["steps"][3]["args"] = {"to": "bob@example.com"}
    decided = api.post(f"/api/v1/reviews/{review}/decision",
                       json={"decision": "approve", "plan": plan})
    assert decided.status_code == 200
    got = api.get(f"/api/v1/reviews/{review}?wait=5").json()
    assert (got["status"], got["version"]) == ("approved", 2)
    assert got["plan"]["steps"][3]["args"] == {"to": "bob@example.com"}
    assert got["step_names"]["s4"] == "mail"
    event = {"type": "RUN_STARTED", "threadId": "t", "runId": review,
             "metadata": {"eventId": "1"}}
    assert api.post(f"/api/v1/runs/{review}/events", json=event).json() == {"applied": True}
    assert api.post(f"/api/v1/runs/{review}/events", json=event).json() == {"applied": False}
    assert store.get_run(review).status == "running"


def test_a_rejection_reaches_the_agent_with_its_comment(api):
    review = api.post("/api/v1/reviews", json={"plan": "1. one\n2. two"}).json()["id"]
    api.post(f"/api/v1/reviews/{review}/decision",
             json={"decision": "reject", "comment": "Too broad."})
    got = api.get(f"/api/v1/reviews/{review}").json()
    assert (got["status"], got["comment"]) == ("rejected", "Too broad.")


def _approved(api: TestClient) -> str:
    review = api.post("/api/v1/reviews", json=agent_plan()).json()["id"]
    api.post(f"/api/v1/reviews/{review}/decision", json={"decision": "approve"})
    api.post(f"/api/v1/runs/{review}/events",
             json={"type": "RUN_STARTED", "threadId": "t", "runId": review})
    return review


CYCLE = {"plan": [{"id": "a", "description": "x", "depends_on": ["b"]},
                  {"id": "b", "description": "y", "depends_on": ["a"]}]}
BAD_INPUTS = {
    "malformed JSON": ("POST", "/api/v1/reviews", b'{"plan": [', 400, "review.not_json"),
    "a dependency cycle": ("POST", "/api/v1/reviews", json.dumps(CYCLE).encode(), 422,
                           "review.problems"),
    "an unknown step in depends_on": (
        "POST", "/api/v1/reviews",
        json.dumps({"plan": [{"id": "a", "description": "x", "depends_on": ["z"]}]}).encode(),
        422, "review.unknown_dependency"),
    "5,000 steps": ("POST", "/api/v1/reviews", json.dumps(
        {"plan": [{"description": f"step {n}"} for n in range(5000)]}).encode(), 413,
        "review.too_many_steps"),
    "a 10 MB body": ("POST", "/api/v1/reviews", b" " * 10_000_000, 413,
                     "review.body_too_large"),
    "an unknown id": ("GET", "/api/v1/reviews/nope", None, 404, "review.not_found"),
    "an unknown run's events": ("GET", "/api/v1/runs/nope/events", None, 404, "run.not_found"),
    "an event for a step that does not exist": (
        "POST", "/api/v1/runs/{run}/events",
        json.dumps({"type": "STEP_STARTED", "stepName": "s9"}).encode(), 422,
        "review.event_unknown_step"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_each_bad_input_gets_its_4xx_one_line_and_nothing_stored(api, case, caplog):
    method, path, body, status, code = BAD_INPUTS[case]
    run_id = _approved(api)
    store = RunStore()
    try:
        before = store_content(store)
        with caplog.at_level(logging.DEBUG):
            answer = api.request(method, path.format(run=run_id), content=body)
        assert store_content(store) == before
    finally:
        store.close()
    assert (answer.status_code, answer.json()["code"]) == (status, code)
    assert "\n" not in answer.json()["error"] and answer.json()["error_zh"]
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


def test_with_sign_in_on_a_call_needs_a_persons_token(api, store, api_with_tokens):
    before = store_content(store)
    for headers, code in (({}, "api.no_token"), (_bearer("wrong" * 10), "api.bad_token")):
        answer = api.post("/api/v1/reviews", json=agent_plan(), headers=headers)
        assert (answer.status_code, answer.json()["code"]) == (401, code)
        assert api.get("/api/v1/reviews/nope", headers=headers).status_code == 401
    assert store_content(store) == before
    sent = api.post("/api/v1/reviews", json=agent_plan(), headers=_bearer(ED))
    assert sent.status_code == 201
    assert store.get_run(sent.json()["id"]).options["owner"] == {"name": "ed@example.com",
                                                                  "via": "token"}


def test_approving_through_the_api_needs_the_approver_role(api, store, api_with_tokens):
    review = api.post("/api/v1/reviews", json=agent_plan(), headers=_bearer(ED)).json()["id"]
    before = store_content(store)
    refused = api.post(f"/api/v1/reviews/{review}/decision", json={"decision": "approve"},
                       headers=_bearer(ED))
    assert refused.status_code == 403 and "approver" in refused.json()["error"]
    assert store_content(store) == before
    approved = api.post(f"/api/v1/reviews/{review}/decision", json={"decision": "approve"},
                        headers=_bearer(ANN))
    assert approved.json()["decided_by"] == "ann@example.com"
    decided = api.post(f"/api/v1/reviews/{review}/decision", json={"decision": "approve"},
                       headers=_bearer(ANN))
    assert decided.status_code == 409


def test_a_settled_runs_events_stream_as_server_sent_ag_ui_events(api):
    review = api.post("/api/v1/reviews", json={"plan": "1. one"}).json()["id"]
    api.post(f"/api/v1/reviews/{review}/decision", json={"decision": "reject", "comment": "no"})
    answer = api.get(f"/api/v1/runs/{review}/events")
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert [json.loads(line.removeprefix("data: "))["type"]
            for line in answer.text.split("\n\n") if line] == ["CUSTOM"]


def _failing_once(monkeypatch, module: str, cause: str) -> None:
    """``module``'s update_run fails once with the driver saying ``cause``."""
    import sqlite3

    import sqlalchemy as sa

    from core.store.schema import update_run

    calls: list[str] = []

    def update(conn, run_id, **values):
        calls.append(run_id)
        if len(calls) == 1:
            raise sa.exc.OperationalError("UPDATE runs", {}, sqlite3.OperationalError(cause))
        return update_run(conn, run_id, **values)

    monkeypatch.setattr(f"{module}.update_run", update)


def test_a_database_blip_during_a_decision_or_an_event_is_ridden_out(api, store, monkeypatch):
    review = api.post("/api/v1/reviews", json=agent_plan()).json()["id"]
    _failing_once(monkeypatch, "core.review.reviews", "database is locked")
    decided = api.post(f"/api/v1/reviews/{review}/decision", json={"decision": "approve"})
    assert (decided.status_code, decided.json()["status"]) == (200, "approved")
    assert [v.version for v in store.plan_versions(review)] == [1]
    _failing_once(monkeypatch, "core.review.agent_events", "database is locked")
    event = {"type": "RUN_STARTED", "threadId": "t", "runId": review}
    reported = api.post(f"/api/v1/runs/{review}/events", json=event)
    assert (reported.status_code, reported.json()) == (202, {"applied": True})
    assert [e.kind for e in store.events(review)].count("run_started") == 1
    assert store.get_run(review).status == "running"


def test_a_database_failure_is_a_503_of_one_line_and_nothing_is_written(api, store,
                                                                        monkeypatch, caplog):
    review = api.post("/api/v1/reviews", json=agent_plan()).json()["id"]
    before = store_content(store)
    _failing_once(monkeypatch, "core.review.reviews", "disk I/O error")
    with caplog.at_level(logging.INFO):
        decided = api.post(f"/api/v1/reviews/{review}/decision", json={"decision": "approve"})
    assert decided.status_code == 503
    assert "\n" not in decided.json()["error"] and decided.json()["error_zh"]
    assert "Traceback" not in caplog.text
    assert store_content(store) == before


def test_a_decision_lands_with_its_audit_entries_or_not_at_all(api, store, caplog):
    review = api.post("/api/v1/reviews", json=agent_plan()).json()["id"]
    before = store_content(store)
    served = process_store().engine  # the store the routes write to
    with failing_inserts(served, "audit_log", "disk I/O error"), \
            caplog.at_level(logging.INFO):
        decided = api.post(f"/api/v1/reviews/{review}/decision", json={"decision": "approve"})
    assert decided.status_code == 503 and "\n" not in decided.json()["error"]
    assert "Traceback" not in caplog.text
    assert store_content(store) == before
    with failing_inserts(served, "audit_log", "database is locked", times=1) as failed:
        decided = api.post(f"/api/v1/reviews/{review}/decision",
                           json={"decision": "reject", "comment": "not now"})
    assert (decided.status_code, decided.json()["status"], len(failed)) == (200, "rejected", 1)
    assert [a.action for a in acts(store, run_id=review)] == ["reject_plan"]


# Every kind of error of core.errors, and the status the API answers it with.
STATUS_OF_KIND = {
    "PlanBoardError": 500, "ConfigError": 500,
    "AccessDeniedError": 403, "NotIdentifiedError": 401,
    "InputError": 422, "MalformedInputError": 400, "ConflictError": 409,
    "InputTooLargeError": 413,
    "LLMError": 500, "LLMAuthError": 500, "LLMBudgetError": 500, "LLMConnectionError": 500,
    "LLMModelNotFoundError": 500, "LLMResponseError": 500, "LLMBadRequestError": 500,
    "PlanError": 500, "PlanParseError": 500, "PlanValidationError": 500,
    "PlanTooLargeError": 500, "UnservableRequestError": 500,
    "ToolError": 500, "UnknownToolError": 500, "ToolArgumentError": 500,
    "ToolExecutionError": 500, "ToolsetError": 500,
    "StoreError": 503, "RunNotFoundError": 404, "RunExistsError": 409,
    "RecordLostError": 503,
}


def test_each_kind_of_error_has_its_pinned_status():
    kinds = {name: getattr(errors, name) for name in errors.__all__
             if isinstance(getattr(errors, name), type)
             and issubclass(getattr(errors, name), errors.PlanBoardError)}
    assert sorted(kinds) == sorted(STATUS_OF_KIND), "pin the API status of a new error kind"
    answered = {name: status_of(kind.__new__(kind)) for name, kind in kinds.items()}
    assert answered == STATUS_OF_KIND


def test_the_status_follows_the_errors_kind_not_its_message_code():
    assert status_of(errors.ConflictError(msg("review.not_json", detail="x"))) == 409
    assert status_of(errors.InputError(msg("review.decided", review_id="r",
                                           status="approved"))) == 422
    assert status_of(errors.MalformedInputError("a body in any words")) == 400
