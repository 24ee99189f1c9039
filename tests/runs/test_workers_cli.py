"""Workers from the command line: ``worker`` as a real process over SQLite, ``run --detach``,
steering a worker's run, ``recover --worker`` after a worker dies, and the one-line errors.

The commands under test run in this process (``main``); this process only talks to the
queue as a client (it launches no DBOS), so every run executes in a worker subprocess.
The tests that leave their worker running share one, ``w1`` of the module's home (a worker
process costs seconds of CPU to start); the tests that kill a worker start their own.
"""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.cli.main import main
from core.cli.workers import printing_events
from core.errors import StoreError
from core.execution.scheduler import RunOptions
from core.plan.model import Plan
from core.runs import dispatch, durable, durable_launcher
from core.store.run_store import RunStore
from demo.db import remove_database
from demo.shop import shop_db_path
from tests.support import REPO
from tests.support.cli import write_plan
from tests.support.durable_runs import await_status
from tests.support.pg import on_both_backends
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until

REFUND_STEPS = [
    {"id": "s1", "description": "look up order 88231", "tool": "query_order",
     "args": {"order_id": "88231"}},
    {"id": "s2", "description": "refund order 88231", "tool": "apply_refund",
     "args": {"order_id": "88231", "reason": "broken"}, "depends_on": ["s1"]},
    {"id": "s3", "description": "add up", "tool": "calculate", "args": {"expression": "2+3"},
     "depends_on": ["s2"]},
]
SUMS = [{"id": f"s{n}", "description": f"sum {n}", "tool": "calculate",
         "args": {"expression": f"{n}+{n}"}, "depends_on": [f"s{n - 1}"] if n > 1 else []}
        for n in range(1, 4)]


