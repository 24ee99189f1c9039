"""Benchmarks of runs executed as DBOS workflows.

Prints two tables (as GitHub Markdown under ``python -m bench --markdown``):

- the engine's overhead per plan step: a chain of no-op tool steps (``calculate``, offline)
  run by ``run_plan`` in this process, then as the workflow ``planboard.run`` on SQLite and
  on PostgreSQL; overhead = (workflow − in-process) / steps, which includes the run store's
  event writes that a recorded run makes besides DBOS's checkpoints;
- the parallel ratio: independent LLM-bound steps against the fake endpoint, as a workflow,
  wall time over the critical path (one call's latency);
- the overhead per step by plan size: the same no-op chain of 10, 100 and 1,000 steps as a
  workflow on SQLite, per step and against 10 steps (an event about one step writes that
  step, not the whole plan, and the scheduler's look-ups stay cheap, so it stays flat).

PostgreSQL is the one of ``--pg-url`` (a scratch database: runs are written to it), else a
throwaway cluster like the tests' when PostgreSQL is installed, else its rows say why they
were skipped. Workflows are started directly (not through the runs queue), so the queue's
polling interval is not counted.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, TextIO

from dbos import DBOS, SetWorkflowID

from bench.tables import Table
from core.execution.scheduler import RunOptions, run_plan
from core.plan.model import Plan, Step
from core.runs import durable
from core.runs.recovery import engine_for_record
from core.runs.workflow import run_workflow
from core.store.run_store import RunStore
from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI, FakeReply, text, tool_call

__all__ = [
    "Backend",
    "backends",
    "bench_parallel_ratio",
    "bench_step_overhead",
    "parallel_ratio_table",
    "run_durable_benches",
    "size_overhead_table",
    "step_overhead_table",
]

STEPS = 20
PARALLEL_STEPS = 4
LATENCY_S = 0.5
REPETITIONS = 5
OVERHEAD_TARGET_MS = 50.0
RATIO_TARGET = 1.2
SIZES = (10, 100, 1_000)
SIZE_TARGET = 1.5  # 1,000 steps cost at most this much more per step than 10
_MODEL = "gpt-4o-mini"  # one the fake endpoint serves


@dataclass(frozen=True)
class Backend:
    """Where DBOS and the run store keep their tables: ``url`` None is SQLite in a
    temporary home; ``skipped`` says why a backend could not be measured."""

    name: str
    url: str | None = None
    skipped: str = ""


# ---- plans and runs ------------------------------------------------------------------------

def chain_plan(steps: int) -> Plan:
    """``steps`` no-op tool steps, each depending on the one before."""
    return Plan(goal="chain of no-op steps", steps=[
        Step(id=f"s{i}", description=f"add {i}", tool="calculate",
             args={"expression": f"{i} + 1"}, depends_on=[f"s{i - 1}"] if i > 1 else [])
        for i in range(1, steps + 1)])


def independent_plan(steps: int) -> Plan:
    """``steps`` tool steps without dependencies whose arguments the model fills in: one
    model call each. (Reasoning steps would not do: the last of them is the synthesis,
    which waits for all the others.)"""
    return Plan(goal="independent computations", steps=[
        Step(id=f"s{i}", description=f"compute {i}", tool="calculate")
        for i in range(1, steps + 1)])


def _fill_in_arguments(body: dict[str, Any]) -> FakeReply:
    """The fake model's answer: a call of ``calculate``, the one tool a step offers."""
    return tool_call("calculate", {"expression": "6 * 7"}) if body.get("tools") else text("Done.")


_OPTIONS = RunOptions(confirm_side_effects=False, max_parallel=PARALLEL_STEPS)


def _record(store: RunStore, plan: Plan, settings: dict[str, Any]) -> str:
    """A run of ``plan`` approved as it is, recorded for the workflow to execute."""
    options = _OPTIONS.model_dump(mode="json") | {"approved_version": plan.version}
    run_id = store.create_run(plan.goal, settings, plan, options=options)
    store.set_workflow(run_id, run_id)
    return run_id


def _in_process(store: RunStore, plan: Plan, settings: dict[str, Any]) -> float:
    """Seconds ``run_plan`` takes in this process (default launcher, no store: the run
    is recorded only to build its engine as the workflow does)."""
    engine = engine_for_record(store.get_run(_record(store, plan, settings)))
    started = time.perf_counter()
    outcome = run_plan(plan, engine, options=_OPTIONS)
    elapsed = time.perf_counter() - started
    _check_completed(outcome.plan, "run_plan")
    return elapsed


