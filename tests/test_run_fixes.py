"""Regression tests of the run store and runner: claims, cancels, plan versions, statuses."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from core.errors import ConfigError, StoreError
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.planning.offline import offline_plan
from core.runs.live_run import LiveRun
from core.runs.recovery import IN_PROCESS, engine_for_record
from core.runs.runner import Runner
from core.store.run_store import RunStore, store_failure
from core.store.schema import runs
from core.tools.builtin import register_builtin_tools
from core.tools.catalog import default_registry
from core.tools.registry import ToolRegistry

REPO = Path(__file__).resolve().parents[1]
DEAD_PID = 2**22 + 17


def calc_engine() -> Engine:
    registry = ToolRegistry()
    register_builtin_tools(registry)
    return Engine(registry=registry, model=None)


def three_calcs() -> Plan:
    return Plan(goal="sums", steps=[
        Step(id="s1", description="one", tool="calculate", args={"expression": "1+1"}),
        Step(id="s2", description="two", tool="calculate", args={"expression": "2+2"},
             depends_on=["s1"]),
        Step(id="s3", description="three", tool="calculate", args={"expression": "3+3"},
             depends_on=["s2"]),
    ])


def stopped_run(store: RunStore, status: str, *, running_step: bool = False) -> str:
    """A run nobody executes: s1 completed, the rest pending (s2 running if asked)."""
    plan = three_calcs()
    plan.steps[0].advance("running")
    plan.steps[0].advance("completed")
    plan.steps[0].result = {"value": 2}
    if running_step:
        plan.steps[1].advance("running")
    run_id = store.create_run("sums", {"offline": True}, plan, status=status)
    with store.engine.begin() as conn:
        conn.execute(runs.update().where(runs.c.id == run_id)
                     .values(owner_pid=None, owner_host=None))
    return run_id


@pytest.fixture
def store():
    made = RunStore()
    yield made
    made.close()


@pytest.fixture
def runner(store):
    made = Runner(store, poll_s=0.05)
    yield made
    made.shutdown()


def set_owner(store: RunStore, run_id: str, pid: int | None) -> None:
    with store.engine.begin() as conn:
        conn.execute(runs.update().where(runs.c.id == run_id).values(
            owner_pid=pid, owner_host=None if pid is None else socket.gethostname()))


# ---- 1. one owner at a time ----------------------------------------------------------------

def test_claim_takes_free_or_dead_runs_and_refuses_live_owners(store):
    run_id = stopped_run(store, "paused")
    store.request_control(run_id, "pause")  # addressed to an earlier owner
    store.claim_run(run_id, {"paused", "interrupted"})
    record = store.get_run(run_id)
    assert (record.status, record.owner_pid, record.control_request) == (
        "running", os.getpid(), None)
    with pytest.raises(StoreError, match="already being run"):
        store.claim_run(run_id, {"paused"})

    store.set_status(run_id, "paused", owner=False)
    set_owner(store, run_id, DEAD_PID)
    store.claim_run(run_id, {"paused"})  # its owner died: taken over
    assert store.get_run(run_id).owner_pid == os.getpid()

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        store.set_status(run_id, "paused")
        set_owner(store, run_id, sleeper.pid)  # another live process owns it
        with pytest.raises(StoreError, match="already being run by another process"):
            store.claim_run(run_id, {"paused"})
        assert store.get_run(run_id).owner_pid == sleeper.pid
    finally:
        sleeper.kill()
        sleeper.wait(10)


RESUME_SCRIPT = r'''
import json, sys, time
from pathlib import Path
from core.llm.engine import Engine
from core.errors import StoreError
from core.runs.runner import Runner
from core.store.run_store import RunStore
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry

url, run_id, go, ready = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
registry = ToolRegistry()
register_builtin_tools(registry)
runner = Runner(RunStore(url), poll_s=0.05)
runner.store.get_run(run_id)  # connected and warmed up
ready.touch()
deadline = time.monotonic() + 30
while not go.exists():  # a start line: every process resumes at the same moment
    assert time.monotonic() < deadline, "the test never said go"
    time.sleep(0.001)
try:
    runner.resume(run_id, engine=Engine(registry=registry))
except StoreError as exc:
    print(json.dumps({"lost": str(exc)}), flush=True)
else:
    print(json.dumps({"won": runner.wait(run_id, timeout=30).status}), flush=True)
runner.shutdown()
'''


def test_processes_resuming_one_run_execute_each_step_once(tmp_path, store):
    run_id = stopped_run(store, "paused")
    script = tmp_path / "resume.py"
    script.write_text(RESUME_SCRIPT)
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{n}" for n in range(3)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen(
        [sys.executable, str(script), store.url, run_id, str(go), str(flag)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for flag in ready]
    try:
        deadline = time.monotonic() + 30
        while not all(flag.exists() for flag in ready):
            assert time.monotonic() < deadline, "the resuming processes did not start"
            assert all(proc.poll() is None for proc in procs), "a resuming process died"
            time.sleep(0.01)
        go.touch()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            results.append(json.loads(out.splitlines()[-1]))
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(10)
    # the loser is told (claim refused, or the run already finished) or follows the winner
    assert {"won": "completed"} in results
    assert all(r.get("won") == "completed" or "already" in r["lost"] for r in results)
    started = [e.step_id for e in store.events(run_id) if e.kind == "step_started"]
    assert started == ["s2", "s3"]  # each pending step ran once
    assert [e.kind for e in store.events(run_id)].count("resumed") == 1


# ---- 2. cancelling a run nobody executes ---------------------------------------------------

@pytest.mark.parametrize(("status", "running_step"), [("paused", False),
                                                       ("interrupted", True)])
def test_cancel_of_a_stopped_run_ends_every_step(runner, store, status, running_step):
    run_id = stopped_run(store, status, running_step=running_step)
    record = runner.cancel(run_id)
    assert record.status == "cancelled" and record.owner_pid is None
    assert [s.status for s in record.plan.steps] == ["completed", "skipped", "skipped"]
    assert [s.error for s in record.plan.steps[1:]] == ["cancelled by a person"] * 2
    assert record.plan.steps[0].result == {"value": 2}
    cancelled = [e for e in store.events(run_id) if e.kind == "cancelled"]
    assert [e.data["skipped"] for e in cancelled] == [["s2", "s3"]]
    with pytest.raises(StoreError, match="already cancelled"):
        runner.cancel(run_id)


# ---- 3. checkpoint versions are stored while the run goes ----------------------------------

REQUEST_66001 = "Check order 66001 and if it was delivered, refund it because it is broken"


def test_adaptive_checkpoint_versions_are_stored_as_the_run_goes(runner, store):
    engine = Engine(default_registry({}), None)
    plan = offline_plan(REQUEST_66001, engine.registry)
    assert any(s.tool == "apply_refund" for s in plan.steps)
    seen: list[tuple[str, int, int]] = []  # (event, its plan version, latest stored version)

    def listen(event: RunEvent) -> None:
        run_id = store.list_runs()[0].run_id  # the only run
        seen.append((event.kind, event.plan_version, store.get_run(run_id).plan.version))
        if event.kind == "replanned":
            runner.pause(run_id)  # stop right after the checkpoint

    run_id = runner.start(REQUEST_66001, plan, engine=engine, on_event=listen,
                          options=RunOptions(checkpoint="adaptive", max_attempts=1))
    record = runner.wait(run_id, timeout=20)
    assert record.status == "paused"
    assert record.plan.version == 2
    assert all(s.tool != "apply_refund" for s in record.plan.steps)
    after = seen[[k for k, _, _ in seen].index("replanned"):]
    assert all(stored == 2 for _, _, stored in after), seen
    v1 = store.plan_versions(run_id)[0].plan
    refund = next(s for s in v1.steps if s.tool == "apply_refund")
    assert refund.status == "skipped" and "version 2" in refund.error

    runner.resume(run_id, engine=engine)
    record = runner.wait(run_id, timeout=20)
    assert record.status == "completed"
    assert record.plan.version == 2
    assert all(s.tool != "apply_refund" for s in record.plan.steps)
    assert record.plan.steps[-1].status == "completed"
    assert [v.version for v in store.plan_versions(run_id)] == [1, 2]
    with store.engine.connect() as conn:  # the plan object never reaches the events table
        sizes = conn.execute(sa.text("SELECT length(data) FROM events")).scalars().all()
    assert max(sizes) < 2000


def test_the_plan_an_event_carries_is_never_serialised():
    event = RunEvent(kind="replanned", plan_version=2, plan=three_calcs())
    assert "plan" not in event.model_dump() and '"plan":' not in event.model_dump_json()
    assert "plan=" not in repr(event)


# ---- 4. finished runs stay finished --------------------------------------------------------

def test_a_finished_live_run_is_not_brought_back_to_running(store):
    run_id = store.create_run("sums", {}, three_calcs())
    live = LiveRun(store=store, run_id=run_id, engine=calc_engine(),
                   options=RunOptions(run_id=run_id, max_attempts=1), plan=three_calcs())
    live.run()
    assert store.get_run(run_id).status == "completed"
    live.remote_action("resume")  # a late resume from another process
    live.request_resume()
    live.record(RunEvent(kind="resumed", plan_version=1))
    assert store.get_run(run_id).status == "completed"
    with pytest.raises(StoreError, match="already completed"):
        store.set_status(run_id, "running")
    store.set_status(run_id, "completed")  # staying put is fine
    store.set_status(run_id, "running", reopen=True)
    assert store.get_run(run_id).status == "running"


def test_resumed_only_leaves_paused(store):
    run_id = store.create_run("sums", {}, three_calcs())
    live = LiveRun(store=store, run_id=run_id, engine=calc_engine(),
                   options=RunOptions(run_id=run_id), plan=three_calcs())
    live.record(RunEvent(kind="waiting_confirmation", step_id="s1"))
    live.record(RunEvent(kind="resumed"))
    assert store.get_run(run_id).status == "waiting_confirmation"
    live.record(RunEvent(kind="paused"))
    live.record(RunEvent(kind="resumed"))
    assert store.get_run(run_id).status == "running"


# ---- 5. the heartbeat belongs to the owner -------------------------------------------------

def test_heartbeat_never_reowns_a_run(store):
    run_id = stopped_run(store, "completed")
    assert store.heartbeat(run_id) is False
    assert store.get_run(run_id).owner_pid is None
    run_id = stopped_run(store, "running")
    set_owner(store, run_id, DEAD_PID)
    assert store.heartbeat(run_id) is False
    assert store.get_run(run_id).owner_pid == DEAD_PID
    set_owner(store, run_id, os.getpid())
    before = store.get_run(run_id).heartbeat_at
    time.sleep(0.01)
    assert store.heartbeat(run_id) is True
    assert store.get_run(run_id).heartbeat_at > before


# ---- 6. launching: the live owner's requests survive, failures unregister -----------------

def test_launch_of_a_live_run_keeps_its_control_request(runner, store):
    run_id = stopped_run(store, "running")
    set_owner(store, run_id, os.getpid())
    runner._live[run_id] = object()  # type: ignore[assignment]  # executed here already
    try:
        store.request_control(run_id, "pause")
        with pytest.raises(StoreError, match="already running in this process"):
            runner._launch(run_id, three_calcs(), calc_engine(), RunOptions(), None, None,
                           resumed_from="paused", extra={})
        assert store.pending_control(run_id, clear=False) == "pause"
    finally:
        runner._live.pop(run_id, None)


def test_a_refused_launch_is_unregistered(runner, store, monkeypatch):
    run_id = stopped_run(store, "paused")

    def refuse(*_args, **_kwargs):
        raise StoreError("the store said no")

    monkeypatch.setattr(store, "set_status", refuse)
    monkeypatch.setattr(store, "claim_run", refuse, raising=False)  # absent before the fix
    with pytest.raises(StoreError, match="said no"):
        runner.resume(run_id, engine=calc_engine())
    assert runner._live_run(run_id) is None
    assert run_id not in IN_PROCESS.snapshot()


# ---- 7. a resumed run keeps its endpoint and models ----------------------------------------

def online_record(store: RunStore):
    run_id = store.create_run("sums", {
        "offline": False, "base_url": "http://127.0.0.1:9/v1", "planner_model": "plan-m",
        "executor_model": "exec-m", "provider": "auto", "has_key": True}, three_calcs())
    return store.get_run(run_id)


def test_engine_for_record_uses_the_recorded_endpoint_and_models(store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-ENVKEY123")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/other")
    monkeypatch.setenv("OPENAI_MODEL", "other-model")
    engine = engine_for_record(online_record(store))
    settings = engine.model.settings
    assert (settings.base_url, settings.planner_model, settings.executor_model) == (
        "http://127.0.0.1:9/v1", "plan-m", "exec-m")
    assert settings.api_key.get_secret_value() == "sk-test-ENVKEY123"
    offline = store.get_run(stopped_run(store, "paused"))
    assert engine_for_record(offline).model is None


def test_engine_for_record_without_a_key_says_what_to_set(store):
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        engine_for_record(online_record(store))


# ---- 8. database failures are one-line StoreErrors without credentials ---------------------

def test_database_failures_become_store_errors(store):
    run_id = stopped_run(store, "paused")
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE events"))
    for call in (lambda: store.events(run_id), lambda: store.append_event(
            run_id, RunEvent(kind="paused")), lambda: store.record_step(
            run_id, RunEvent(kind="paused"), three_calcs())):
        with pytest.raises(StoreError, match="check PLANBOARD_DB_URL, disk space") as info:
            call()
        assert "\n" not in str(info.value) and "no such table" in str(info.value)


def test_store_failure_never_shows_the_password():
    exc = sa.exc.OperationalError("SELECT 1", {}, Exception(
        'password "s3cret-pw" rejected for user "bob"\nsecond line'))
    text = store_failure("postgresql://bob:s3cret-pw@db.example/planboard", exc)
    assert "s3cret-pw" not in text and "\n" not in text
    assert "postgresql://bob:***@db.example/planboard" in text
    assert text.endswith("check PLANBOARD_DB_URL, disk space and that no other program "
                         "locks the database")


def test_concurrent_resume_in_one_process_runs_once(store):
    """Two threads of one process resuming the same run: one wins, the other is told."""
    run_id = stopped_run(store, "paused")
    runner = Runner(store, poll_s=0.05)
    barrier = threading.Barrier(2)
    errors: list[str] = []

    def resume() -> None:
        barrier.wait(5)
        try:
            runner.resume(run_id, engine=calc_engine())
        except StoreError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=resume) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    try:
        assert runner.wait(run_id, timeout=10).status == "completed"
        started = [e.step_id for e in store.events(run_id) if e.kind == "step_started"]
        assert started == ["s2", "s3"]
        assert len(errors) <= 1
    finally:
        runner.shutdown()
