"""Runs in separate processes over one home: four at once make one refund; a run SIGKILLed
(mid-run, or inside a side effect) is resumed from its record; a process that exits while
its run waits for a person leaves it paused for a later resume.

Every child launches its own DBOS over the home's SQLite (tests/support/child_runs.py); this process
launches one when it resumes a run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.execution.scheduler import RunOptions
from core.plan.model import Plan, Step
from core.runs.runner import Runner
from core.store.run_store import RunStore
from tests.support import REPO
from tests.support.child_runs import crash_when, keys_written, spawn_run, step_started, stop
from tests.support.runs import Gate, kinds
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

RUNS_AT_ONCE = 4  # more than the 2 cores of CI: they do overlap; each costs 2-3 s of CPU


def refund_plan(n: int) -> Plan:
    """Run ``n``: compute n*100+1, refund order 88231 (the shop refunds an order once), add."""
    return Plan(goal=f"run {n}", steps=[
        Step(id="s1", description="compute", tool="calculate",
             args={"expression": f"{n}*100+1"}),
        Step(id="s2", description="refund order 88231", tool="apply_refund",
             args={"order_id": "88231", "reason": "broken"}, depends_on=["s1"]),
        Step(id="s3", description="add", tool="calculate", args={"expression": "1+1"},
             depends_on=["s2"]),
    ])


def test_runs_in_separate_processes_at_once_make_one_refund(tmp_path, store):
    procs = [spawn_run(tmp_path, refund_plan(n), f"p{n}") for n in range(RUNS_AT_ONCE)]
    results = {}
    try:
        for n, proc in enumerate(procs):
            out, _ = proc.communicate(timeout=120)
            assert proc.returncode == 0, (tmp_path / f"p{n}.err").read_text()
            run_id, status = out.splitlines()[:2]
            assert json.loads(status) == {"status": "completed"}
            results[run_id] = n
    finally:
        for proc in procs:
            stop(proc)
    assert len(results) == RUNS_AT_ONCE
    refund_ids = set()
    for run_id, n in results.items():
        record = store.get_run(run_id)
        assert record.request == f"run {n}"
        assert record.plan.step("s1").result["value"] == n * 100 + 1
        refund_ids.add(record.plan.step("s2").result["refund_id"])
        events = store.events(run_id)
        assert [e.seq for e in events] == list(range(1, 9))
        assert events[0].kind == "run_started" and events[-1].kind == "run_finished"
    assert len(refunds_for("88231")) == 1
    assert len(refund_ids) == 1  # every run reports the one refund


def test_sigkill_mid_run_then_resume(tmp_path, store):
    plan = Plan(goal="crash me", steps=[
        Step(id="s1", description="quick", tool="calculate", args={"expression": "40+2"}),
        Step(id="s2", description="refund", tool="refund", args={"order_id": "88231"},
             depends_on=["s1"]),
        Step(id="s3", description="slow", tool="slow", args={"label": "x"}, depends_on=["s2"]),
        Step(id="s4", description="after", tool="calculate", args={"expression": "1+1"},
             depends_on=["s3"]),
    ])
    run_id = crash_when(tmp_path, plan, step_started(store, "s3"))
    before = store.get_run(run_id).plan

    runner = Runner(RunStore(store.url), poll_s=0.05)
    assert runner.recover_interrupted() == [run_id]
    assert store.get_run(run_id).status == "interrupted"
    assert store.latest_plan(run_id).step("s3").status == "pending"
    gate = Gate()
    gate.open.set()
    runner.resume(run_id, engine=gate.engine())
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert gate.keys == []  # the refund did not run again
    assert keys_written(tmp_path) == [f"{run_id}:s2:v1"]
    for step_id in ("s1", "s2"):  # finished before the crash: not re-run, untouched
        assert record.plan.step(step_id).result == before.step(step_id).result
        assert record.plan.step(step_id).started_at == before.step(step_id).started_at
        assert record.plan.step(step_id).finished_at == before.step(step_id).finished_at
    # s3 ran again (the killed process never completed it); its replayed start is the
    # event the killed process wrote, so no event is written twice
    steps = [(e.kind, e.step_id) for e in store.events(run_id) if e.kind.startswith("step_")]
    for step_id in ("s1", "s2", "s3", "s4"):
        assert steps.count(("step_started", step_id)) == 1
        assert steps.count(("step_completed", step_id)) == 1
    assert steps.index(("step_reset", "s3")) < steps.index(("step_completed", "s3"))
    sequence = kinds(store, run_id)
    assert [k for k in sequence if k in {"step_reset", "interrupted", "resumed"}] == [
        "step_reset", "interrupted", "resumed"]
    runner.shutdown()
    runner.store.close()


def test_sigkill_during_a_side_effect_resumes_with_the_same_idempotency_key(tmp_path, store):
    plan = Plan(goal="refund", steps=[
        Step(id="s1", description="refund", tool="refund", args={"order_id": "slow"})])
    run_id = crash_when(tmp_path, plan, lambda _: keys_written(tmp_path))  # inside the tool
    runner = Runner(RunStore(store.url), poll_s=0.05)
    assert runner.recover_interrupted() == [run_id]
    gate = Gate()
    runner.resume(run_id, engine=gate.engine())
    assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"
    # the repeated call carries the key of the first one, so an idempotent tool refunds once
    assert keys_written(tmp_path) == gate.keys == [f"{run_id}:s1:v1"]
    runner.shutdown()
    runner.store.close()


EXIT_SCRIPT = r'''
from core.llm.engine import Engine
from core.execution.scheduler import RunOptions
from core.plan.model import Plan, Step
from core.runs.runner import open_runner
from core.execution.scheduler import RunOptions
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, make_tool


def refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order.
    """
    raise AssertionError("the refund must wait for a person")


