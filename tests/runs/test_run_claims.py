"""One claim per run: of two processes (or threads) continuing a run, exactly one wins.

Claims race in threads and in processes on the store, a claim on a run read before its
workflow changed is refused, and resumes through the Runner execute each step once.
Every test runs on SQLite and on a throwaway PostgreSQL (tests/support/pg.py).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
import threading

import pytest

from core.errors import StoreError
from core.execution.events import RunEvent
from core.runs import durable
from core.runs.recovery import recover_interrupted, recover_run
from core.runs.runner import Runner
from core.runs.workflow import run_workflow
from core.store.claims import HOLDER
from core.store.run_store import RunStore
from tests.support import REPO
from tests.support.claimers import claim, claim_in_a_process
from tests.support.durable_runs import await_workflow
from tests.support.pg import on_both_backends
from tests.support.stored_runs import calc_engine, stopped_run, three_calcs
from tests.support.waiting import DEFAULT_TIMEOUT_S, results_of, wait_until

pytestmark = on_both_backends
CLAIMERS = 4
DEAD_PID = 2**22 + 17  # above Linux's pid_max: no process can have it


def assert_one_winner(store: RunStore, run_id: str, refusals: dict[str, str | None]) -> None:
    """Exactly one claimer won, the run is running under its workflow and only its event
    was written; every other claimer was told that another process runs it."""
    winners = [workflow_id for workflow_id, refused in refusals.items() if refused is None]
    assert len(refusals) == CLAIMERS and len(winners) == 1, refusals
    assert all("already being run by another process" in refused
               for refused in refusals.values() if refused is not None)
    record = store.get_run(run_id)
    assert (record.status, record.workflow_id) == ("running", winners[0])
    assert [e.data["by"] for e in store.events(run_id)] == winners


def test_claims_racing_in_threads_one_wins(store, db_url):
    run_id = stopped_run(store, "paused", workflow_id="wf-0")
    stores = [RunStore(db_url) for _ in range(CLAIMERS)]
    barrier = threading.Barrier(CLAIMERS)
    refusals: dict[str, str | None] = {}

    def race(n: int) -> None:
        barrier.wait(DEFAULT_TIMEOUT_S)
        refusals[f"wf-{n + 1}"] = claim(stores[n], run_id, f"wf-{n + 1}")

    threads = [threading.Thread(target=race, args=(n,)) for n in range(CLAIMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for other in stores:
        other.close()
    assert_one_winner(store, run_id, refusals)


def test_claims_racing_in_processes_one_wins(store):
    run_id = stopped_run(store, "paused", workflow_id="wf-0")
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(CLAIMERS), context.Queue()
    claimers = [context.Process(target=claim_in_a_process,
                                args=(store.url, run_id, n, barrier, results))
                for n in range(CLAIMERS)]
    try:
        for process in claimers:
            process.start()
        refusals = dict(results_of(claimers, results))
        for process in claimers:
            process.join(DEFAULT_TIMEOUT_S)
            assert process.exitcode == 0
    finally:
        for process in claimers:
            if process.is_alive():
                process.kill()
    assert_one_winner(store, run_id, refusals)


def test_a_claim_on_a_run_whose_workflow_changed_since_it_was_read_is_refused(
        store, db_url, monkeypatch):
    """Another process claims the run between this claim's read and its write, and the run
    pauses again: the same status, under another workflow, is refused all the same."""
    run_id = stopped_run(store, "paused", workflow_id="wf-0")
    other = RunStore(db_url)
    read = store.get_run

    def read_then_lose_the_race(wanted: str):
        seen = read(wanted)
        other.claim_run(run_id, {"paused"}, workflow_id="wf-theirs")
        other.set_status(run_id, "paused")
        return seen

    try:
        with monkeypatch.context() as patch, pytest.raises(
                StoreError, match="already being run by another process"):
            patch.setattr(store, "get_run", read_then_lose_the_race)
            store.claim_run(run_id, {"paused"}, workflow_id="wf-mine",
                            events=[RunEvent(kind="resumed")])
    finally:
        other.close()
    record = store.get_run(run_id)
    assert (record.status, record.workflow_id) == ("paused", "wf-theirs")
    assert store.events(run_id) == []


RESUME_SCRIPT = r'''
import json, sys
from pathlib import Path
from core.llm.engine import Engine
from core.errors import StoreError
from core.runs import durable
from core.runs.recovery import recover_interrupted, recover_run
from core.runs.runner import Runner
from core.store.claims import HOLDER
from core.store.run_store import RunStore
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry

url, run_id, ready = sys.argv[1], sys.argv[2], Path(sys.argv[3])
registry = ToolRegistry()
register_builtin_tools(registry)
runner = Runner(RunStore(url), poll_s=0.05)
runner.store.get_run(run_id)  # connected and warmed up
durable.launch(durable.embedded_executor_id())  # before the start line, as a live process
ready.touch()
# a start line: every process resumes at the same moment, once the test writes "go" to
# each one's stdin (a blocking read: a process that waits for the slowest spends nothing)
assert sys.stdin.readline() == "go\n", "the test never said go"
try:
    runner.resume(run_id, engine=Engine(registry=registry))
except StoreError as exc:
    print(json.dumps({"lost": str(exc)}), flush=True)
else:
    print(json.dumps({"resumed": runner.wait(run_id, timeout=60).status}), flush=True)
runner.shutdown(cancel=False)
'''


def test_processes_resuming_one_run_execute_each_step_once(tmp_path, store):
    run_id = stopped_run(store, "paused")
    script = tmp_path / "resume.py"
    script.write_text(RESUME_SCRIPT)
    ready = [tmp_path / f"ready{n}" for n in range(3)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen(
        [sys.executable, str(script), store.url, run_id, str(flag)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for flag in ready]
    try:
        def all_ready() -> bool:
            assert all(proc.poll() is None for proc in procs), "a resuming process died"
            return all(flag.exists() for flag in ready)

        wait_until(all_ready, what="the resuming processes to start", poll_s=0.01)
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            results.append(json.loads(out.splitlines()[-1]))
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(10)
    # one continues it; each loser is told (its claim refused: the run is the winner's, or
    # the run already finished)
    assert [r for r in results if "resumed" in r] == [{"resumed": "completed"}], results
    assert all("is already being run by" in r["lost"] or "is already completed" in r["lost"]
               for r in results if "lost" in r), results
    assert store.get_run(run_id).status == "completed"
    started = [e.step_id for e in store.events(run_id) if e.kind == "step_started"]
    assert started == ["s2", "s3"]  # each pending step ran once
    assert [e.kind for e in store.events(run_id)].count("resumed") == 1


def test_concurrent_resume_in_one_process_runs_once(launched, store):
    """Two threads of one process resuming the same run (two tabs of the dashboard): one
    continues it, the other is told."""
    run_id = stopped_run(store, "paused")
    runner = Runner(store, poll_s=0.05)
    barrier = threading.Barrier(2)
    errors: list[str] = []

    def resume() -> None:
        barrier.wait(DEFAULT_TIMEOUT_S)
        try:
            runner.resume(run_id, engine=calc_engine())
        except StoreError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=resume) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    try:
        assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"
        started = [e.step_id for e in store.events(run_id) if e.kind == "step_started"]
        assert started == ["s2", "s3"]
        assert len(errors) == 1, errors  # the run is this process's, or already completed
    finally:
        runner.shutdown()


def test_a_refused_claim_starts_nothing(launched, runner, store, monkeypatch):
    run_id = stopped_run(store, "paused")

    def refuse(*_args, **_kwargs):
        raise StoreError("the store said no")

    with monkeypatch.context() as patch, pytest.raises(StoreError, match="said no"):
        patch.setattr(store, "claim_run", refuse)
        runner.resume(run_id, engine=calc_engine())
    assert store.get_run(run_id).status == "paused"
    assert durable.workflow_status(run_id) is None  # no workflow was started for it
    runner.resume(run_id, engine=calc_engine())  # and nothing stands in the next one's way
    assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"


def test_a_resume_just_after_another_claim_leaves_the_run_to_the_winner(launched, store):
    """The winner (this live process) has claimed the run (its workflow id and itself as
    the holder are recorded) and has not started that workflow yet when a second resume
    comes: it is told that the winner runs it."""
    run_id = stopped_run(store, "paused")
    winner = durable.embedded_executor_id()
    store.claim_run(run_id, {"paused"}, workflow_id=run_id, holder=winner)
    runner = Runner(store, poll_s=0.05)
    try:
        with pytest.raises(StoreError) as told:
            runner.resume(run_id, engine=calc_engine())
        assert told.value.message.code == "run.busy" and winner in str(told.value)
        after = store.get_run(run_id)
        durable.start_here(run_workflow, run_id, run_id)  # what the winner does next
        assert await_workflow(run_id) == "SUCCESS"
        assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"
    finally:
        runner.shutdown()
    assert (after.status, after.workflow_id) == ("running", run_id)
    kinds = [(e.kind, e.step_id) for e in store.events(run_id)]
    assert ("interrupted", None) not in kinds
    assert [step for kind, step in kinds if kind == "step_started"] == ["s2", "s3"]


def test_a_crash_judged_before_another_process_took_the_run_is_not_recorded_over_it(
        store, db_url, monkeypatch):
    """recover_interrupted judges a run cut off (the process holding it ended); before it
    records that, another process records the crash and claims the run, which runs again:
    it stays running, the other process's (a fault trial of two racing resumes found both
    told 'interrupted' and 'busy')."""
    dead = f"embedded:{socket.gethostname()}:{DEAD_PID}"
    run_id = store.create_run("sums", {"offline": True}, three_calcs(), status="running",
                              options={HOLDER: dead})
    other = RunStore(db_url)
    read = store.get_run
    raced = []

    def read_after_the_other_took_it(wanted: str):
        if not raced:
            raced.append(wanted)
            assert recover_run(other, other.get_run(wanted))
            other.claim_run(wanted, {"interrupted"}, workflow_id="wf-theirs",
                            holder=durable.embedded_executor_id(),
                            events=[RunEvent(kind="resumed")])
        return read(wanted)

    try:
        with monkeypatch.context() as patch:
            patch.setattr(store, "get_run", read_after_the_other_took_it)
            assert recover_interrupted(store) == []
    finally:
        other.close()
    assert raced == [run_id]
    assert store.get_run(run_id).status == "running"
    assert [e.kind for e in store.events(run_id)] == ["interrupted", "resumed"]
