"""Two people resume one killed run at once: exactly one continues it, and the other is told
``run.busy``, naming the process that continues it; on the command line (two ``resume``
processes) and on the dashboard (two tabs of one process pressing Resume).
"""

from __future__ import annotations

import random
import threading
from functools import partial

import pytest

from core.base.messages import Message
from core.errors import StoreError
from core.runs import durable
from core.runs.runner import open_runner
from core.runs.session import build_engine
from tests.support.faults import TRIAL_TIMEOUT_S, TRIALS, WAIT_S, Trial, tracebacks

pytestmark = [pytest.mark.faults, pytest.mark.timeout(TRIAL_TIMEOUT_S),
              pytest.mark.usefixtures("dbos_of_the_module")]

PACE_S = 1.0  # the run's pace: the winner is still at work when the loser asks


def killed_mid_run(folder, seed: int) -> Trial:
    """A trial whose ``run`` was SIGKILLed while its first step ran."""
    trial = Trial(folder)
    child = trial.start_refund(PACE_S)
    trial.stop_when(child, partial(trial.reached, "s1 started"),
                    random.Random(seed).uniform(0, 0.5))
    child.kill()
    return trial


@pytest.mark.parametrize("number", range(TRIALS))
def test_of_two_racing_resume_commands_one_wins_and_the_other_is_told(number, tmp_path):
    trial = killed_mid_run(tmp_path, number)
    try:
        run_id = trial.only_run()
        racers = [trial.start(f"resume{n}", "resume", run_id, "--yes", "--json")
                  for n in range(2)]
        ended = [trial.finish(racer) for racer in racers]
        assert all(tracebacks(end.err) == 0 for end in ended), trial.report()
        winners = [n for n, end in enumerate(ended) if end.code == 0]
        assert len(winners) == 1, trial.report()
        winner, loser = racers[winners[0]], ended[1 - winners[0]]
        assert ended[winners[0]].json["status"] == "completed"
        assert loser.code == 1, trial.report()
        error = loser.json["error"]
        assert error["code"] == "run.busy", trial.report()
        assert f":{winner.popen.pid}:" in error["message"]  # the winner's executor id
        assert trial.runs() == {run_id: "completed"}
        kinds = [kind for kind, _ in trial.events(run_id)]
        assert kinds.count("resumed") == 1
        assert trial.refunds() == 1
    finally:
        trial.kill_all()


def test_of_two_tabs_resuming_one_killed_run_one_continues_it_and_the_other_is_told(
        tmp_path, monkeypatch):
    trial = killed_mid_run(tmp_path, 0)
    monkeypatch.setenv("PLANBOARD_HOME", str(trial.home))  # this process is the dashboard
    run_id = trial.only_run()
    runner = open_runner()  # as the dashboard's runner opens: the crash is recorded
    try:
        assert runner.store.get_run(run_id).status == "interrupted"
        engine = build_engine(offline=True)
        barrier = threading.Barrier(2)
        told: list[StoreError] = []

        def press_resume() -> None:
            barrier.wait(WAIT_S)
            try:
                runner.resume(run_id, engine=engine)
            except StoreError as exc:
                told.append(exc)

        tabs = [threading.Thread(target=press_resume) for _ in range(2)]
        for tab in tabs:
            tab.start()
        for tab in tabs:
            tab.join(WAIT_S)
        assert len(told) == 1, told
        assert isinstance(told[0].message, Message) and told[0].message.code == "run.busy"
        assert durable.embedded_executor_id() in str(told[0])  # this very process
        assert runner.wait(run_id, timeout=WAIT_S).status == "completed"
        assert trial.refunds() == 1
    finally:
        runner.close()
        trial.kill_all()
