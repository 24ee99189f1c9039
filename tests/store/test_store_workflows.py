"""Runs executed as DBOS workflows: replay keys make event writes idempotent, a run records
the workflow that executes it, and a crash is recorded only under the workflow it was seen in.

Every test runs on SQLite and on a throwaway PostgreSQL (tests/support/pg.py).
"""

from __future__ import annotations

import threading

import sqlalchemy as sa

from core.execution.events import RunEvent
from core.plan.model import Plan, Step
from core.store.database import make_engine
from core.store.migrations import LATEST_VERSION, migrate
from core.store.run_store import RunStore
from core.store.schema import REPLAY_KEY_INDEX, events
from tests.support.pg import on_both_backends
from tests.support.stored_runs import stopped_run
from tests.support.waiting import DEFAULT_TIMEOUT_S

pytestmark = on_both_backends


def two_steps(version: int = 1) -> Plan:
    return Plan(goal="add numbers", version=version, steps=[
        Step(id="s1", description="add", tool="calculate", args={"expression": "1+2"}),
        Step(id="s2", description="summarise", depends_on=["s1"]),
    ])


def started(step_id: str = "s1", version: int = 1) -> RunEvent:
    return RunEvent(kind="step_started", step_id=step_id, plan_version=version)


def test_replay_keys_round_trip(store):
    run_id = store.create_run("sums", {}, two_steps())
    assert store.append_event(run_id, RunEvent(kind="run_started"), replay_key="start") == 1
    assert store.record_step(run_id, started(), two_steps(), replay_key="step:s1:v1") == 2
    assert store.append_event(run_id, RunEvent(kind="paused")) == 3
    assert [(e.seq, e.kind, e.replay_key) for e in store.events(run_id)] == [
        (1, "run_started", "start"), (2, "step_started", "step:s1:v1"), (3, "paused", None)]
    assert store.event_recorded(run_id, "step:s1:v1")
    assert not store.event_recorded(run_id, "step:s2:v1")
    assert not store.event_recorded("no-such-run", "start")


def test_a_replayed_record_step_writes_nothing_and_returns_the_first_seq(store):
    run_id = store.create_run("sums", {}, two_steps())
    first = store.record_step(run_id, started(), two_steps(), reason="s1 started",
                              replay_key="step:s1:v1")
    before = store.get_run(run_id)

    replan = RunEvent(kind="replanned", plan_version=2, data={"source": "checkpoint"})
    assert store.record_step(run_id, replan, two_steps(version=2), previous=two_steps(),
                             reason="a replay must not store this",
                             replay_key="step:s1:v1") == first
    assert store.append_event(run_id, RunEvent(kind="paused"), replay_key="step:s1:v1") == first

    after = store.get_run(run_id)
    assert [(e.seq, e.kind) for e in store.events(run_id)] == [(first, "step_started")]
    assert [(v.version, v.reason) for v in store.plan_versions(run_id)] == [(1, "s1 started")]
    assert (after.versions, after.updated_at) == (1, before.updated_at)
    # numbering goes on without a gap
    assert store.append_event(run_id, RunEvent(kind="paused")) == first + 1


def test_a_replay_racing_the_live_write_records_the_event_once(store, db_url):
    run_id = store.create_run("sums", {}, two_steps())
    writers = [RunStore(db_url) for _ in range(4)]
    barrier = threading.Barrier(len(writers))
    seqs: list[int] = []
    failures: list[BaseException] = []

    def write(writer: RunStore) -> None:
        barrier.wait(DEFAULT_TIMEOUT_S)
        try:
            seqs.append(writer.record_step(run_id, started(), two_steps(),
                                           replay_key="step:s1:v1"))
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for writer in writers:
        writer.close()
    assert failures == [] and seqs == [1, 1, 1, 1]
    assert [e.seq for e in store.events(run_id)] == [1]


