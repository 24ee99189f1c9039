"""The store's claims (core.store.claims): who continues a run, cancels of runs nobody
executes, crash records, the runs a live process holds.

Every test runs on SQLite and on a throwaway PostgreSQL (tests/support/pg.py). Claims racing in
threads and processes: tests/runs/test_run_claims.py.
"""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from core.errors import StoreError
from core.execution.events import RunEvent
from core.store.run_store import CANCELLED_STEP, RunStore
from tests.support.pg import on_both_backends
from tests.support.stored_runs import stopped_run

pytestmark = on_both_backends
MISSING_TABLE = r"no such table|relation \"\w+\" does not exist"  # SQLite | PostgreSQL


def test_a_claim_sets_the_run_running_under_its_workflow_with_what_it_brings(store):
    run_id = stopped_run(store, "paused", workflow_id="wf-0")
    edited = store.get_run(run_id).plan.model_copy(deep=True, update={"version": 2})
    store.claim_run(run_id, {"paused", "interrupted"}, workflow_id="wf-1", plan=edited,
                    reason="edited while paused", source="manual",
                    events=[RunEvent(kind="resumed", plan_version=2)],
                    options={"max_parallel": 3})
    record = store.get_run(run_id)
    assert (record.status, record.workflow_id, record.options) == (
        "running", "wf-1", {"max_parallel": 3})
    assert [(v.version, v.source, v.reason) for v in store.plan_versions(run_id)] == [
        (1, "draft", "initial plan"), (2, "manual", "edited while paused")]
    assert [(e.kind, e.plan_version) for e in store.events(run_id)] == [("resumed", 2)]


def test_of_two_claimers_one_wins_and_the_other_is_told(store, db_url):
    run_id = stopped_run(store, "paused", workflow_id="wf-0")
    other = RunStore(db_url)  # another process's store
    try:
        store.claim_run(run_id, {"paused"}, workflow_id="wf-mine",
                        events=[RunEvent(kind="resumed")])
        with pytest.raises(StoreError, match="already being run by another process"):
            other.claim_run(run_id, {"paused"}, workflow_id="wf-theirs",
                            events=[RunEvent(kind="resumed")], options={"max_parallel": 9})
    finally:
        other.close()
    record = store.get_run(run_id)
    assert (record.status, record.workflow_id, record.options) == ("running", "wf-mine", {})
    assert [e.kind for e in store.events(run_id)] == ["resumed"]  # the loser wrote nothing


def test_cancel_unowned_ends_every_unfinished_step_at_once(store):
    run_id = stopped_run(store, "interrupted", running_step=True, workflow_id="wf-0")
    record = store.cancel_unowned(run_id, reason="cancelled while interrupted")
    assert (record.status, record.workflow_id) == ("cancelled", "wf-0")
    assert record.finished_at is not None
    assert [(s.status, s.error) for s in record.plan.steps] == [
        ("completed", None), ("skipped", str(CANCELLED_STEP)), ("skipped", str(CANCELLED_STEP))]
    assert [(e.kind, e.data) for e in store.events(run_id)] == [
        ("cancelled", {"reason": "cancelled while interrupted", "skipped": ["s2", "s3"]})]
    with pytest.raises(StoreError, match=f"cannot cancel run {run_id}: it is already cancelled"):
        store.cancel_unowned(run_id, reason="again")


def test_a_crash_is_recorded_once_with_its_step_resets(store):
    run_id = stopped_run(store, "running", running_step=True, workflow_id="wf-0")
    record = store.get_run(run_id)
    plan = record.plan.model_copy(deep=True)
    plan.steps[1].advance("pending", reason="crash reset")
    resets = [RunEvent(kind="step_reset", step_id="s2")]
    assert store.mark_interrupted(record, plan, resets, RunEvent(kind="interrupted"))
    # a second process recording the same crash from the same read changes nothing
    assert not store.mark_interrupted(record, plan, resets, RunEvent(kind="interrupted"))
    after = store.get_run(run_id)
    assert (after.status, after.workflow_id) == ("interrupted", "wf-0")
    assert [s.status for s in after.plan.steps] == ["completed", "pending", "pending"]
    assert [e.kind for e in store.events(run_id)] == ["step_reset", "interrupted"]


def test_held_runs_are_those_a_live_process_holds(store):
    held = {store.create_run(status, {}, None, status=status): status
            for status in ("planned", "running", "waiting_confirmation", "paused")}
    for status in ("interrupted", "completed", "failed", "cancelled"):
        store.create_run(status, {}, None, status=status)
    assert {r.run_id: r.status for r in store.held_runs()} == held
    assert all(r.plan is None for r in store.held_runs())


def test_claims_methods_report_database_failures_as_store_errors(store):
    """The methods RunStore gets from core.store.claims are guarded like its own."""
    run_id = stopped_run(store, "paused", workflow_id="wf-0")
    record = store.get_run(run_id)
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE events"))
    assert_store_error(lambda: store.cancel_unowned(run_id, reason="stop"))
    assert_store_error(lambda: store.claim_run(run_id, {"paused"}, workflow_id="wf-1",
                                               events=[RunEvent(kind="resumed")]))
    assert_store_error(lambda: store.mark_interrupted(record, record.plan, [],
                                                      RunEvent(kind="interrupted")))
    after = store.get_run(run_id)  # each failed transaction rolled back
    assert (after.status, after.workflow_id, after.finished_at) == ("paused", "wf-0", None)
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE step_states"))  # it refers to runs
        conn.execute(sa.text("DROP TABLE plan_versions"))
        conn.execute(sa.text("DROP TABLE runs"))
    assert_store_error(store.held_runs)


def assert_store_error(call) -> None:
    """``call()`` fails with a one-line StoreError naming the missing table."""
    with pytest.raises(StoreError, match="check PLANBOARD_DB_URL") as info:
        call()
    assert re.search(MISSING_TABLE, str(info.value)) and "\n" not in str(info.value)


def test_a_cancel_of_a_run_seen_stopped_does_not_land_once_it_was_resumed(store):
    """A person cancels a run seen interrupted while another resumes it: the cancel is
    fenced on the status it saw, so it never records a run that is running again."""
    run_id = stopped_run(store, "interrupted", workflow_id="wf-1")
    store.claim_run(run_id, {"interrupted"}, workflow_id="wf-1")  # the resume wins
    with pytest.raises(StoreError):
        store.cancel_unowned(run_id, reason="cancelled while interrupted",
                             allowed={"interrupted"})
    assert store.get_run(run_id).status == "running"
    assert "cancelled" not in [e.kind for e in store.events(run_id)]