class Worker:
    """``python -m core worker`` in a subprocess of this test's home."""

    def __init__(self, folder: Path, name: str, concurrency: int = 2) -> None:
        self.name = name
        self.out = folder / f"{name}.out"
        self.err = folder / f"{name}.err"
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "core", "worker", "--name", name,
                 "--concurrency", str(concurrency)],
                stdout=out, stderr=err, env={**os.environ, "PYTHONPATH": str(REPO)})

        def serving() -> bool:
            assert self.proc.poll() is None, f"worker {name} exited: {self.err.read_text()}"
            return "serving runs" in self.out.read_text()

        try:
            wait_until(serving, what=f"worker {name} to serve runs")
        except BaseException:  # a timeout, say: no test holds this worker to stop it, and it
            # would poll the queue long after the session
            self.stop(signal.SIGKILL)
            raise

    def stop(self, number: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(number)
        try:
            return self.proc.wait(DEFAULT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@pytest.fixture(scope="module", autouse=True)
def _client_closed_with_the_module() -> Iterator[None]:
    yield
    durable.shutdown()


@pytest.fixture(scope="module")
def w1_of_the_module(module_home: Path) -> Iterator[Worker]:
    """Worker ``w1`` serving the module's home until the module ends."""
    worker = Worker(module_home.parent, "w1")
    yield worker
    worker.stop(signal.SIGKILL)


@pytest.fixture
def w1(w1_of_the_module: Worker, module_home: Path, monkeypatch) -> Worker:
    """The module's worker ``w1``, and this test in the home it serves, with a shop of its
    own (the shop refunds order 88231 once per shop: each test counts its own refund).
    The runs earlier tests left there are theirs: this test keeps to its own run ids."""
    monkeypatch.setenv("PLANBOARD_HOME", str(module_home))
    remove_database(shop_db_path())  # made afresh on its first use, as in a new home
    return w1_of_the_module


@pytest.fixture
def w1_store(w1: Worker) -> Iterator[RunStore]:
    """The run store of the home ``w1`` serves."""
    made = RunStore()
    yield made
    made.close()


@pytest.fixture
def workers(tmp_path) -> Iterator[dict[str, Worker]]:
    """Start workers with ``workers[name] = Worker(...)``; all are stopped at the end."""
    started: dict[str, Worker] = {}
    yield started
    for worker in started.values():
        worker.stop(signal.SIGKILL)


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def detach(capsys, plan_file: str, *options: str) -> str:
    code, out, err = cli(capsys, "run", "--plan", plan_file, "--yes", "--offline", "--detach",
                         "--json", *options)
    assert code == 0, err
    assert "python -m core show" in err
    return json.loads(out)["run_id"]




def await_event(store: RunStore, run_id: str, kind: str, step_id: str) -> None:
    wait_until(lambda: any(e.kind == kind and e.step_id == step_id
                           for e in store.events(run_id)), what=f"{kind} of {step_id}")


def step_lines(shown: str) -> list[str]:
    return [line for line in shown.splitlines() if " step_" in line]


# ---- a run submitted to a worker -----------------------------------------------------------

def test_a_detached_run_completes_in_the_worker_that_show_and_runs_name(
        tmp_path, w1, w1_store, capsys):
    assert "w1" in w1.out.read_text()
    assert "dbos.sqlite" in w1.out.read_text()

    run_id = detach(capsys, write_plan(tmp_path, REFUND_STEPS, "refund 88231"))

    assert await_status(w1_store, run_id, {"completed", "failed"}) == "completed"
    assert len(refunds_for("88231")) == 1
    code, shown, _ = cli(capsys, "show", run_id)
    assert code == 0 and len(step_lines(shown)) == 6
    assert all(line.endswith("(on w1)") for line in step_lines(shown))
    code, listed, _ = cli(capsys, "runs")
    [line] = [line for line in listed.splitlines() if line.startswith(run_id)]
    assert code == 0 and f"{run_id}  completed" in line and " w1 " in line
    code, listed, _ = cli(capsys, "runs", "--json")
    [row] = [row for row in json.loads(listed) if row["run_id"] == run_id]
    assert row["workers"] == ["w1"]


def test_run_in_workers_mode_follows_the_run_to_its_end(
        tmp_path, w1_store, capsys, monkeypatch):
    earlier = {record.run_id for record in w1_store.list_runs()}
    monkeypatch.setenv("PLANBOARD_EXECUTION", "workers")

    code, out, err = cli(capsys, "run", "--plan", write_plan(tmp_path, SUMS), "--yes",
                         "--offline")

    assert code == 0, err
    assert "✓ s3 completed" in out and "\ncompleted: " in out
    [record] = [record for record in w1_store.list_runs() if record.run_id not in earlier]
    assert record.workflow_id == record.run_id and record.status == "completed"


# ---- steering a worker's run from the command line --------------------------------------------

def test_pause_resume_cancel_and_confirm_a_worker_run(tmp_path, w1_store, capsys,
                                                      monkeypatch):
    sums = write_plan(tmp_path, SUMS)

    paced = detach(capsys, sums, "--pace", "0.5")
    await_event(w1_store, paced, "step_started", "s1")
    code, out, _ = cli(capsys, "pause", paced)
    assert code == 0 and paced in out
    assert await_status(w1_store, paced, {"paused"}) == "paused"
    code, out, _ = cli(capsys, "resume", paced, "--yes")
    assert code == 0 and "\ncompleted: " in out
    assert {"paused", "resumed"} <= {e.kind for e in w1_store.events(paced)}

    cancelled = detach(capsys, sums, "--pace", "2")
    await_event(w1_store, cancelled, "step_started", "s1")
    code, out, _ = cli(capsys, "cancel", cancelled)
    assert (code, out.strip()) == (0, f"run {cancelled}: cancelled")
    assert [s.status for s in w1_store.get_run(cancelled).plan.steps].count("completed") <= 1

    # the dashboard's way: each side effect waits for a person, who answers with `resume`
    plan = Plan.model_validate({"goal": "refund 88231", "steps": REFUND_STEPS})
    waiting = dispatch.submit(w1_store, plan.goal, plan, settings_public={"offline": True},
                              options=RunOptions(confirm_side_effects=True))
    assert await_status(w1_store, waiting, {"waiting_confirmation"}) == "waiting_confirmation"
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda question: asked.append(question) or "y")
    code, out, _ = cli(capsys, "resume", waiting)
    assert code == 0 and "\ncompleted: " in out
    assert any("s2" in question for question in asked)
    assert len(refunds_for("88231")) == 1


# ---- a worker that dies -----------------------------------------------------------------------

def test_recover_hands_a_killed_workers_run_to_another_worker(tmp_path, store, capsys,
                                                              workers):
    workers["w1"] = Worker(tmp_path, "w1")
    run_id = detach(capsys, write_plan(tmp_path, REFUND_STEPS, "refund 88231"), "--pace",
                    "4")
    await_event(store, run_id, "step_started", "s3")  # the refund is done, s3 is paced
    workers["w1"].stop(signal.SIGKILL)
    # what w1 finished is in the store now; it finishes s3 first only if this process was
    # held up longer than the pace (a loaded machine), and then w2 finishes the run
    s3_done_by_w1 = any(e.kind == "step_completed" and e.step_id == "s3"
                        for e in store.events(run_id))
    workers["w2"] = Worker(tmp_path, "w2")

    code, out, _ = cli(capsys, "recover", "--worker", "w1", "--yes")

    assert code == 0 and run_id in out and "worker w1: 1 unfinished run(s) handed" in out
    assert await_status(store, run_id, {"completed", "failed"}) == "completed"
    assert len(refunds_for("88231")) == 1
    finished = [(e.step_id, e.data["worker"]) for e in store.events(run_id)
                if e.kind == "step_completed"]
    assert finished == [("s1", "w1"), ("s2", "w1"), ("s3", "w1" if s3_done_by_w1 else "w2")]
    code, listed, _ = cli(capsys, "runs")
    assert (" w1 " if s3_done_by_w1 else " w1, w2 ") in listed
    code, out, _ = cli(capsys, "recover", "--worker", "w1", "--yes")
    assert code == 0 and "no unfinished runs" in out


def test_recover_asks_first_and_a_dead_workers_run_can_still_be_cancelled(
        tmp_path, store, capsys, workers, monkeypatch):
    workers["w1"] = Worker(tmp_path, "w1")
    run_id = detach(capsys, write_plan(tmp_path, SUMS), "--pace", "2")
    await_event(store, run_id, "step_started", "s1")
    workers["w1"].stop(signal.SIGKILL)

    monkeypatch.setattr("builtins.input", lambda question: "n")
    code, out, _ = cli(capsys, "recover", "--worker", "w1")
    assert code == 1 and run_id in out and "Not recovered." in out

    asked = dispatch.cancel(store, run_id, timeout=0.5, poll_s=0.05)  # the button: only asks
    assert asked.status == "running"
    monkeypatch.setattr(dispatch, "WORKER_GONE_AFTER_S", 0.5)  # instead of waiting 30 s
    record = dispatch.cancel(store, run_id, timeout=0.5, poll_s=0.05)  # nobody answers
    assert record.status == "cancelled"
    assert "did not answer" in store.events(run_id)[-1].data["reason"]
    assert durable.workflow_status(run_id) == "CANCELLED"
    code, out, _ = cli(capsys, "recover", "--worker", "w1", "--yes")
    assert code == 0 and "no unfinished runs" in out


# ---- following a run ------------------------------------------------------------------------

def test_a_store_failure_while_printing_events_is_no_thread_traceback(monkeypatch):
    class FailingStore:
        def __init__(self) -> None:
            self.reads = threading.Semaphore(0)

        def events(self, run_id: str, after: int = 0) -> list:
            self.reads.release()
            raise StoreError("the run store at sqlite:///x failed: disk I/O error")

    crashed: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook: crashed.append(hook.exc_value))
    store, out = FailingStore(), io.StringIO()
    with printing_events(store, "run-1", out):
        for _ in range(3):  # it keeps reading after a failure
            assert store.reads.acquire(timeout=DEFAULT_TIMEOUT_S)
    assert crashed == [] and out.getvalue() == ""


