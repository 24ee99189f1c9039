"""Runs served by ``python -m core worker`` processes on one PostgreSQL (issue 11).

Every process shares the test's PostgreSQL database (``PLANBOARD_DB_URL``: the run store and
DBOS's tables) and its PLANBOARD_HOME (the demo shop, where refunds are recorded). The
workers are real child processes, killed with SIGKILL as a crash would kill them; the
commands that only submit or show a run (``run --detach``, ``show``) run in this process.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cli.main import main
from core.execution.scheduler import RunOptions
from core.lifecycle import TERMINAL_STATUSES
from core.plan.model import Plan, Step
from core.runs import dispatch, durable
from core.runs.session import public_settings
from core.store.run_store import RunStore
from tests.support.core_processes import CoreProcess, CoreProcesses
from tests.support.durable_runs import refund_plan
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S

PACE_S = "1.0"  # the demo pace before each step: runs last long enough to be killed mid-way
WAITING_RUNS = 20


@pytest.fixture
def pg_store(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunStore]:
    """The run store on the test's PostgreSQL, made before any child races to make it; the
    children inherit PLANBOARD_DB_URL."""
    monkeypatch.setenv("PLANBOARD_DB_URL", postgres_url)
    made = RunStore()
    try:
        yield made
    finally:
        durable.shutdown()  # the DBOS client of this process, before the database goes
        made.close()


@pytest.fixture
def processes(tmp_path: Path, pg_store: RunStore) -> Iterator[CoreProcesses]:
    made = CoreProcesses(tmp_path / "processes", dict(os.environ))
    try:
        yield made
    finally:
        made.kill_all()


# ---- plans and commands ---------------------------------------------------------------------



def lookup_plan(number: int) -> Plan:
    return Plan(goal=f"where is order 70412 ({number})", steps=[
        Step(id="s1", description="look up order 70412", tool="query_order",
             args={"order_id": "70412"}),
        Step(id="s2", description="add up", tool="calculate",
             args={"expression": f"{number}*10"}, depends_on=["s1"]),
        Step(id="s3", description="add one", tool="calculate",
             args={"expression": f"{number}*10+1"}, depends_on=["s2"]),
    ])


def calculate_plan() -> Plan:
    return Plan(goal="add up", steps=[
        Step(id="s1", description="add up", tool="calculate", args={"expression": "6*7"}),
    ])


def start_worker(processes: CoreProcesses, name: str) -> CoreProcess:
    worker = processes.start(name, "worker", "--name", name, "--concurrency", "2")
    processes.await_output(worker, f"worker {name} serving runs", DEFAULT_TIMEOUT_S)
    return worker


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """``python -m core ARGV`` run in this process (``main``), as a client of the queue: its
    stdout, once it succeeded."""
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def detach(capsys: pytest.CaptureFixture[str], folder: Path,
           plans: dict[str, Plan]) -> dict[str, str]:
    """Submit each plan with ``run --detach`` (offline, approved, paced); the run ids by
    label."""
    run_ids = {}
    for label, plan in plans.items():
        plan_file = folder / f"{label}.json"
        plan_file.write_text(plan.to_json())
        run_ids[label] = json.loads(cli(capsys, "run", "--plan", str(plan_file), "--offline",
                                        "--yes", "--detach", "--pace", PACE_S,
                                        "--json"))["run_id"]
    return run_ids


def taken_by(worker: str, run_ids: list[str]) -> bool:
    """Whether ``worker`` holds every run of ``run_ids`` unfinished (it dequeued them)."""
    return set(run_ids) <= set(durable.unfinished_workflows(worker))


def statuses(pg_store: RunStore, run_ids: list[str]) -> dict[str, str]:
    """The runs' statuses, from one query: the waits below read them five times a second,
    and a run read whole is three queries and its plan."""
    listed = {record.run_id: record.status for record in pg_store.list_runs()}
    return {run_id: listed[run_id] for run_id in run_ids}


def all_ended(pg_store: RunStore, run_ids: list[str]) -> bool:
    return set(statuses(pg_store, run_ids).values()) <= TERMINAL_STATUSES


def step_started(pg_store: RunStore, run_id: str, step_id: str) -> bool:
    return any(event.kind == "step_started" and event.step_id == step_id
               for event in pg_store.events(run_id))


def step_workers(pg_store: RunStore, run_id: str) -> set[str]:
    return {event.data.get("worker", "") for event in pg_store.events(run_id)
            if event.kind.startswith("step_")}


# "  12 2026-11-30T10:00:00+00:00 step_completed s2 (on w1)"
_EVENT_LINE = re.compile(r"^\s+\d+ \S+ step_\w+ (?P<step>\S+)(?: \(on (?P<worker>\S+)\))?$")


def shown_step_workers(shown: str) -> dict[str, set[str | None]]:
    """From ``show``'s text: the workers named on each plan step's events (None: none)."""
    found: dict[str, set[str | None]] = {}
    for line in shown.splitlines():
        match = _EVENT_LINE.match(line)
        if match:
            found.setdefault(match["step"], set()).add(match["worker"])
    return found


# ---- the tests ------------------------------------------------------------------------------

def held_refund_plan(gate: Path) -> Plan:
    """Refund order 88231, then hold (tests/toolsets/gate.py) until ``gate`` exists, then
    add up."""
    plan = refund_plan(tail=True)
    plan.steps[2] = Step(id="s3", description="hold", tool="hold", args={"gate": str(gate)},
                         depends_on=["s2"])
    return plan


def test_two_workers_finish_every_run_when_one_is_killed_and_restarted(processes, pg_store,
                                                                        capsys, monkeypatch):
    toolsets = "builtin,demo,tests.toolsets.gate"  # the workers' and this process's
    processes.env["PLANBOARD_TOOLSETS"] = toolsets
    monkeypatch.setenv("PLANBOARD_TOOLSETS", toolsets)
    gate = processes.folder / "gate"
    w1 = start_worker(processes, "w1")
    first = detach(capsys, processes.folder, {"refund": held_refund_plan(gate),
                                              "lookup-1": lookup_plan(1),
                                              "lookup-2": lookup_plan(2)})
    refund_run = first["refund"]
    processes.await_true(lambda: taken_by("w1", list(first.values())),
                         "w1 taking the first three runs", DEFAULT_TIMEOUT_S, watch=[w1])
    w2 = start_worker(processes, "w2")

    # w1 dies after its refund, while s3 holds: the run is mid-way
    processes.await_true(lambda: step_started(pg_store, refund_run, "s3"),
                         "the refund run's s3 under way", DEFAULT_TIMEOUT_S, watch=[w1, w2])
    w1.kill()
    assert len(refunds_for("88231")) == 1, processes.report()
    status = pg_store.get_run(refund_run).status
    assert status == "running", f"{status}\n{processes.report()}"
    gate.touch()  # the restarted w1 goes past s3

    # w2 takes the runs submitted now (here: `run --detach` submitted the first ones);
    # w1's runs wait for a worker named w1, whose launch puts them back on the queue
    paced = RunOptions(step_delay_s=float(PACE_S))
    later = {f"lookup-{n}": dispatch.submit(pg_store, f"where is order 70412 ({n})",
                                            lookup_plan(n), options=paced,
                                            settings_public=public_settings(offline=True))
             for n in (3, 4, 5)}
    processes.await_true(lambda: taken_by("w2", list(later.values())),
                         "w2 taking the later runs", DEFAULT_TIMEOUT_S, watch=[w2])
    assert taken_by("w1", [refund_run]), processes.report()

    w1 = start_worker(processes, "w1")
    everything = [*first.values(), *later.values()]
    processes.await_true(lambda: all_ended(pg_store, everything), "the end of all six runs",
                         DEFAULT_TIMEOUT_S, watch=[w1, w2], poll_s=0.2)

    assert statuses(pg_store, everything) == dict.fromkeys(everything, "completed"), (
        processes.report())
    assert len(refunds_for("88231")) == 1, processes.report()
    # restarted under its name, w1 put its runs back on the queue (DBOS's recovery), and a
    # live worker finished them
    assert all(step_workers(pg_store, run_id) <= {"w1", "w2"} for run_id in first.values()), (
        processes.report())
    assert "w1" in step_workers(pg_store, refund_run)
    assert all(step_workers(pg_store, run_id) == {"w2"} for run_id in later.values())
    # `show` names the worker of each step's events: a run of each worker
    named = [refund_run, later["lookup-3"]]
    for run_id in named:
        shown = cli(capsys, "show", run_id)
        plan = pg_store.get_run(run_id).plan
        by_step = shown_step_workers(shown)
        assert set(by_step) == {step.id for step in plan.steps}, shown
        assert all(workers <= {"w1", "w2"} for workers in by_step.values()), shown


def test_runs_waiting_for_confirmation_hold_no_worker_slot(processes, pg_store):
    worker = start_worker(processes, "solo")
    waiting_options = RunOptions(confirm_side_effects=True)
    waiting = [dispatch.submit(pg_store, f"refund order 88231 ({n})", refund_plan(tail=True),
                               settings_public=public_settings(offline=True),
                               options=waiting_options)
               for n in range(WAITING_RUNS)]
    processes.await_true(
        lambda: set(statuses(pg_store, waiting).values()) == {"waiting_confirmation"},
        f"all {WAITING_RUNS} runs waiting for confirmation", DEFAULT_TIMEOUT_S, watch=[worker],
        poll_s=0.2)

    # two step permits, twenty runs waiting: a new run still gets to work
    newcomer = dispatch.submit(pg_store, "add up", calculate_plan(),
                               settings_public=public_settings(offline=True),
                               options=RunOptions(confirm_side_effects=True))
    processes.await_true(lambda: pg_store.get_run(newcomer).status == "completed",
                         "the new run completing", DEFAULT_TIMEOUT_S, watch=[worker])
    assert set(statuses(pg_store, waiting).values()) == {"waiting_confirmation"}
    assert refunds_for("88231") == []

    for run_id in waiting:
        dispatch.decide(pg_store, run_id, "confirm", "s2")
    processes.await_true(lambda: all_ended(pg_store, waiting),
                         f"the end of the {WAITING_RUNS} confirmed runs", DEFAULT_TIMEOUT_S,
                         watch=[worker], poll_s=0.2)
    assert statuses(pg_store, waiting) == dict.fromkeys(waiting, "completed"), processes.report()
    assert len(refunds_for("88231")) == 1  # twenty runs asked; the refund is made once
    assert all(("confirmed", "s2") in [(e.kind, e.step_id) for e in pg_store.events(run_id)]
               for run_id in waiting)
