"""Benchmarks of runs served by ``python -m core worker`` processes on PostgreSQL.

Prints two tables (as GitHub Markdown under ``python -m bench --markdown``):

- the submission: seconds per ``python -m core run REQUEST --detach`` command, six in a
  row, from its start to its exit. With ``--yes`` it only records the request and enqueues
  it (the worker drafts the plan); without, it drafts the plan here and a person approves
  it ("y" on its input): the planner's call, its model client and its tools (and their MCP
  servers, in the rows with two reference servers configured) are paid before it returns.
  No worker runs meanwhile, so the submissions have the machine to themselves;
- the throughput: ``runs`` runs of four LLM-bound steps (three whose arguments the model
  fills in, then the answer; one call each, at a fixed latency) submitted at once to one
  worker, then to two, each with ``--concurrency`` step permits; runs per minute from the
  first submission to the last run's end, and the ratio of two workers to one.

Everything runs against the fake OpenAI-compatible endpoint of tests/ in this process and a
throwaway PostgreSQL cluster (or ``--pg-url``, a scratch database the runs are written to),
each measurement in a fresh database when the cluster is the benchmark's own.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.tables import Table
from core.execution.options import RunOptions
from core.plan.model import Plan, Step
from core.runs.durable import RUN_SLOTS

__all__ = ["run_workers_benches", "submission_table", "throughput_table"]

ROOT = Path(__file__).resolve().parents[1]
REQUEST = "Where is order 88231?"
LATENCY_S = 0.5
SUBMISSIONS = 6
RUNS = 20
CONCURRENCY = 4
RATIO_TARGET = 1.8
_MODEL = "gpt-4o-mini"
_PLAN = json.dumps({"goal": REQUEST, "steps": [
    {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
     "args": {"order_id": "88231"}, "depends_on": []},
    {"id": "s2", "description": "Tell the user where the order is", "tool": None,
     "depends_on": ["s1"]}]})
_READY_TIMEOUT_S = 180.0
_RUNS_TIMEOUT_S = 600.0
_FOLLOW_S = 0.1


def _model(body: dict[str, Any]) -> Any:
    """The fake model: the plan for the planner (who asks for JSON), a call of the one tool
    a step offers, else a sentence."""
    from tests.support.fake_openai import text, tool_call

    if body.get("response_format"):
        return text(_PLAN)
    if body.get("tools"):
        return tool_call(body["tools"][0]["function"]["name"], {"expression": "6 * 7"})
    return text("Order 88231 was delivered and signed for; all three sums are 42.")


def llm_bound_plan(number: int) -> Plan:
    """Four steps of one model call each: three sums whose arguments the model fills in
    (independent), then the answer."""
    sums = [Step(id=f"s{i}", description=f"compute sum {i} of run {number}", tool="calculate")
            for i in (1, 2, 3)]
    return Plan(goal=f"three sums ({number})",
                steps=[*sums, Step(id="s4", description="answer", depends_on=["s1", "s2", "s3"])])


# ---- where it runs -------------------------------------------------------------------------

@dataclass
class Place:
    """A PlanBoard home and a PostgreSQL database for one measurement, and the environment
    a ``python -m core`` child gets there (the fake endpoint's key and models)."""

    home: str
    url: str
    env: dict[str, str]


@contextmanager
def _databases(pg_url: str | None) -> Iterator[Callable[[], str] | str]:
    """A maker of fresh databases (a throwaway cluster), ``pg_url`` as given, or the reason
    PostgreSQL cannot be measured (a string)."""
    if pg_url:
        yield lambda: pg_url
        return
    import pytest  # the throwaway cluster is the tests' (tests/support/pg.py)

    from tests.support.pg import pg_binaries, running_cluster

    binaries = pg_binaries()
    if binaries is None:
        yield ("no /usr/lib/postgresql/*/bin/pg_ctl (apt-get install postgresql), and no "
               "--pg-url")
        return
    with ExitStack() as stack:
        try:
            cluster = stack.enter_context(running_cluster(binaries))
        except (pytest.fail.Exception, Exception) as exc:
            yield f"the throwaway cluster did not start: {exc}"
            return
        yield lambda: cluster.url(cluster.create_database())


@contextmanager
def _place(database: str, base_url: str, extra: dict[str, str] | None = None) -> Iterator[Place]:
    """A temporary home over ``database``, with DBOS's tables made (by a launch here, shut
    down at once: no process of the benchmark serves the queue but its workers)."""
    from core.runs import durable

    with tempfile.TemporaryDirectory(prefix="planboard-bench-") as home:
        env = {name: value for name, value in os.environ.items()
               if not name.startswith(("OPENAI_", "PLANBOARD_", "OTEL_"))}
        env.update({"PLANBOARD_HOME": home, "PLANBOARD_DB_URL": database,
                    "OPENAI_API_KEY": _fake_key(), "OPENAI_BASE_URL": base_url,
                    "PLANBOARD_PLANNER_MODEL": _MODEL, "PLANBOARD_EXECUTOR_MODEL": _MODEL,
                    "PYTHONPATH": str(ROOT), **(extra or {})})
        saved = {name: os.environ.get(name) for name in ("PLANBOARD_HOME", "PLANBOARD_DB_URL")}
        os.environ.update(PLANBOARD_HOME=home, PLANBOARD_DB_URL=database)
        try:
            import core.runs.workflow  # noqa: F401  registers the workflow the launch checks

            durable.launch(durable.embedded_executor_id())
            durable.shutdown()
            yield Place(home, database, env)
        finally:
            _cancel_queued()  # a scratch database given with --pg-url serves the next one
            durable.shutdown()
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _cancel_queued() -> None:
    """Cancel the workflows still waiting on the runs queue (the submissions' runs)."""
    from dbos import DBOSClient

    from core.runs import durable

    client = DBOSClient(system_database_url=durable.system_database_url())
    try:
        for found in client.list_workflows(status=["ENQUEUED"], load_input=False,
                                           load_output=False):
            client.cancel_workflow(found.workflow_id)
    finally:
        client.destroy()


def _fake_key() -> str:
    from tests.support.fake_openai import DEFAULT_KEY

    return DEFAULT_KEY


# ---- the submission ------------------------------------------------------------------------

def _mcp_config(folder: str) -> str | None:
    """An ``mcpServers`` file with the two reference servers (git, time), when installed."""
    import importlib.util

    if not all(importlib.util.find_spec(name) for name in ("mcp_server_git", "mcp_server_time")):
        return None
    path = Path(folder) / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "git": {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository",
                                                     str(ROOT)]},
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}}}))
    return str(path)