# ---- one live worker per name ----------------------------------------------------------------

@pytest.fixture
def refused_worker(capsys, caplog, monkeypatch) -> Iterator[Callable[..., str]]:
    """``python -m core worker OPTIONS`` run in this process (``main``), expected to be
    refused before it serves (a served worker would run until stopped): exit code 1, no
    traceback, nothing on stdout, one error line, and nothing logged at ERROR, which the
    process would print too. Its stderr.

    The command sets SIGTERM's and SIGINT's handlers and the step permits before it is
    refused: this process has its own again after the test."""
    handlers = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    monkeypatch.setattr(durable_launcher, "_permits", durable_launcher._permits)

    def refused(*options: str) -> str:
        code, out, err = cli(capsys, "worker", *options)
        assert code == 1 and out == "", err
        assert err.count("\n") == 1, err
        assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        return err

    yield refused
    for number, handler in handlers.items():
        signal.signal(number, handler)


@on_both_backends
def test_a_name_is_held_by_one_live_worker_until_it_dies(tmp_path, workers, refused_worker,
                                                         monkeypatch):
    host = socket.gethostname()  # the default name
    workers[host] = Worker(tmp_path, host)

    # asked here, in this process: another process than the worker's, as a second worker is
    by_default = refused_worker()
    with monkeypatch.context() as in_zh:  # the worker started again below speaks English
        in_zh.setenv("PLANBOARD_LANG", "zh")
        in_chinese = refused_worker("--name", host)
    assert by_default.startswith(f"error: worker {host} is already running")
    assert in_chinese.startswith(f"错误：工作进程 {host} 已在")
    assert workers[host].proc.poll() is None  # the first one serves on, untouched

    workers[host].stop(signal.SIGKILL)  # the hold dies with the process
    workers[host] = Worker(tmp_path, host)
    assert "serving runs" in workers[host].out.read_text()


