"""The run store: round trips, version sources, status moves, concurrent appends, no secrets.

Claims, cancels of runs nobody executes and crash records: tests/store/test_store_claims.py.

Tests marked ``on_both_backends`` run on SQLite and on a throwaway PostgreSQL (tests/support/pg.py).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from datetime import timedelta

import pytest

from core.base.usage import Usage
from core.errors import RunNotFoundError, StoreError
from core.execution.events import RunEvent
from core.plan.model import Plan, Step
from core.store.run_store import RunStore, scrub_settings
from core.store.schema import metadata
from tests.support.pg import on_both_backends

FAKE_KEY = "sk-test-SECRET123"


def small_plan(goal: str = "add numbers") -> Plan:
    return Plan(goal=goal, steps=[
        Step(id="s1", description="add", tool="calculate", args={"expression": "1+2"}),
        Step(id="s2", description="summarise", depends_on=["s1"]),
    ])


# SQLite only: the default database and its pragmas
def test_default_url_is_sqlite_under_home_in_wal_mode(store, isolated_environment):
    assert store.url == f"sqlite:///{isolated_environment / 'planboard.db'}"
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000


# SQLite only: a file appears where the URL says (PostgreSQL's twin follows)
def test_db_url_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANBOARD_DB_URL", f"sqlite:///{tmp_path / 'other.db'}")
    other = RunStore()
    other.create_run("hello", {}, small_plan())
    assert (tmp_path / "other.db").exists()
    other.close()


def test_plain_postgresql_url_uses_psycopg_3(postgres_url, monkeypatch):
    assert postgres_url.startswith("postgresql://")  # as a user writes it, without a driver
    monkeypatch.setenv("PLANBOARD_DB_URL", postgres_url)
    other = RunStore()
    assert other.engine.url.drivername == "postgresql+psycopg"
    plan = small_plan()
    run_id = other.create_run("hello", {}, plan)
    assert other.get_run(run_id).plan == plan
    other.close()


@on_both_backends
def test_run_round_trip(store):
    plan = small_plan()
    run_id = store.create_run("add numbers", {"planner_model": "m1"}, plan,
                              options={"max_parallel": 2})
    record = store.get_run(run_id)
    assert record.run_id == run_id
    assert record.request == "add numbers"
    assert record.status == "planned"
    assert record.settings == {"planner_model": "m1"}
    assert record.options == {"max_parallel": 2}
    assert record.plan == plan
    assert record.versions == 1
    assert record.workflow_id is None  # not started as a workflow yet
    assert record.created_at.utcoffset() == timedelta(0)  # UTC, whatever the server's zone

    plan.steps[0].advance("running")
    plan.steps[0].advance("completed")
    plan.steps[0].result = {"value": 3}
    store.save_plan_version(run_id, plan)
    assert store.get_run(run_id).versions == 1
    assert store.latest_plan(run_id).steps[0].result == {"value": 3}
    assert store.latest_plan(run_id).steps[0].finished_at == plan.steps[0].finished_at

    second = plan.model_copy(deep=True, update={"version": 2})
    store.save_plan_version(run_id, second, reason="s2 failed")
    versions = store.plan_versions(run_id)
    assert [v.version for v in versions] == [1, 2]
    assert versions[1].reason == "s2 failed"
    assert versions[0].reason == "initial plan"

    store.set_status(run_id, "completed", event=RunEvent(kind="run_finished"))
    store.set_answer(run_id, "3")
    store.set_usage(run_id, Usage(llm_calls=2, prompt_tokens=10, completion_tokens=5))
    record = store.get_run(run_id)
    assert (record.status, record.answer, record.usage.llm_calls) == ("completed", "3", 2)
    assert record.finished_at is not None and record.wall_s >= 0
    assert [e.kind for e in store.events(run_id)] == ["run_finished"]


@on_both_backends
def test_text_with_a_nul_character_is_stored(store):
    """PostgreSQL refuses NUL in text: there it becomes U+FFFD, on SQLite it stays."""
    nul = "\x00" if store.engine.dialect.name == "sqlite" else "\ufffd"
    plan = small_plan()
    run_id = store.create_run("add\x00numbers", {}, plan)
    store.save_plan_version(run_id, plan.model_copy(update={"version": 2}), reason="why\x00")
    store.set_answer(run_id, "3\x00")
    record = store.get_run(run_id)
    assert (record.request, record.answer) == (f"add{nul}numbers", f"3{nul}")
    assert store.plan_versions(run_id)[1].reason == f"why{nul}"


@on_both_backends
def test_list_runs_newest_first_and_by_status(store):
    ids = [store.create_run(f"r{i}", {}, small_plan()) for i in range(3)]
    store.set_status(ids[1], "failed")
    assert [r.run_id for r in store.list_runs()] == list(reversed(ids))
    assert [r.run_id for r in store.list_runs(status="failed")] == [ids[1]]
    assert len(store.list_runs(limit=2)) == 2


@on_both_backends
def test_unknown_run_and_bad_values_raise_store_errors(store):
    with pytest.raises(RunNotFoundError, match="python -m core runs"):
        store.get_run("nope")
    with pytest.raises(RunNotFoundError):
        store.append_event("nope", RunEvent(kind="paused"))
    run_id = store.create_run("x", {}, None)
    with pytest.raises(StoreError, match="unknown run status"):
        store.set_status(run_id, "exploded")
    with pytest.raises(RunNotFoundError):
        store.claim_run("nope", {"paused"}, workflow_id="wf-1")


@on_both_backends
def test_events_are_numbered_per_run(store):
    a = store.create_run("a", {}, None)
    b = store.create_run("b", {}, None)
    assert store.append_event(a, RunEvent(kind="run_started")) == 1
    assert store.append_event(b, RunEvent(kind="run_started")) == 1
    assert store.append_event(a, RunEvent(kind="step_started", step_id="s1",
                                          data={"x": [1, "两"]})) == 2
    got = store.events(a)
    assert [(e.seq, e.kind, e.step_id) for e in got] == [
        (1, "run_started", None), (2, "step_started", "s1")]
    assert got[1].data == {"x": [1, "两"]}
    assert [e.seq for e in store.events(a, after=1)] == [2]


@on_both_backends
def test_secrets_are_scrubbed_from_settings(store):
    settings = {"api_key": FAKE_KEY, "OPENAI_API_KEY": "x", "token": "t", "password": "p",
                "client_secret": "s", "base_url": "http://h", "max_tokens": 5,
                "nested": {"key": "k", "note": FAKE_KEY, "model": "m"}, "other": FAKE_KEY,
                "api_key_list": [FAKE_KEY]}
    assert scrub_settings(settings) == {"base_url": "http://h", "max_tokens": 5,
                                        "nested": {"model": "m"}, "api_key_list": []}
    assert scrub_settings({"has_key": True, "api_key": None}) == {
        "has_key": True, "api_key": None}
    run_id = store.create_run("x", settings, small_plan())
    assert store.get_run(run_id).settings == scrub_settings(settings)
    assert_no_secret_stored(store)


def test_scrub_drops_secret_names_at_any_depth_and_keeps_flags_and_numbers():
    settings = {
        "openai_api_key_v2": "plain-looking", "ApiKey": "v", "credentials": {"user": "bob",
        "pass": "pw", "expires_in": 3600}, "auth": "Basic dXNlcjpwYXNz", "x_auth_token": "t",
        "DB_PASSWORD": "pw", "passwd": "pw", "has_key": True, "max_tokens": 512,
        "llm": {"provider": "openai", "service": {"Secret": "s", "token_count": 7}},
        "headers": [{"Authorization": "anything"}, {"accept": "json"}],
    }
    assert scrub_settings(settings) == {
        "credentials": {"expires_in": 3600}, "has_key": True, "max_tokens": 512,
        "llm": {"provider": "openai", "service": {"token_count": 7}},
        "headers": [{}, {"accept": "json"}],
    }


@pytest.mark.parametrize("value", [
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0",
    "xoxb-123456789012-abcdefgh",
    "https://search.example/api?q=x&key=sk-live-ABCDEFGH1234",
    "use sk_proj_abcdefghijk for the planner",
    "ak-0123456789abcdef",
    "Bearer eyJhbGciOiJIUzI1NiJ9.payload",
    "Basic dXNlcjpwYXNzd29yZA==",
    "sk-short1",
])
def test_scrub_drops_key_shaped_values_anywhere(value):
    got = scrub_settings({"note": value, "nested": {"deep": [value, "ok"]}, "model": "m"})
    assert got == {"nested": {"deep": ["ok"]}, "model": "m"}


def test_scrub_keeps_ordinary_text():
    settings = {"base_url": "https://api.example/v1?region=eu", "model": "gpt-4o-mini",
                "mode": "plan", "tags": ["skills", "desk-lamp"], "task": "ask a question"}
    assert scrub_settings(settings) == settings


@on_both_backends
def test_options_are_scrubbed_when_stored(store):
    options = {"max_parallel": 2, "webhook": "https://h.example/hook?token=sk-abcdefgh12345",
               "auth": "Bearer abcdefghijklmnop", "planning_usage": {"prompt_tokens": 3}}
    run_id = store.create_run("x", {}, small_plan(), options=options)
    assert store.get_run(run_id).options == {"max_parallel": 2,
                                             "planning_usage": {"prompt_tokens": 3}}
    store.set_options(run_id, {"confirm_side_effects": True, "api_token": FAKE_KEY,
                               "note": f"key {FAKE_KEY}"})
    assert store.get_run(run_id).options == {"confirm_side_effects": True}
    store.set_status(run_id, "paused")
    store.claim_run(run_id, {"paused"}, workflow_id=run_id,
                    options={"max_replans": 1, "secret": FAKE_KEY})
    assert store.get_run(run_id).options == {"max_replans": 1}
    assert_no_secret_stored(store)


def assert_no_secret_stored(store: RunStore) -> None:
    """The fake key is in no row of any table, nor (SQLite) in the database file or its WAL."""
    with store.engine.connect() as conn:
        for table in metadata.sorted_tables:
            assert FAKE_KEY not in repr(conn.execute(table.select()).all()), table.name
    store.close()
    if store.engine.dialect.name == "sqlite":
        database = store.engine.url.database
        for path in database, database + "-wal":
            if os.path.exists(path):
                with open(path, "rb") as handle:
                    assert FAKE_KEY.encode() not in handle.read()


@on_both_backends
def test_concurrent_appends_from_threads(store):
    run_ids = [store.create_run(f"r{i}", {}, None) for i in range(2)]

    def writer(n: int) -> None:
        for i in range(15):
            store.append_event(run_ids[n % 2], RunEvent(kind="step_started", data={"w": n, "i": i}))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for run_id in run_ids:
        got = store.events(run_id)
        assert [e.seq for e in got] == list(range(1, 46))
        for w in {e.data["w"] for e in got}:  # each writer's events stay in its own order
            assert [e.data["i"] for e in got if e.data["w"] == w] == list(range(15))


def _process_writer(url: str, run_id: str, n: int) -> None:
    writer = RunStore(url)
    for i in range(10):
        writer.append_event(run_id, RunEvent(kind="step_completed", data={"w": n, "i": i}))
    writer.close()


@on_both_backends
def test_concurrent_appends_from_processes(store):
    run_id = store.create_run("shared", {}, None)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_process_writer, args=(store.url, run_id, n))
               for n in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(60)
        assert p.exitcode == 0
    got = store.events(run_id)
    assert [e.seq for e in got] == list(range(1, 41))
    for w in range(4):
        assert [e.data["i"] for e in got if e.data["w"] == w] == list(range(10))


def test_scrub_logs_the_setting_name_never_the_value(caplog):
    with caplog.at_level("WARNING", logger="core.store.schema"):
        scrub_settings({"llm": {"auth": FAKE_KEY}, "urls": [f"https://h?k={FAKE_KEY}"]})
    assert "'llm.auth'" in caplog.text and "'urls[0]'" in caplog.text
    assert FAKE_KEY not in caplog.text


def test_scrub_keeps_prose_and_names_that_only_look_alike():
    kept = {"route_reason": "Basic arithmetic: one tool call", "author": "me",
            "authors": ["a"], "note": "the token budget is 2000 words"}
    assert scrub_settings(kept) == kept
    assert scrub_settings({"header": "Basic dXNlcjpwYXNzd29yZA=="}) == {}


@on_both_backends
def test_every_plan_version_stores_what_made_it(store):
    plan = small_plan()
    run_id = store.create_run("x", {}, plan)
    edited = plan.model_copy(deep=True, update={"version": 2})
    store.save_plan_version(run_id, edited, reason="manual edit")
    replan = plan.model_copy(deep=True, update={"version": 3})
    store.record_step(run_id, RunEvent(kind="replanned", plan_version=3,
                                       data={"source": "checkpoint", "reason": "r"}),
                      replan, reason="r", previous=edited)
    store.save_plan_version(run_id, edited)  # a later snapshot keeps the version's source
    store.set_status(run_id, "completed")
    follow = plan.model_copy(deep=True, update={"version": 4})
    store.claim_run(run_id, {"completed"}, workflow_id=f"{run_id}.f1", plan=follow,
                    reason="follow-up: more", events=[
                        RunEvent(kind="replanned", plan_version=4, data={"source": "follow-up"})])
    sources = [(v.version, v.source) for v in store.plan_versions(run_id)]
    assert sources == [(1, "draft"), (2, "manual"), (3, "checkpoint"), (4, "follow-up")]


@on_both_backends
def test_status_moves_only_as_the_lifecycle_allows(store):
    run_id = store.create_run("x", {}, small_plan())
    store.set_status(run_id, "interrupted")
    with pytest.raises(StoreError, match="already interrupted and cannot become paused; "
                                         "from there it can become cancelled, failed, running"):
        store.set_status(run_id, "paused")
    with pytest.raises(StoreError, match="cannot go from exploded to running"):
        store.claim_run(run_id, {"interrupted", "exploded"}, workflow_id=run_id)
    store.claim_run(run_id, {"interrupted"}, workflow_id=run_id)
    assert store.get_run(run_id).status == "running"
    with pytest.raises(StoreError, match="cannot become planned"):
        store.set_status(run_id, "planned")
