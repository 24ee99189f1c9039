"""Store migrations: an older database is brought up to date without losing anything.

Every test runs on SQLite and on a throwaway PostgreSQL (tests/support/pg.py).
"""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from core.execution.events import RunEvent
from core.plan.model import Plan, Step
from core.store.database import make_engine
from core.store.migrations import LATEST_VERSION, migrate
from core.store.run_store import RunStore
from tests.support.pg import on_both_backends
from tests.support.waiting import DEFAULT_TIMEOUT_S

pytestmark = on_both_backends


def small_plan() -> Plan:
    return Plan(goal="add numbers", steps=[
        Step(id="s1", description="add", tool="calculate", args={"expression": "1+2"}),
        Step(id="s2", description="summarise", depends_on=["s1"]),
    ])


def test_migration_from_an_old_schema_keeps_data(db_url):
    engine = make_engine(db_url)
    assert migrate(engine, target=1) == 1
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO runs (id, request, settings, status, usage, created_at, updated_at) "
            "VALUES ('old1', 'old request', '{}', 'completed', '{\"llm_calls\": 3}', "
            "'2025-01-01 10:00:00', '2025-01-01 10:00:00')")
        conn.exec_driver_sql(
            "INSERT INTO events (run_id, seq, kind, plan_version, data, at) VALUES "
            "('old1', 1, 'run_started', 1, '{}', '2025-01-01 10:00:00'),"
            "('old1', 2, 'run_finished', 1, '{}', '2025-01-01 10:00:01')")
        assert "owner_pid" not in {c["name"] for c in sa.inspect(conn).get_columns("runs")}
    engine.dispose()

    store = RunStore(db_url)
    record = store.get_run("old1")
    assert (record.request, record.usage.llm_calls, record.options) == ("old request", 3, {})
    assert store.append_event("old1", RunEvent(kind="paused")) == 3
    with store.engine.connect() as conn:
        versions = conn.exec_driver_sql("SELECT version FROM schema_version").scalars().all()
        assert sorted(versions) == list(range(1, LATEST_VERSION + 1))
        assert sa.inspect(conn).has_table("lessons")
    store.close()
    reopened = RunStore(db_url)  # opening again applies nothing and loses nothing
    assert [e.seq for e in reopened.events("old1")] == [1, 2, 3]
    reopened.close()


def test_migration_3_merges_duplicate_lessons_and_keeps_them_unique(db_url):
    from core.errors import StoreError
    from core.learning.lessons import LessonBook
    from core.store.schema import lessons, utc_now

    engine = make_engine(db_url)
    assert migrate(engine, target=2) == 2
    with engine.begin() as conn:
        for text in ("Check the order first", "check  the order FIRST", "Another lesson"):
            conn.execute(lessons.insert().values(text=text, tools=[], enabled=True,
                                                 created_at=utc_now(), updated_at=utc_now()))
    assert migrate(engine) == LATEST_VERSION
    book = LessonBook(engine)
    assert [lesson.text for lesson in book.list_lessons()] == [
        "Another lesson", "Check the order first"]
    again = book.add("Another lesson")
    assert again.text == "Another lesson" and len(book.list_lessons()) == 2
    first = book.list_lessons()[-1]
    with pytest.raises(StoreError, match="already says this"):
        book.update(first.id, text="Another lesson")
    with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):
        conn.execute(lessons.insert().values(text="Another lesson", tools=[], enabled=True,
                                             created_at=utc_now(), updated_at=utc_now()))
    engine.dispose()


def test_migration_4_gives_old_versions_their_source(db_url):
    engine = make_engine(db_url)
    assert migrate(engine, target=3) == 3
    at = "'2025-01-01 10:00:00'"
    reasons = {1: "initial plan", 2: "manual edit", 3: "s1 failed", 4: "checkpoint said so",
               5: "follow-up: and the weather?", 6: "计划已编辑"}
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO runs (id, request, settings, status, usage, created_at, updated_at) "
            f"VALUES ('old1', 'old request', '{{}}', 'completed', '{{}}', {at}, {at})")
        for version, reason in reasons.items():
            conn.exec_driver_sql(
                "INSERT INTO plan_versions (run_id, version, plan, reason, created_at) VALUES "
                f"('old1', {version}, '{small_plan().model_dump_json()}', '{reason}', {at})")
        conn.exec_driver_sql(
            "INSERT INTO events (run_id, seq, kind, plan_version, data, at) VALUES "
            "('old1', 1, 'replanned', 4, '{\"to_version\": 4, \"source\": \"checkpoint\"}',"
            f" {at}), ('old1', 2, 'replanned', 3, '{{\"source\": \"nonsense\"}}', {at})")
    assert migrate(engine) == LATEST_VERSION
    engine.dispose()
    store = RunStore(db_url)
    sources = [v.source for v in store.plan_versions("old1")]
    assert sources == ["draft", "manual", "failure", "checkpoint", "follow-up", "manual"]
    store.close()