def _submit_seconds(place: Place, detach_args: list[str], answer: str) -> tuple[float, float]:
    """Seconds one ``run REQUEST --detach ...`` command takes, from its start to its exit,
    and the processor seconds it used, with the processes it started (MCP servers)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "core", "run", REQUEST, "--detach",
                           *detach_args], cwd=place.home, env=place.env, input=answer,
                          capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"run --detach {' '.join(detach_args)} failed: "
                           f"{done.stderr.strip()[-300:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return elapsed, cpu


def submission_table(make_database: Callable[[], str] | str, latency_s: float = LATENCY_S,
                     submissions: int = SUBMISSIONS) -> Table:
    """Seconds per ``run --detach`` submission, with and without the plan drafted here."""
    from tests.support.fake_openai import FakeOpenAI

    table = Table(f"`python -m core run REQUEST --detach`, {submissions} submissions in a row, "
                  f"PostgreSQL, a model at {latency_s:.2f}s per call",
                  ["submission", "MCP servers", "median s", "max s", "median CPU s",
                   "model calls"])
    if isinstance(make_database, str):
        table.rows.append(["PostgreSQL", f"skipped: {make_database}"])
        return table
    with tempfile.TemporaryDirectory(prefix="planboard-bench-mcp-") as folder, FakeOpenAI(
            latency_s=latency_s, responder=_model) as server:
        config = _mcp_config(folder)
        for servers in ([None, config] if config else [None]):
            extra = {"PLANBOARD_MCP_CONFIG": servers} if servers else {}
            for label, args, answer in (
                    ("--yes: recorded and queued", ["--yes"], ""),
                    ("asks: drafted here, 'y'", [], "y\n")):
                with _place(make_database(), server.base_url, extra) as place:
                    before = len(server.chat_bodies)
                    measured = [_submit_seconds(place, args, answer)
                                for _ in range(submissions)]
                    calls = len(server.chat_bodies) - before
                times = [wall for wall, _ in measured]
                table.rows.append([label, "git, time" if servers else "none",
                                   f"{statistics.median(times):.2f}", f"{max(times):.2f}",
                                   f"{statistics.median(cpu for _, cpu in measured):.2f}",
                                   str(calls)])
    if not config:
        table.notes.append("The reference MCP servers (mcp-server-git, mcp-server-time, "
                           "requirements-dev.txt) are not installed: no row with them.")
    table.notes.append("No worker runs meanwhile (the runs wait in the queue): the time is "
                       "the command's own, from its start to its exit, imports included; the "
                       "CPU time (the command's and its MCP servers') does not depend on what "
                       "else the machine does.")
    return table


# ---- the throughput ------------------------------------------------------------------------

@contextmanager
def _workers(place: Place, count: int, concurrency: int,
             cpu: list[float] | None = None) -> Iterator[list[subprocess.Popen]]:
    """``count`` workers serving the place's queue, ready; stopped (SIGTERM) afterwards,
    when ``cpu`` gets the processor seconds (user + system) each one used."""
    started: list[subprocess.Popen] = []
    logs = []
    try:
        for number in range(1, count + 1):
            log = Path(place.home) / f"worker-{number}.log"
            logs.append(log)
            with log.open("wb") as out:
                started.append(subprocess.Popen(
                    [sys.executable, "-m", "core", "worker", "--name", f"bench-w{number}",
                     "--concurrency", str(concurrency)], cwd=place.home, env=place.env,
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while not all("serving runs" in log.read_text(errors="replace") for log in logs):
            if time.monotonic() > deadline or any(p.poll() is not None for p in started):
                said = "\n".join(log.read_text(errors="replace")[-500:] for log in logs)
                raise RuntimeError(f"the workers did not start:\n{said}")
            time.sleep(0.1)
        yield started
    finally:
        for worker in started:
            worker.terminate()
        for worker in started:
            used = _reaped(worker)
            if cpu is not None and used is not None:
                cpu.append(used)


def _reaped(worker: subprocess.Popen, timeout_s: float = 30.0) -> float | None:
    """Wait for the stopped worker (killed after ``timeout_s``); the processor seconds it
    used, None when it could not be told."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pid, status, usage = os.wait4(worker.pid, os.WNOHANG)
        if pid:
            worker.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        time.sleep(0.05)
    worker.kill()
    worker.wait()
    return None


