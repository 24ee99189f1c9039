"""PostgreSQL restarted under a run, or away for ten seconds under a worker: the run goes on
once the database is back, without a person resuming it; the command that started it ends
with its real status; a worker says once that the database went away and once that it is
back, with no traceback.

The module starts a throwaway cluster of its own (tests/support/pg.py) and restarts it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import partial

import pytest

from tests.support.core_processes import CoreProcess
from tests.support.faults import REFUND_REQUEST, TRIAL_TIMEOUT_S, TRIALS, WAIT_S, Trial, tracebacks
from tests.support.pg import PostgresCluster, pg_binaries, running_cluster

pytestmark = [pytest.mark.faults, pytest.mark.timeout(TRIAL_TIMEOUT_S)]

OUTAGE_S = 10.0
MAX_OUTAGE_LINES = 10


def said_by(child: CoreProcess, since: tuple[int, int] = (0, 0)) -> list[str]:
    """The lines ``child`` has written: its log (stderr), then its output, each from the
    line ``since`` gives (what :func:`lines_of` counted earlier)."""
    log, out = child.stderr.read_text().splitlines(), child.output().splitlines()
    return log[since[0]:] + out[since[1]:]


def lines_of(child: CoreProcess) -> tuple[int, int]:
    """How many lines ``child`` has written so far to its log and to its output."""
    return len(child.stderr.read_text().splitlines()), len(child.output().splitlines())


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    """A cluster for this module alone: restarting it disturbs no other test."""
    binaries = pg_binaries()
    if binaries is None:
        pytest.skip("PostgreSQL is not installed: apt-get install postgresql")
    with running_cluster(binaries) as started:
        yield started


@pytest.mark.parametrize("number", range(TRIALS))
@pytest.mark.parametrize("steps", ["embedded", "worker"])
def test_a_database_restart_during_a_run_ends_completed_without_a_resume(
        steps, number, cluster, tmp_path):
    trial = Trial(tmp_path, db_url=cluster.url(cluster.create_database()))
    try:
        if steps == "worker":
            worker = trial.start("worker", "worker", "--name", f"w{number}")
            trial.processes.await_output(worker, "serving runs", WAIT_S)
        child = trial.start_refund(0.5, *(["--detach"] if steps == "worker" else []))
        if steps == "worker":
            assert trial.finish(child).code == 0, trial.report()
            child = None
        trial.processes.await_true(partial(trial.reached, "s1 started"), "s1 to start",
                                   WAIT_S)
        cluster.restart()
        run_id = trial.only_run()
        if child is not None:
            ended = trial.finish(child)
            assert ended.code == 0, trial.report()
            assert ended.json["status"] == "completed"
            assert tracebacks(ended.err) == 0, trial.report()
        trial.processes.await_true(lambda: trial.runs()[run_id] == "completed",
                                   "the run to complete", WAIT_S)
        kinds = [kind for kind, _ in trial.events(run_id)]
        assert "paused" not in kinds and "resumed" not in kinds
        assert trial.refunds() == 1
    finally:
        trial.kill_all()


def test_a_ten_second_outage_costs_a_worker_a_line_when_it_goes_and_one_when_it_is_back(
        cluster, tmp_path):
    trial = Trial(tmp_path, db_url=cluster.url(cluster.create_database()))
    try:
        worker = trial.start("worker", "worker", "--name", "steady")
        trial.processes.await_output(worker, "serving runs", WAIT_S)
        submitted = trial.command("submit", "run", REFUND_REQUEST, "--offline", "--yes",
                                  "--detach", "--pace", "2", "--json")
        assert submitted.code == 0, trial.report()
        trial.processes.await_true(partial(trial.reached, "s1 started"), "s1 to start",
                                   WAIT_S)
        before = lines_of(worker)
        cluster.stop_now()
        time.sleep(OUTAGE_S)  # the outage itself: nothing to wait for
        cluster.start_again()
        run_id = trial.only_run()
        trial.processes.await_true(lambda: trial.runs()[run_id] == "completed",
                                   "the run to complete", WAIT_S, watch=[worker])
        said = said_by(worker, since=before)
        assert len(said) <= MAX_OUTAGE_LINES, "\n".join(said)
        assert tracebacks("\n".join(said)) == 0, "\n".join(said)
        assert any("back" in line for line in said), "\n".join(said)
        assert trial.refunds() == 1
    finally:
        trial.kill_all()