registry = ToolRegistry()
register_builtin_tools(registry)
registry.add(make_tool(refund))
plan = Plan(goal="refund", steps=[
    Step(id="s1", description="refund", tool="refund", args={"order_id": "1"}),
    Step(id="s2", description="add", tool="calculate", args={"expression": "2+3"},
         depends_on=["s1"])])
runner = open_runner()  # never closed: the process's exit pauses its run
run_id = runner.start("refund", plan, engine=Engine(registry=registry),
                      options=RunOptions(confirm_side_effects=True))
record = runner.wait(run_id, timeout=20, until_confirmation=True)
assert record.status == "waiting_confirmation", record.status
print(run_id, flush=True)
'''  # the script ends here, with its run waiting for a confirmation


def test_a_process_exits_while_a_run_waits_and_a_later_resume_continues_it(tmp_path, store):
    script = tmp_path / "exit.py"
    script.write_text(EXIT_SCRIPT)
    done = subprocess.run([sys.executable, str(script)],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split()[-1]
    record = store.get_run(run_id)
    assert record.status == "paused"
    assert [s.status for s in record.plan.steps] == ["pending", "pending"]
    assert "paused" in kinds(store, run_id)

    runner = Runner(RunStore(store.url), poll_s=0.05)
    assert runner.recover_interrupted() == []  # it was paused, not cut off
    gate = Gate()
    runner.resume(run_id, engine=gate.engine())
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S, until_confirmation=True)
    assert record.status == "waiting_confirmation"  # the run still asks before its refund
    runner.confirm(run_id, "s1")
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert gate.keys == [f"{run_id}:s1:v1"]
    assert record.plan.step("s2").result["value"] == 5
    runner.shutdown()
    runner.store.close()


CHAIN = 6  # s0, the held s1, then steps left for the resume


def exiting_chain(gate: Path) -> Plan:
    """s0 adds, s1 holds until ``gate`` exists, s2.. add on."""
    return Plan(goal="chain", steps=[
        Step(id=f"s{i}", description="hold" if i == 1 else "add",
             tool="hold" if i == 1 else "calculate",
             args={"gate": str(gate)} if i == 1 else {"expression": f"{i}+1"},
             depends_on=[f"s{i - 1}"] if i else []) for i in range(CHAIN)])


EXITING_MID_RUN = r'''
import sys
import threading
import time
from pathlib import Path
from core.llm.engine import Engine
from core.plan.model import Plan
from core.runs.runner import Runner
from core.store.run_store import RunStore
from core.tools.toolsets import default_registry

plan, gate = Plan.model_validate_json(sys.argv[1]), Path(sys.argv[2])
store = RunStore()
runner = Runner(store)
run_id = runner.start("chain", plan, engine=Engine(default_registry()),
                      settings_public={"offline": True})
