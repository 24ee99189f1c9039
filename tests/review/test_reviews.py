"""A review stored as a run, decided once: approved with its exact version, or rejected."""

from __future__ import annotations

import threading

import pytest

from core.access.audit import acts
from core.access.identity import token_actor
from core.errors import AccessDeniedError, InputError, RunNotFoundError
from core.lifecycle import allowed_controls
from core.plan.model import Plan, Step
from core.review.agent_events import accept_event
from core.review.intake import read_submission
from core.review.reviews import (
    approve_review,
    decide,
    decision_of,
    reject_review,
    submit_review,
    wait_for_decision,
)
from core.runs.view import load_run_view
from tests.support.review import agent_plan, store_content


@pytest.fixture
def sent(store):
    return submit_review(store, read_submission(agent_plan()), None)


def test_a_review_is_a_planned_run_with_its_plan_as_the_first_version(store, sent):
    record = store.get_run(sent)
    assert record.status == "planned" and record.request == "Mail a summary of the news"
    assert [v.source for v in store.plan_versions(sent)] == ["draft"]
    assert [r.run_id for r in store.list_runs()] == [sent]  # History lists it
    decision = decision_of(store, sent)
    assert (decision.status, decision.agent, decision.plan) == ("pending", "research-graph",
                                                                None)


def test_approving_an_edit_stores_it_as_a_version_and_returns_exactly_that(store, sent):
    edited = store.get_run(sent).plan.model_copy(deep=True)
    edited.steps[3].args = {"to": "bob@example.com"}
    decision = approve_review(store, sent, None, edited)
    assert (decision.status, decision.version) == ("approved", 2)
    assert [v.source for v in store.plan_versions(sent)] == ["draft", "manual"]
    assert decision.plan == store.plan_versions(sent)[1].plan.canonical()
    assert decision.plan["steps"][3]["args"] == {"to": "bob@example.com"}
    assert [a.action for a in acts(store, run_id=sent)] == ["edit", "approve"]


def test_an_edit_of_a_plan_that_declared_no_tools_keeps_the_tools_it_named(store):
    """Its tools were taken as named when it was sent: an edit of an argument is too."""
    sent = submit_review(store, read_submission({k: v for k, v in agent_plan().items()
                                                 if k != "tools"}), None)
    edited = store.get_run(sent).plan.model_copy(deep=True)
    edited.steps[0].args = {"query": "weather"}
    decision = approve_review(store, sent, None, edited)
    assert (decision.status, decision.plan["steps"][0]["args"]) == ("approved",
                                                                    {"query": "weather"})


def test_approving_unchanged_keeps_version_one(store, sent):
    decision = approve_review(store, sent, None, store.get_run(sent).plan)
    assert decision.version == 1 and len(store.plan_versions(sent)) == 1


def test_a_rejection_cancels_the_run_and_carries_the_comment(store, sent):
    decision = reject_review(store, sent, None, "  Do not mail anyone.  ")
    assert (decision.status, decision.comment) == ("rejected", "Do not mail anyone.")
    assert store.get_run(sent).status == "cancelled"
    assert [a.action for a in acts(store, run_id=sent)] == ["reject_plan"]


def test_a_review_is_decided_once_and_a_second_decision_changes_nothing(store, sent):
    approve_review(store, sent, None)
    before = store_content(store)
    with pytest.raises(InputError, match="already approved"):
        reject_review(store, sent, None, "too late")
    with pytest.raises(InputError, match="already approved"):
        approve_review(store, sent, None)
    assert store_content(store) == before


def test_an_edit_with_problems_is_refused_and_nothing_is_stored(store, sent):
    edited = store.get_run(sent).plan.model_copy(deep=True)
    edited.steps[0].depends_on = ["s4"]
    before = store_content(store)
    with pytest.raises(InputError, match="dependency cycle"):
        approve_review(store, sent, None, edited)
    assert store_content(store) == before


def test_approving_a_side_effect_needs_the_approver_role(store, sent, tmp_path, monkeypatch):
    roles = tmp_path / "roles.toml"
    roles.write_text('[emails]\n"ed@example.com" = "editor"\n"ann@example.com" = "approver"\n',
                     encoding="utf-8")
    monkeypatch.setenv("PLANBOARD_ROLES", str(roles))
    before = store_content(store)
    with pytest.raises(AccessDeniedError, match="approver"):
        approve_review(store, sent, token_actor("ed@example.com"))
    assert store_content(store) == before
    assert approve_review(store, sent, token_actor("ann@example.com")).decided_by == \
        "ann@example.com"


def test_decide_reads_a_persons_decision_sent_as_json(store, sent):
    with pytest.raises(InputError, match="say why"):
        decide(store, sent, {"decision": "reject"}, None)
    with pytest.raises(InputError, match='"approve" or "reject"'):
        decide(store, sent, {"decision": "maybe"}, None)
    assert decide(store, sent, {"decision": "reject", "comment": "no"}, None).status == \
        "rejected"


def test_waiting_returns_when_the_decision_comes(store, sent):
    assert wait_for_decision(store, sent, 0).status == "pending"
    decider = threading.Timer(0.2, lambda: reject_review(store, sent, None, "no"))
    decider.start()
    try:
        decision = wait_for_decision(store, sent, 30)
    finally:
        decider.join()
    assert (decision.status, decision.comment) == ("rejected", "no")


def test_an_unknown_id_or_a_run_that_is_no_review_is_not_found(store):
    own = store.create_run("own run")
    for missing in ("nope", own):
        with pytest.raises(RunNotFoundError, match="no review"):
            decision_of(store, missing)


def test_a_decision_made_just_after_the_first_look_is_seen(store, sent, monkeypatch):
    """The person decides between the waiter's first read of the decision and its next
    look at the run: the change is still noticed (it was missed until the wait ran out)."""
    from core.review import reviews

    real = reviews.decision_of

    def read_then_person_decides(*args, **kwargs):
        found = real(*args, **kwargs)
        if found.status == "pending":
            reject_review(store, sent, None, "no")
        return found

    monkeypatch.setattr(reviews, "decision_of", read_then_person_decides)
    assert wait_for_decision(store, sent, 2).status == "rejected"


def test_a_review_cancelled_before_a_decision_reads_as_rejected(store, sent):
    store.set_status(sent, "cancelled")
    decision = decision_of(store, sent)
    assert (decision.status, decision.comment) == (
        "rejected", "the run was cancelled in PlanBoard before a decision")
    with pytest.raises(InputError, match="already rejected"):
        approve_review(store, sent, None)


def test_a_reviews_run_view_reaches_no_control_and_names_its_agents_side_effects(
        store, sent, registry):
    approve_review(store, sent, None)
    accept_event(store, sent, {"type": "RUN_STARTED", "threadId": "t", "runId": sent}, None)
    view = load_run_view(store, sent)
    assert view.record.status == "running" and view.controls == frozenset()
    assert view.side_effect_tools(registry) == {"send_email"}  # as declared, not the catalogue
    assert view.unasked is None  # its agent asks no one here


def test_a_run_of_planboards_own_reaches_its_controls_and_the_catalogues_side_effects(
        store, registry):
    own = store.create_run("refund", {}, Plan(goal="refund", steps=[
        Step(id="s1", description="refund", tool="apply_refund")]), status="running")
    view = load_run_view(store, own)
    assert view.controls == allowed_controls("running") and "cancel" in view.controls
    risky = view.side_effect_tools(registry)
    assert risky == {t.name for t in registry if t.side_effect} and "apply_refund" in risky
    assert view.side_effect_tools(registry) is risky  # worked out once per view
