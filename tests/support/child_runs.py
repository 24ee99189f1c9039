"""Runs started by child processes over the test's home, for the tests that spread runs over
processes or crash one for real (SIGKILL), as a person's machine would.

Each child starts one run with a :class:`core.runs.runner.Runner`, on its own DBOS over the
home's SQLite (embedded executor ``embedded:<host>:<pid>``), prints the run id, waits for
the run and prints its final status. Its tools: the default catalog (the shop's
``apply_refund`` refunds an order at most once), ``slow`` (sleeps ``delay`` seconds) and
``refund`` (an idempotent side effect that appends its idempotency key to ``keys.txt``, and
sleeps ``delay`` seconds for order "slow").
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from core.plan.model import Plan
from core.store.run_store import RunStore
from tests.support import REPO
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until

__all__ = ["await_condition", "crash_when", "keys_written", "spawn_run", "step_started", "stop"]


CHILD = r'''
import json, sys, time
from pathlib import Path
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan
from core.runs.runner import Runner
from core.store.run_store import RunStore
from core.tools.toolsets import default_registry
from core.tools.registry import current_idempotency_key, make_tool

plan_file, keys_file, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])


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


registry = default_registry()
registry.add(make_tool(slow, read_only=True))
registry.add(make_tool(refund, idempotent=True))  # it keeps idempotency keys
runner = Runner(RunStore(), poll_s=0.05)
plan = Plan.model_validate_json(Path(plan_file).read_text())
run_id = runner.start(plan.goal, plan, engine=Engine(registry=registry),
                      settings_public={"offline": True},
                      options=RunOptions(max_parallel=2, confirm_side_effects=False))
print(run_id, flush=True)
print(json.dumps({"status": runner.wait(run_id, timeout=60).status}), flush=True)
runner.shutdown()
'''


def spawn_run(folder: Path, plan: Plan, name: str, *, delay: float = 0.0) -> subprocess.Popen:
    """Start a child that runs ``plan`` (its stdout is a pipe; its stderr goes to
    ``folder/{name}.err``)."""
    script = folder / "child_run.py"
    if not script.exists():  # written once: other children may be reading it
        script.write_text(CHILD)
    plan_file = folder / f"{name}.json"
    plan_file.write_text(plan.to_json())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with (folder / f"{name}.err").open("wb") as err:
        return subprocess.Popen(
            [sys.executable, str(script), str(plan_file), str(folder / "keys.txt"), str(delay)],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env)


def keys_written(folder: Path) -> list[str]:
    """The idempotency keys the children's ``refund`` tool was called with, in order."""
    keys = folder / "keys.txt"
    return keys.read_text().split() if keys.exists() else []


def crash_when(folder: Path, plan: Plan, ready: Callable[[str], object], *,
               delay: float = 60.0) -> str:
    """Run ``plan`` in a child and SIGKILL it once ``ready(run_id)`` holds; return the
    run's id. The child is reaped, so its pid is gone as after a real crash."""
    proc = spawn_run(folder, plan, "crash", delay=delay)
    try:
        run_id = proc.stdout.readline().strip()
        assert run_id, (folder / "crash.err").read_text()
        await_condition(lambda: ready(run_id), proc)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        stop(proc)
    return run_id


def step_started(store: RunStore, step_id: str) -> Callable[[str], bool]:
    """A ``ready`` for :func:`crash_when`: step ``step_id`` of the run has started."""
    return lambda run_id: step_id in {
        e.step_id for e in store.events(run_id) if e.kind == "step_started"}


def await_condition(check: Callable[[], object], proc: subprocess.Popen,
                    timeout: float = DEFAULT_TIMEOUT_S) -> None:
    """Poll ``check()`` (the child writes to the database) until true; fail on timeout or
    when the child exits first."""

    def checked() -> object:
        assert proc.poll() is None, f"the child process exited early: {proc.returncode}"
        return check()

    wait_until(checked, timeout, what="the child process", poll_s=0.05)


def stop(proc: subprocess.Popen) -> None:
    """Kill the child (if still alive), reap it and release its pipe."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    if proc.stdout is not None:
        proc.stdout.close()