def _as_workflow(store: RunStore, plan: Plan, settings: dict[str, Any]) -> float:
    """Seconds from starting the workflow of a recorded run to its result."""
    run_id = _record(store, plan, settings)
    started = time.perf_counter()
    with SetWorkflowID(run_id):
        handle = DBOS.start_workflow(run_workflow, run_id, False)  # as Runner.start does
    status = handle.get_result(polling_interval_sec=0.01)
    elapsed = time.perf_counter() - started
    if status != "completed":
        raise RuntimeError(f"the workflow of run {run_id} ended {status}")
    _check_completed(store.get_run(run_id).plan, "the workflow")
    return elapsed


def _check_completed(plan: Plan | None, who: str) -> None:
    statuses = {step.status for step in plan.steps} if plan else {"missing"}
    if statuses != {"completed"}:
        raise RuntimeError(f"{who} left steps {sorted(statuses)}: the benchmark is void")


def _median(measure: Callable[[], float], repetitions: int) -> float:
    """The median of ``repetitions`` measures, after one warm-up (imports, first connections)."""
    measure()
    return statistics.median(measure() for _ in range(repetitions))


# ---- where the engine runs -------------------------------------------------------------------

@contextmanager
def _environment(values: dict[str, str | None]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            _set_env(name, value)
        yield
    finally:
        for name, value in saved.items():
            _set_env(name, value)


def _set_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


@contextmanager
def _engine_on(backend: Backend, extra_env: dict[str, str | None]) -> Iterator[RunStore]:
    """DBOS launched on ``backend`` in a temporary PlanBoard home; the run store there."""
    with tempfile.TemporaryDirectory(prefix="planboard-bench-") as home, _environment(
            {"PLANBOARD_HOME": home, "PLANBOARD_DB_URL": backend.url, **extra_env}):
        durable.launch(durable.embedded_executor_id())
        store = RunStore()
        try:
            yield store
        finally:
            store.close()
            durable.shutdown()  # before the home goes: DBOS keeps its SQLite file open


# ---- the benchmarks --------------------------------------------------------------------------

def step_overhead_table(backends: list[Backend], steps: int = STEPS,
                        repetitions: int = REPETITIONS) -> Table:
    """ms per step in process and as a workflow, and the difference, per backend."""
    table = Table(f"DBOS overhead per step: a chain of {steps} no-op tool steps (calculate, "
                  f"offline), median of {repetitions}",
                  ["backend", "in-process ms/step", "workflow ms/step", "overhead ms/step"])
    offline = {"offline": True}
    for backend in backends:
        if backend.skipped:
            table.rows.append([backend.name, f"skipped: {backend.skipped}"])
            continue
        with _engine_on(backend, {}) as store:
            local = _median(lambda: _in_process(store, chain_plan(steps), offline), repetitions)
            flow = _median(lambda: _as_workflow(store, chain_plan(steps), offline), repetitions)
        local_ms, flow_ms = local * 1000 / steps, flow * 1000 / steps
        table.rows.append([backend.name, f"{local_ms:.1f}", f"{flow_ms:.1f}",
                           f"{flow_ms - local_ms:.1f}"])
    table.notes.append(f"target: overhead ≤ {OVERHEAD_TARGET_MS:.0f} ms per step on SQLite")
    return table


def parallel_ratio_table(backends: list[Backend], steps: int = PARALLEL_STEPS,
                         latency_s: float = LATENCY_S, repetitions: int = REPETITIONS) -> Table:
    """Wall time over the critical path for ``steps`` independent model calls."""
    table = Table(f"{steps} independent LLM-bound steps as a workflow, {latency_s:.2f}s per "
                  f"call, median of {repetitions}",
                  ["run", "wall s", "LLM calls", "wall / critical path"])
    with FakeOpenAI(latency_s=latency_s, responder=_fill_in_arguments) as server:
        settings = {"offline": False, "base_url": server.base_url, "provider": "generic",
                    "planner_model": _MODEL, "executor_model": _MODEL, "max_retries": 0,
                    "timeout_s": 30.0}
        key = {"OPENAI_API_KEY": DEFAULT_KEY}  # the fake endpoint's; keys are never stored
        measured = [b for b in backends if not b.skipped]
        for index, backend in enumerate(measured):
            with _engine_on(backend, key) as store:
                if index == 0:  # the in-process reference, once
                    table.rows.append(_parallel_row(
                        server, "run_plan in-process", latency_s, repetitions,
                        lambda: _in_process(store, independent_plan(steps), settings)))
                table.rows.append(_parallel_row(
                    server, f"workflow, {backend.name}", latency_s, repetitions,
                    lambda: _as_workflow(store, independent_plan(steps), settings)))
    for backend in backends:
        if backend.skipped:
            table.rows.append([f"workflow, {backend.name}", f"skipped: {backend.skipped}"])
    table.notes.append(f"critical path: {latency_s:.2f}s (one call); target ≤ "
                       f"{RATIO_TARGET:.1f} for the workflow")
    return table


def size_overhead_table(sizes: tuple[int, ...] = SIZES, budget_steps: int = 3_000) -> Table:
    """ms per step of a no-op chain as a workflow on SQLite, by plan size, and the ratio to
    the smallest. Each size runs as often as ``budget_steps`` allows (at least once; the
    median counts), after a warm-up run of the smallest."""
    table = Table("Engine time per step by plan size: a chain of no-op tool steps "
                  "(calculate, offline) as a workflow on SQLite",
                  ["steps", "runs", "workflow ms/step", "vs 10 steps"])
    with _engine_on(Backend("SQLite"), {}) as store:
        offline = {"offline": True}
        _as_workflow(store, chain_plan(sizes[0]), offline)
        first = None
        for size in sizes:
            runs = max(1, min(REPETITIONS, budget_steps // size))
            per_step = statistics.median(
                _as_workflow(store, chain_plan(size), offline) for _ in range(runs)) / size
            first = first or per_step
            table.rows.append([f"{size:,}", str(runs), f"{per_step * 1000:.1f}",
                               f"{per_step / first:.2f}"])
    table.notes.append(f"target: {sizes[-1]:,} steps within {SIZE_TARGET:.1f} x the time per "
                       f"step of {sizes[0]}")
    return table


def _parallel_row(server: FakeOpenAI, name: str, latency_s: float, repetitions: int,
                  measure: Callable[[], float]) -> list[str]:
    before = len(server.chat_bodies)
    wall = _median(measure, repetitions)
    calls = (len(server.chat_bodies) - before) // (repetitions + 1)  # + the warm-up
    return [name, f"{wall:.2f}", str(calls), f"{wall / latency_s:.2f}"]


def bench_step_overhead(backends: list[Backend], steps: int = STEPS,
                        repetitions: int = REPETITIONS, out: TextIO | None = None) -> None:
    """Print :func:`step_overhead_table` as text (to ``out``, by default standard output)."""
    print(step_overhead_table(backends, steps, repetitions).text(), file=out)


def bench_parallel_ratio(backends: list[Backend], steps: int = PARALLEL_STEPS,
                         latency_s: float = LATENCY_S, repetitions: int = REPETITIONS,
                         out: TextIO | None = None) -> None:
    """Print :func:`parallel_ratio_table` as text (to ``out``, by default standard output)."""
    print(parallel_ratio_table(backends, steps, latency_s, repetitions).text(), file=out)


# ---- backends and entry point ---------------------------------------------------------------

@contextmanager
def backends(pg_url: str | None) -> Iterator[list[Backend]]:
    """SQLite, and PostgreSQL: ``pg_url``, else a throwaway cluster while the context lasts
    when PostgreSQL is installed, else a skipped row saying why."""
    sqlite = Backend("SQLite")
    if pg_url:
        yield [sqlite, Backend("PostgreSQL", pg_url)]
        return
    import pytest  # the throwaway cluster is the tests' (tests/support/pg.py): only when needed

    from tests.support.pg import pg_binaries, running_cluster

    binaries = pg_binaries()
    if binaries is None:
        yield [sqlite, Backend("PostgreSQL", skipped="no /usr/lib/postgresql/*/bin/pg_ctl "
                               "(apt-get install postgresql), and no --pg-url")]
        return
    with ExitStack() as stack:
        try:
            cluster = stack.enter_context(running_cluster(binaries))
            url = cluster.url(cluster.create_database())
        except (pytest.fail.Exception, Exception) as exc:  # the bench goes on without it
            found = Backend("PostgreSQL", skipped=f"the throwaway cluster did not start: {exc}")
        else:
            found = Backend("PostgreSQL", url)
        yield [sqlite, found]


LOAD_NOTE = "Numbers are wall-clock times on this machine: other load makes them worse."


def run_durable_benches(pg_url: str | None = None, *, markdown: bool = False,
                        command: str = "python -m bench --only durable") -> None:
    """Run both DBOS benchmarks and print their tables (as Markdown with ``markdown``,
    each headed by ``command``)."""
    if not markdown:  # a Markdown table gives the load average when it started instead
        print(f"\n({LOAD_NOTE})")
    with backends(pg_url) as found:
        for measure in (step_overhead_table, parallel_ratio_table):
            table = measure(found)
            print(table.markdown(command) if markdown else table.text(), flush=True)
    table = size_overhead_table()
    print(table.markdown(command) if markdown else table.text(), flush=True)