print(run_id, flush=True)
deadline = time.monotonic() + 60
while (time.monotonic() < deadline
       and not any(event.kind == "step_started" and event.step_id == "s1"
                   for event in store.events(run_id))):
    time.sleep(0.01)
# s1 holds: the main thread ends, the runner left open. The gate opens as the interpreter
# starts to exit (the last threading exit hook registered runs first), so s1 ends, and s2
# is due, while the process exits
threading._register_atexit(gate.touch)
'''


def test_a_process_exiting_between_steps_leaves_its_run_paused_and_resumable(store, tmp_path,
                                                                             monkeypatch):
    """Python stops its thread pools before the exit watch pauses the run: a step the run
    cannot start any more stops it where it is (paused), never ends it failed."""
    # the demo's tools and the gate's (tests/toolsets/gate.py), here and in the child
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin,demo,tests.toolsets.gate")
    gate = tmp_path / "gate"
    done = subprocess.run([sys.executable, "-c", EXITING_MID_RUN,
                           exiting_chain(gate).to_json(), str(gate)],
                          capture_output=True, text=True, timeout=DEFAULT_TIMEOUT_S, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    run_id = done.stdout.split()[0]
    record = store.get_run(run_id)
    assert record.status == "paused", kinds(store, run_id)
    finished = sum(step.status == "completed" for step in record.plan.steps)
    assert 0 < finished < CHAIN  # it stopped part-way
    runner = Runner(store, poll_s=0.05)
    try:
        runner.resume(run_id)  # its engine made from the record, as in a new process
        record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    finally:
        runner.close()
    assert record.status == "completed"
    assert [step.result for step in record.plan.steps][1] == {"opened": True}
    assert [step.result["value"] for step in record.plan.steps if step.id != "s1"] == [
        i + 1 for i in range(CHAIN) if i != 1]
    assert kinds(store, run_id).count("step_started") == CHAIN  # none ran twice


IDLE_PROCESS = r'''
import time
import core.runs.workflow  # the run workflow, registered before the launch
from core.runs import durable
durable.launch(durable.embedded_executor_id())
print("up", flush=True)
time.sleep(120)
'''


def test_a_resume_is_executed_by_the_process_that_asked(store):
    """Another process of the same home (an idle dashboard) has DBOS running too: the runs
    this one resumes still come back here, with the engine and listener it lends them."""
    from core.runs import durable

    plan = Plan(goal="refund", steps=[
        Step(id="s1", description="refund", tool="refund", args={"order_id": "88231"})])
    gate = Gate()
    first = Runner(store, poll_s=0.05)
    run_ids = []
    for _ in range(4):
        run_id = first.start("refund", plan, engine=gate.engine(),
                             options=RunOptions(confirm_side_effects=True))
        first.wait(run_id, timeout=DEFAULT_TIMEOUT_S, until_confirmation=True)
        run_ids.append(run_id)
    first.close()  # paused, stopped where they wait
    idle = subprocess.Popen([sys.executable, "-c", IDLE_PROCESS], stdout=subprocess.PIPE,
                            text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert idle.stdout.readline().strip() == "up"
        second = Runner(store, poll_s=0.05)
        heard: list[str] = []
        try:
            for run_id in run_ids:
                assert store.get_run(run_id).status == "paused"
                second.resume(run_id, engine=gate.engine(),
                              on_event=lambda event, run_id=run_id: heard.append(run_id))
            for run_id in run_ids:
                assert second.wait(run_id, timeout=DEFAULT_TIMEOUT_S,
                                   until_confirmation=True).status == "waiting_confirmation"
                second.confirm(run_id, "s1")
                assert second.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"
        finally:
            second.close()
    finally:
        stop(idle)
    here = durable.embedded_executor_id()
    assert {durable.workflow_state(run_id)[1] for run_id in run_ids} == {here}
    # taken over through this process's own queue, which no other process serves
    from dbos import DBOS

    taken = DBOS.list_workflows(workflow_ids=run_ids, load_input=False, load_output=False)
    assert {found.queue_name for found in taken} == {durable.own_queue(here)}
    assert set(heard) == set(run_ids)  # the listener lent here heard every one
    assert len(gate.keys) == 4  # each refund once, by the engine lent here
