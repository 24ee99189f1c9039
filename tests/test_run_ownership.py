"""One owner per run: claims, resumes racing across processes and threads, heartbeats, launches.

Every test runs on SQLite and on a throwaway PostgreSQL (tests/pg.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.errors import StoreError
from core.execution.scheduler import RunOptions
from core.runs.runner import Runner
from tests.pg import on_both_backends
from tests.stored_runs import DEAD_PID, calc_engine, set_owner, stopped_run, three_calcs

pytestmark = on_both_backends
REPO = Path(__file__).resolve().parents[1]


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
    monkeypatch.setattr(store, "claim_run", refuse)
    with pytest.raises(StoreError, match="said no"):
        runner.resume(run_id, engine=calc_engine())
    assert runner._live_run(run_id) is None