@dataclass
class Throughput:
    """One measurement: workers, seconds for every run, model calls, runs per worker, and
    the processor seconds the workers used (from their start to their stop)."""

    workers: int
    wall_s: float
    calls: int
    per_worker: dict[str, int]
    cpu_s: list[float]

    def runs_per_minute(self, runs: int) -> float:
        return runs * 60 / self.wall_s


def _serve(place: Place, server: Any, workers: int, runs: int, concurrency: int) -> Throughput:
    """Submit ``runs`` runs at once to ``workers`` workers; time them to the last one's end."""
    from core.cli.runs import step_workers
    from core.runs import dispatch, durable
    from core.store.run_store import RunStore

    settings = {"offline": False, "base_url": server.base_url, "provider": "generic",
                "planner_model": _MODEL, "executor_model": _MODEL, "max_retries": 0,
                "timeout_s": 60.0}
    options = RunOptions(confirm_side_effects=False, max_parallel=4)
    store = RunStore()
    cpu: list[float] = []
    try:
        with _workers(place, workers, concurrency, cpu):
            before = len(server.chat_bodies)
            started = time.perf_counter()
            run_ids = [dispatch.submit(store, f"three sums ({n})", llm_bound_plan(n),
                                       settings_public=settings, options=options)
                       for n in range(runs)]
            _await_all(store, run_ids)
            wall = time.perf_counter() - started
            calls = len(server.chat_bodies) - before
        statuses = Counter(store.get_run(run_id).status for run_id in run_ids)
        if statuses != Counter({"completed": runs}):
            raise RuntimeError(f"the runs ended {dict(statuses)}: the benchmark is void")
        per_worker = Counter(name for run_id in run_ids
                             for name in step_workers(store.events(run_id))[:1])
    finally:
        durable.shutdown()  # the client of this database
        store.close()
    return Throughput(workers, wall, calls, dict(sorted(per_worker.items())), cpu)


