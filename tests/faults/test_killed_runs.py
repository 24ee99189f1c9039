"""A ``run`` SIGKILLed at any moment, the gap between recording the run and starting its
workflow included, leaves no run waiting for a process that is gone: the next command
(or the dashboard's run page) records it interrupted, ``resume`` completes it, and the
shop refunds once.
"""

from __future__ import annotations

import random
from functools import partial

import pytest

from core.runs.live_views import RunViews
from core.store.run_store import RunStore
from tests.support.faults import TRIAL_TIMEOUT_S, TRIALS, WAIT_S, Trial, tracebacks
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.faults, pytest.mark.timeout(TRIAL_TIMEOUT_S),
              pytest.mark.usefixtures("dbos_of_the_module")]

# where a kill lands, as the store shows it: the run recorded (its workflow not started yet),
# then each step of the refund running or done
MOMENTS = ("recorded", "s1 started", "s2 started", "s2 completed", "s3 started")
STUCK = {"planned", "running", "waiting_confirmation"}


def killed_at(tmp_path, moment: str, delay_s: float) -> Trial:
    """A trial whose ``run`` was SIGKILLed ``delay_s`` after ``moment``. At "recorded" the
    kill must land before the workflow starts (about 35 ms): the run is frozen (SIGSTOP) the
    moment the store shows it, and the trial made again when its workflow had started."""
    for attempt in range(5):
        trial = Trial(tmp_path / f"attempt{attempt}")
        child = trial.start_refund(0.3)
        trial.stop_when(child, partial(trial.reached, moment), delay_s)
        child.kill()
        if moment != "recorded" or not trial.workflow_recorded(trial.only_run()):
            return trial
    raise AssertionError("five kills in a row came after the workflow started")


@pytest.mark.parametrize("number", range(TRIALS))
def test_a_run_killed_at_any_moment_is_recorded_interrupted_and_resumes(number, tmp_path):
    moment = MOMENTS[number % len(MOMENTS)]
    delay_s = 0 if moment == "recorded" else random.Random(number).uniform(0, 0.2)
    trial = killed_at(tmp_path, moment, delay_s)
    try:
        run_id = trial.only_run()
        listed = trial.command("runs", "runs", "--json", timeout=WAIT_S)
        assert listed.code == 0 and tracebacks(listed.err) == 0, trial.report()
        statuses = {row["run_id"]: row["status"] for row in listed.json}
        assert statuses == {run_id: "interrupted"}, trial.report()

        resumed = trial.command("resume", "resume", run_id, "--yes", "--json", timeout=WAIT_S)
        assert resumed.code == 0, trial.report()
        assert resumed.json["status"] == "completed"
        assert not STUCK & set(trial.runs().values())
        assert trial.refunds() == 1
    finally:
        trial.kill_all()


def test_the_dashboard_shows_a_run_killed_before_its_workflow_started_as_interrupted(
        tmp_path, monkeypatch):
    trial = killed_at(tmp_path, "recorded", 0)
    monkeypatch.setenv("PLANBOARD_HOME", str(trial.home))  # this process is the dashboard
    run_id = trial.only_run()
    views, store = RunViews(fresh_s=0.0), RunStore()
    try:
        assert views.current(store, run_id).record.status == "planned"
        wait_until(lambda: views.current(store, run_id).record.status == "interrupted",
                   what="the run page to show the run interrupted")
        assert "resume" in views.current(store, run_id).controls
    finally:
        store.close()
        trial.kill_all()
