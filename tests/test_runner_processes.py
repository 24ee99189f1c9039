"""Runs in separate processes over one database: ten at once, and SIGKILL then resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from core.plan.model import Plan, Step
from core.runs.runner import Runner
from core.store.run_store import RunStore
from tests.test_runner import REPO, Gate, await_condition, calc_plan, kinds, stop

SCRIPT = r'''
import json, sys, time
from pathlib import Path
from core.llm.engine import Engine
from core.plan.model import Plan
from core.runs.runner import Runner
from core.execution.scheduler import RunOptions
from core.store.run_store import RunStore
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, current_idempotency_key, make_tool

url, plan_file, keys_file, delay = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])

def slow(label: str) -> dict:
    """Sleep a while, then echo.

    Args:
        label: any text.
    """
    time.sleep(delay)
    return {"label": label}

def refund(order_id: str) -> dict:
    """Refund (a side effect that notes its idempotency key).

    Args:
        order_id: the order.
    """
    with open(keys_file, "a") as handle:
        handle.write(str(current_idempotency_key()) + "\n")
    if order_id == "slow":
        time.sleep(delay)
    return {"refunded": order_id}

registry = ToolRegistry()
register_builtin_tools(registry)
registry.add(make_tool(slow))
registry.add(make_tool(refund, side_effect=True))
runner = Runner(RunStore(url), poll_s=0.05)
plan = Plan.model_validate_json(Path(plan_file).read_text())
run_id = runner.start(plan.goal, plan, engine=Engine(registry=registry),
                      settings_public={"api_key": "sk-test-SECRET123", "model": "m"},
                      options=RunOptions(max_parallel=2, confirm_side_effects=False))
print(run_id, flush=True)
print(json.dumps({"status": runner.wait(run_id, timeout=60).status}), flush=True)
runner.shutdown()
'''


def _spawn(tmp_path: Path, url: str, plan: Plan, name: str, delay: float = 0.0):
    script = tmp_path / "run_script.py"
    if not script.exists():  # written once: other processes may be reading it
        script.write_text(SCRIPT)
    plan_file = tmp_path / f"{name}.json"
    plan_file.write_text(plan.to_json())
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": "sk-test-SECRET123"}
    return subprocess.Popen(
        [sys.executable, str(script), url, str(plan_file), str(tmp_path / "keys.txt"),
         str(delay)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_ten_runs_in_separate_processes(tmp_path):
    store = RunStore()
    procs = [_spawn(tmp_path, store.url, calc_plan(f"run {n}", f"{n}*100+1"), f"p{n}")
             for n in range(10)]
    results = {}
    try:
        for n, proc in enumerate(procs):
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            run_id, status = out.splitlines()[:2]
            assert json.loads(status) == {"status": "completed"}
            results[run_id] = n
    finally:
        for proc in procs:
            stop(proc)
    assert len(results) == 10
    for run_id, n in results.items():
        record = store.get_run(run_id)
        assert record.request == f"run {n}"
        assert record.plan.steps[0].result["value"] == n * 100 + 1
        events = store.events(run_id)
        assert [e.seq for e in events] == list(range(1, 7))
        assert events[0].kind == "run_started" and events[-1].kind == "run_finished"
        assert {e.data["result"]["value"] for e in events if e.kind == "step_completed"} == {
            n * 100 + 1, 2}
    store.close()


def test_sigkill_mid_run_then_resume(tmp_path):
    store = RunStore()
    plan = Plan(goal="crash me", steps=[
        Step(id="s1", description="quick", tool="calculate", args={"expression": "40+2"}),
        Step(id="s2", description="refund", tool="refund", args={"order_id": "88231"},
             depends_on=["s1"]),
        Step(id="s3", description="slow", tool="slow", args={"label": "x"}, depends_on=["s2"]),
        Step(id="s4", description="after", tool="calculate", args={"expression": "1+1"},
             depends_on=["s3"]),
    ])
    proc = _spawn(tmp_path, store.url, plan, "crash", delay=30)
    try:
        run_id = proc.stdout.readline().strip()
        await_condition(lambda: "s3" in {
            e.step_id for e in store.events(run_id) if e.kind == "step_started"}, proc)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        stop(proc)
    before = store.get_run(run_id).plan

    runner = Runner(RunStore(store.url), poll_s=0.05)
    assert runner.recover_interrupted() == [run_id]
    assert store.get_run(run_id).status == "interrupted"
    assert store.latest_plan(run_id).step("s3").status == "pending"
    gate = Gate()
    gate.open.set()
    runner.resume(run_id, engine=gate.engine())
    record = runner.wait(run_id, timeout=20)
    assert record.status == "completed"
    for step_id in ("s1", "s2"):  # finished before the crash: not re-run, untouched
        assert record.plan.step(step_id).result == before.step(step_id).result
        assert record.plan.step(step_id).started_at == before.step(step_id).started_at
        assert record.plan.step(step_id).finished_at == before.step(step_id).finished_at
    assert gate.keys == []  # the refund did not run again
    assert (tmp_path / "keys.txt").read_text().split() == [f"{run_id}:s2:v1"]
    sequence = kinds(store, run_id)
    assert sequence.count("step_started") == 5  # s1, s2, s3 (killed), s3 again, s4
    assert [k for k in sequence if k in {
        "step_reset", "interrupted"}] == ["step_reset", "interrupted"]
    assert "resumed" in sequence
    runner.shutdown()
    store.close()


def test_sigkill_during_a_side_effect_resumes_with_the_same_idempotency_key(tmp_path):
    store = RunStore()
    plan = Plan(goal="refund", steps=[
        Step(id="s1", description="refund", tool="refund", args={"order_id": "slow"})])
    proc = _spawn(tmp_path, store.url, plan, "refund", delay=30)
    keys = tmp_path / "keys.txt"
    try:
        run_id = proc.stdout.readline().strip()
        await_condition(lambda: keys.exists() and keys.read_text().strip(), proc)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        stop(proc)
    runner = Runner(RunStore(store.url), poll_s=0.05)
    assert runner.recover_interrupted() == [run_id]
    gate = Gate()
    runner.resume(run_id, engine=gate.engine())
    assert runner.wait(run_id, timeout=20).status == "completed"
    # the repeated call carries the key of the first one, so an idempotent tool refunds once
    assert keys.read_text().split() == gate.keys == [f"{run_id}:s1:v1"]
    runner.shutdown()
    store.close()


EXIT_SCRIPT = r'''
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.runner import open_runner
from core.execution.scheduler import RunOptions
from core.tools.registry import ToolRegistry, make_tool


def refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order.
    """
    raise AssertionError("the refund must wait for a person")


registry = ToolRegistry()
registry.add(make_tool(refund, side_effect=True))
plan = Plan(goal="refund", steps=[
    Step(id="s1", description="refund", tool="refund", args={"order_id": "1"}),
    Step(id="s2", description="answer", depends_on=["s1"])])
runner = open_runner()  # never closed: the process's exit pauses its run
run_id = runner.start("refund", plan, engine=Engine(registry=registry),
                      options=RunOptions(confirm_side_effects=True))
record = runner.wait(run_id, timeout=20, until_confirmation=True)
assert record.status == "waiting_confirmation", record.status
print(run_id, flush=True)
'''  # the script ends here, with its run waiting for a confirmation


def test_a_process_exits_while_a_run_waits_and_the_run_is_paused(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "PLANBOARD_HOME": str(tmp_path / "home")}
    script = tmp_path / "exit.py"
    script.write_text(EXIT_SCRIPT)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split()[-1]
    store = RunStore(f"sqlite:///{tmp_path / 'home' / 'planboard.db'}")
    record = store.get_run(run_id)
    assert record.status == "paused"
    assert [s.status for s in record.plan.steps] == ["pending", "pending"]
    assert "paused" in kinds(store, run_id)
    store.close()