def _await_all(store: Any, run_ids: list[str]) -> None:
    """Until every run has ended: one query every 0.1 s (the benchmark shares the machine
    with the workers it measures, so it reads little)."""
    from core.lifecycle import TERMINAL_STATUSES

    waiting = set(run_ids)
    deadline = time.monotonic() + _RUNS_TIMEOUT_S
    while waiting:
        time.sleep(_FOLLOW_S)
        ended = {record.run_id for record in store.list_runs(limit=len(run_ids) + 10)
                 if record.status in TERMINAL_STATUSES}
        waiting -= ended
        if waiting and time.monotonic() > deadline:
            raise RuntimeError(f"{len(waiting)} runs did not end in {_RUNS_TIMEOUT_S:.0f} s")


def throughput_table(make_database: Callable[[], str] | str, runs: int = RUNS,
                     latency_s: float = LATENCY_S, concurrency: int = CONCURRENCY) -> Table:
    """Runs per minute of one worker and of two, and their ratio."""
    from tests.support.fake_openai import FakeOpenAI

    table = Table(f"{runs} runs of 4 LLM-bound steps ({latency_s:.2f}s per call) submitted at "
                  f"once, PostgreSQL, workers of --concurrency {concurrency}",
                  ["workers", "wall s", "runs / min", "LLM calls", "runs per worker",
                   "worker CPU s", "vs one worker"])
    if isinstance(make_database, str):
        table.rows.append(["PostgreSQL", f"skipped: {make_database}"])
        return table
    found = []
    with FakeOpenAI(latency_s=latency_s, responder=_model) as server:
        for workers in (1, 2):
            with _place(make_database(), server.base_url) as place:
                found.append(_serve(place, server, workers, runs, concurrency))
    one = found[0].runs_per_minute(runs)
    for measured in found:
        rate = measured.runs_per_minute(runs)
        table.rows.append([str(measured.workers), f"{measured.wall_s:.1f}", f"{rate:.1f}",
                           str(measured.calls),
                           ", ".join(f"{name} {count}" for name, count in
                                     measured.per_worker.items()),
                           " + ".join(f"{used:.1f}" for used in measured.cpu_s),
                           f"{rate / one:.2f}"])
    bound = runs * 4 * latency_s / concurrency
    table.notes.append("Runs per worker: a worker's poll of the queue claims as many queued "
                       f"runs as it has free run slots ({RUN_SLOTS}), however busy its step "
                       "permits are, so the first poll after a burst takes most of it "
                       "(docs/DBOS.md, Costs and limits).")
    table.notes.append(f"target: two workers ≥ {RATIO_TARGET:.1f} × one. Lower bound of the "
                       f"wall time: {bound:.1f} s for one worker, {bound / 2:.1f} s for two "
                       f"(every step's call at {latency_s:.2f}s, {concurrency} steps at once "
                       "per worker).")
    return table


def run_workers_benches(pg_url: str | None = None, *, markdown: bool = False,
                        command: str = "python -m bench --only workers") -> None:
    """Measure the submission and the throughput of workers; print both tables."""
    with _databases(pg_url) as make_database:
        for measure in (submission_table, throughput_table):
            table = measure(make_database)
            print(table.markdown(command) if markdown else table.text(), flush=True)