def test_different_runs_may_use_the_same_key(store):
    first = store.create_run("one", {}, two_steps())
    second = store.create_run("two", {}, two_steps())
    store.append_event(first, RunEvent(kind="run_started"))
    assert store.record_step(first, started(), two_steps(), replay_key="step:s1:v1") == 2
    assert store.record_step(second, started(), two_steps(), replay_key="step:s1:v1") == 1
    assert [e.replay_key for e in store.events(second)] == ["step:s1:v1"]


def test_events_without_a_key_never_collide(store):
    run_id = store.create_run("sums", {}, two_steps())
    for _ in range(3):
        store.record_step(run_id, started(), two_steps())
    with store.engine.begin() as conn:  # the index itself lets NULL keys repeat
        conn.execute(events.insert().values(
            run_id=run_id, seq=99, kind="paused", plan_version=1, data={},
            at=store.events(run_id)[0].at, replay_key=None))
    assert [(e.seq, e.replay_key) for e in store.events(run_id)] == [
        (1, None), (2, None), (3, None), (99, None)]


def test_migration_5_keeps_runs_and_events_and_adds_the_unique_index(db_url):
    engine = make_engine(db_url)
    assert migrate(engine, target=4) == 4
    at = "'2025-01-01 10:00:00'"
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO runs (id, request, settings, status, usage, created_at, updated_at,"
            f" event_seq) VALUES ('old1', 'old request', '{{}}', 'running',"
            f" '{{\"llm_calls\": 3}}', {at}, {at}, 2)")
        conn.exec_driver_sql(
            "INSERT INTO events (run_id, seq, kind, plan_version, data, at) VALUES "
            f"('old1', 1, 'run_started', 1, '{{}}', {at}),"
            f"('old1', 2, 'step_started', 1, '{{}}', {at})")
    assert migrate(engine) == LATEST_VERSION
    with engine.connect() as conn:
        indexes = {i["name"]: i for i in sa.inspect(conn).get_indexes("events")}
    assert indexes[REPLAY_KEY_INDEX]["unique"]
    assert indexes[REPLAY_KEY_INDEX]["column_names"] == ["run_id", "replay_key"]
    engine.dispose()

    store = RunStore(db_url)
    record = store.get_run("old1")
    assert (record.request, record.usage.llm_calls, record.workflow_id) == (
        "old request", 3, None)
    assert [(e.seq, e.kind, e.replay_key) for e in store.events("old1")] == [
        (1, "run_started", None), (2, "step_started", None)]
    assert store.record_step("old1", started(), two_steps(), replay_key="k") == 3
    assert store.record_step("old1", started(), two_steps(), replay_key="k") == 3
    # left running by an older version, without a workflow: migration 6 says so
    assert store.get_run("old1").status == "interrupted"
    store.close()


def test_the_workflow_of_a_run_is_recorded(store):
    run_id = store.create_run("sums", {}, two_steps(), workflow_id="wf-1")
    assert store.get_run(run_id).workflow_id == "wf-1"
    store.set_workflow(run_id, f"{run_id}.f1")
    assert store.get_run(run_id).workflow_id == f"{run_id}.f1"
    assert [r.workflow_id for r in store.list_runs()] == [f"{run_id}.f1"]
    plain = store.create_run("plain", {}, two_steps())
    assert store.get_run(plain).workflow_id is None


def test_a_run_claimed_after_being_read_is_not_recorded_interrupted(store):
    """A crash is recorded under the status and workflow it was seen with: a resume that
    claimed the run meanwhile (even one that paused it again since) keeps it."""
    run_id = stopped_run(store, "paused", workflow_id="wf-0")
    seen = store.get_run(run_id)  # read as crashed, then someone resumes it
    store.claim_run(run_id, {"paused"}, workflow_id="wf-1")
    assert not store.mark_interrupted(seen, None, [], RunEvent(kind="interrupted", data={}))
    assert store.get_run(run_id).status == "running"
    store.set_status(run_id, "paused")  # the same status again, under another workflow
    assert not store.mark_interrupted(seen, None, [], RunEvent(kind="interrupted", data={}))
    after = store.get_run(run_id)
    assert (after.status, after.workflow_id) == ("paused", "wf-1")
    assert store.events(run_id) == []