# ---- one-line errors --------------------------------------------------------------------------

def test_a_worker_whose_postgresql_is_unreachable_says_so_in_one_line(refused_worker,
                                                                      monkeypatch, caplog):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("PLANBOARD_DB_URL", f"postgres://planboard:secret@127.0.0.1:{port}/runs")
    refused = refused_worker("--name", "w1")
    assert refused.startswith("error: worker w1 cannot start: ")
    assert "secret" not in refused + caplog.text


@pytest.mark.parametrize("argv", [("worker", "--name", "two words"),
                                  ("worker", "--name", "embedded:vm:1"),
                                  ("recover", "--worker", "")])
def test_a_bad_worker_name_is_one_line(capsys, argv):
    code, out, err = cli(capsys, *argv)
    assert code == 1 and out == ""
    assert err.startswith("error: Invalid worker name") and err.count("\n") == 1


def test_a_bad_execution_mode_is_one_line_in_the_cli_language(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PLANBOARD_EXECUTION", "cluster")
    plan = write_plan(tmp_path, SUMS)
    code, _, err = cli(capsys, "run", "--plan", plan, "--yes", "--offline")
    assert code == 1 and err.count("\n") == 1
    assert "'cluster'" in err and "embedded" in err and "workers" in err
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    code, _, err = cli(capsys, "run", "--plan", plan, "--yes", "--offline")
    assert code == 1 and err.startswith("错误：PLANBOARD_EXECUTION") and err.count("\n") == 1


def test_detach_with_no_worker_ever_started_is_one_line_and_records_nothing(
        tmp_path, store, capsys):
    code, _, err = cli(capsys, "run", "--plan", write_plan(tmp_path, SUMS), "--yes",
                       "--offline", "--detach")
    assert code == 1 and err.count("\n") == 1
    assert "start a worker" in err and "python -m core worker" in err
    assert store.list_runs() == []