def test_stores_opened_at_once_on_a_new_database_all_open_it(db_url):
    """Several writers creating the schema at the same moment: one migrates, none fails."""
    barrier = threading.Barrier(4)
    opened: list[RunStore] = []
    failures: list[BaseException] = []

    def open_store() -> None:
        barrier.wait(DEFAULT_TIMEOUT_S)
        try:
            opened.append(RunStore(db_url))
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == [] and len(opened) == 4
    run_id = opened[0].create_run("x", {}, small_plan())
    assert opened[3].get_run(run_id).versions == 1
    with opened[1].engine.connect() as conn:
        versions = conn.execute(sa.text("SELECT version FROM schema_version")).scalars().all()
    assert sorted(versions) == list(range(1, LATEST_VERSION + 1))
    for store in opened:
        store.close()


def test_migration_6_clears_owners_and_interrupts_legacy_unfinished_runs(db_url):
    """Runs execute as DBOS workflows since migration 6: an older version's owner,
    heartbeat and control request are cleared, and a run it left unfinished without a
    workflow (its process is gone with the upgrade) becomes interrupted; finished runs and
    runs with a workflow keep their status."""
    engine = make_engine(db_url)
    assert migrate(engine, target=5) == 5
    at = "'2025-01-01 10:00:00'"
    statuses = {"old-running": ("running", None), "old-waiting": ("waiting_confirmation", None),
                "old-paused": ("paused", None), "old-done": ("completed", None),
                "old-failed": ("failed", None), "wf-paused": ("paused", "wf-1")}
    with engine.begin() as conn:
        for run_id, (status, workflow) in statuses.items():
            conn.execute(sa.text(
                "INSERT INTO runs (id, request, settings, status, usage, created_at,"
                " updated_at, finished_at, event_seq, owner_pid, owner_host, heartbeat_at,"
                " control_request, control_at, workflow_id) VALUES (:id, 'old request', '{}',"
                f" :status, '{{}}', {at}, {at}, {at}, 0, 4242, 'old-host', {at}, 'pause',"
                f" {at}, :workflow)"), {"id": run_id, "status": status, "workflow": workflow})
    assert migrate(engine) == LATEST_VERSION
    owner_columns = ("owner_pid", "owner_host", "heartbeat_at", "control_request", "control_at")
    with engine.connect() as conn:
        left = conn.execute(sa.text(f"SELECT {', '.join(owner_columns)} FROM runs")).all()
    assert left == [(None,) * len(owner_columns)] * len(statuses)
    engine.dispose()

    store = RunStore(db_url)
    after = {run_id: store.get_run(run_id) for run_id in statuses}
    assert {run_id: record.status for run_id, record in after.items()} == {
        "old-running": "interrupted", "old-waiting": "interrupted", "old-paused": "interrupted",
        "old-done": "completed", "old-failed": "failed", "wf-paused": "paused"}
    assert after["old-done"].updated_at == after["old-done"].finished_at  # untouched
    assert after["wf-paused"].workflow_id == "wf-1"
    store.close()


def test_migration_11_drops_the_claim_times_nothing_uses_and_keeps_the_runs(db_url):
    engine = make_engine(db_url)
    assert migrate(engine, target=10) == 10
    at = "'2025-01-01 10:00:00'"
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO runs (id, request, settings, status, usage, created_at, updated_at,"
            f" event_seq, workflow_id, claimed_at) VALUES ('claimed', 'old request', '{{}}',"
            f" 'completed', '{{}}', {at}, {at}, 0, 'wf-1', {at})"))
    assert migrate(engine) == LATEST_VERSION
    with engine.connect() as conn:
        assert "claimed_at" not in {c["name"] for c in sa.inspect(conn).get_columns("runs")}
    engine.dispose()
    store = RunStore(db_url)
    record = store.get_run("claimed")
    assert (record.request, record.status, record.workflow_id) == ("old request", "completed",
                                                                   "wf-1")
    store.close()
