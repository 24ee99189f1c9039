"""The engine's record, ``dbos.sqlite``, deleted: every command answers in one clear line
(JSON under ``--json``) saying what was lost and what to do; the commands that need only
the run store still work; a run whose record vanished while it ran does not pass for
plainly completed; and starting afresh lets the runs go on.
"""

from __future__ import annotations

import random
from functools import partial

import pytest

from tests.support.faults import REFUND_REQUEST, TRIAL_TIMEOUT_S, TRIALS, WAIT_S, Trial, tracebacks

pytestmark = [pytest.mark.faults, pytest.mark.timeout(TRIAL_TIMEOUT_S)]

RAW_SQL = ("[SQL:", "no such table", "sqlalche.me")


def lose_engine_file(trial: Trial) -> None:
    (trial.home / "dbos.sqlite").unlink()


def clean(text: str) -> bool:
    """No traceback and no raw SQL."""
    return tracebacks(text) == 0 and not any(raw in text for raw in RAW_SQL)


@pytest.mark.parametrize("number", range(TRIALS))
def test_after_the_engine_file_is_lost_commands_answer_and_starting_afresh_goes_on(
        number, tmp_path):
    trial = Trial(tmp_path)
    try:
        child = trial.start_refund(0.3)
        trial.stop_when(child, partial(trial.reached, "s1 started"),
                        random.Random(number).uniform(0, 0.3))
        child.kill()
        run_id = trial.only_run()
        lose_engine_file(trial)

        listed = trial.command("runs", "runs", "--json")
        assert listed.code == 0 and clean(listed.err), trial.report()
        assert [row["run_id"] for row in listed.json] == [run_id]
        shown = trial.command("show", "show", run_id, "--json")
        assert shown.code == 0 and clean(shown.err), trial.report()
        assert shown.json["run_id"] == run_id
        for label, args in (("new run", ["run", REFUND_REQUEST, "--offline", "--yes",
                                         "--json"]),
                            ("resume", ["resume", run_id, "--yes", "--json"])):
            refused = trial.command(label, *args)
            assert refused.code == 1 and clean(refused.out + refused.err), trial.report()
            error = refused.json["error"]
            assert error["code"] == "run.record_lost", trial.report()
            assert "dbos.sqlite" in error["message"] and "--afresh" in error["message"]

        afresh = trial.command("afresh", "recover", "--afresh", "--yes")
        assert afresh.code == 0 and clean(afresh.err), trial.report()
        resumed = trial.command("resume", "resume", run_id, "--yes", "--json", timeout=WAIT_S)
        assert resumed.code == 0, trial.report()
        assert resumed.json["status"] == "completed"
        assert trial.refunds() == 1
    finally:
        trial.kill_all()


@pytest.mark.parametrize("number", range(TRIALS))
def test_a_run_whose_engine_file_vanished_while_it_ran_does_not_pass_for_plainly_completed(
        number, tmp_path):
    trial = Trial(tmp_path)
    try:
        child = trial.start_refund(0.5)
        trial.processes.await_true(partial(trial.reached, "s1 started"), "s1 to start",
                                   WAIT_S)
        lose_engine_file(trial)
        ended = trial.finish(child)
        assert clean(ended.out + ended.err), trial.report()
        summary = ended.json
        assert summary["status"] != "completed" or summary.get("warnings"), trial.report()
        if summary["status"] == "completed":
            assert ended.code == 0
            assert any("dbos.sqlite" in warning for warning in summary["warnings"])
        assert trial.refunds() <= 1
    finally:
        trial.kill_all()
