"""Follow-ups of a run a worker executed: a new DBOS workflow of the run (``{run_id}.<hex6>``)
runs only the new steps. Under PLANBOARD_EXECUTION=workers it goes to the runs queue and a
worker executes it; in the default embedded mode this process does. Through the Runner, the
command line and the dashboard's follow-up box.

This process's DBOS serves the runs queue as worker ``w1`` (its step events name it), so the
original run and the follow-up both execute here without a worker subprocess.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from core.cli.main import main
from core.cli.runs import step_workers
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.runs import dispatch, durable
from core.store.run_store import RunStore
from core.tools.toolsets import default_registry
from tests.support.app import open_app, wait_for
from tests.support.durable_runs import await_status, await_workflow, refund_plan
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S

WORKER = "w1"
FOLLOW_UP = "also calculate 4*5"  # the offline rules map it to a calculate step: no model
OLD_STEPS = ("s1", "s2", "s3")  # the refund plan: look up, refund (a side effect), add up
NEW_STEPS = ("s4", "s5")  # 4*5, then the follow-up's answer


@pytest.fixture
def worker(dbos_of_the_module, isolated_environment, monkeypatch) -> str:
    """Workers mode, with this process's DBOS serving the runs queue as worker ``w1``."""
    import core.runs.workflow  # noqa: F401  registers the run workflow

    monkeypatch.setenv("PLANBOARD_EXECUTION", "workers")
    return durable.worker_name(durable.launch(durable.worker_executor_id(WORKER)).executor_id)


def completed_worker_run(store: RunStore) -> str:
    """A refund run the worker executed to its end (its workflow finished too)."""
    run_id = dispatch.submit(store, "refund order 88231", refund_plan(),
                             settings_public={"offline": True},
                             options=RunOptions(confirm_side_effects=False))
    assert await_status(store, run_id, {"completed", "failed"}) == "completed"
    assert await_workflow(run_id) == "SUCCESS"
    assert step_workers(store.events(run_id)) == [WORKER]
    assert len(refunds_for("88231")) == 1
    return run_id


def step_events(store: RunStore, run_id: str) -> list[RunEvent]:
    return [event for event in store.events(run_id) if event.kind.startswith("step_")]


def assert_followed_up_once(store: RunStore, run_id: str) -> str:
    """The run ended completed with version 2: every step started exactly once (the old
    ones in the first workflow only), the new ones ran, the refund was not made again, and
    the run is now recorded under a new workflow of its own, which finished. Returns that
    workflow's id."""
    record = store.get_run(run_id)
    assert record.status == "completed", record.status
    assert record.plan.version == 2
    assert [step.id for step in record.plan.steps] == [*OLD_STEPS, *NEW_STEPS]
    assert all(step.status == "completed" for step in record.plan.steps)
    assert record.plan.step("s4").result["value"] == 20
    started = Counter(e.step_id for e in step_events(store, run_id) if e.kind == "step_started")
    assert started == Counter(OLD_STEPS + NEW_STEPS)
    assert len(refunds_for("88231")) == 1
    assert re.fullmatch(rf"{run_id}\.[0-9a-f]{{6}}", record.workflow_id or "")
    assert await_workflow(record.workflow_id) == "SUCCESS"
    assert durable.workflow_status(run_id) == "SUCCESS"  # the first one is left as it ended
    return record.workflow_id


def workers_of(store: RunStore, run_id: str, step_ids: tuple[str, ...]) -> set[str | None]:
    return {event.data.get("worker") for event in step_events(store, run_id)
            if event.step_id in step_ids}


# ---- the Runner ------------------------------------------------------------------------------

def test_a_worker_executes_the_follow_up_of_its_run_from_the_queue(worker, runner):
    run_id = completed_worker_run(runner.store)

    plan = runner.follow_up(run_id, FOLLOW_UP, engine=Engine(default_registry()))

    assert plan.version == 2 and plan.step("s4").args == {"expression": "4*5"}
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    workflow_id = assert_followed_up_once(runner.store, run_id)
    assert durable.workflow_state(workflow_id) == ("SUCCESS", WORKER)
    assert workers_of(runner.store, run_id, NEW_STEPS) == {WORKER}
    replanned = [e for e in runner.store.events(run_id) if e.kind == "replanned"]
    assert [(e.data["source"], e.data["reason"]) for e in replanned] == [("follow-up", FOLLOW_UP)]


def test_in_embedded_mode_the_follow_up_of_a_worker_run_runs_in_this_process(
        worker, runner, monkeypatch):
    run_id = completed_worker_run(runner.store)
    monkeypatch.delenv("PLANBOARD_EXECUTION")
    heard: list[RunEvent] = []

    runner.follow_up(run_id, FOLLOW_UP, engine=Engine(default_registry()), on_event=heard.append)

    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    workflow_id = assert_followed_up_once(runner.store, run_id)
    assert durable.workflow_state(workflow_id) == ("SUCCESS", durable.embedded_executor_id())
    # this process's listener heard the new steps; no worker ran them, the old ones keep w1
    assert {(e.kind, e.step_id) for e in heard} >= {
        ("step_completed", "s4"), ("step_completed", "s5")}
    assert workers_of(runner.store, run_id, NEW_STEPS) == {None}
    assert workers_of(runner.store, run_id, OLD_STEPS) == {WORKER}


# ---- the command line ------------------------------------------------------------------------

def test_the_followup_command_shows_the_new_version_a_worker_runs(worker, store, capsys):
    run_id = completed_worker_run(store)

    code = main(["followup", run_id, FOLLOW_UP, "--yes", "--offline"])

    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Plan v2:" in captured.out and "s4: " in captured.out
    assert "\ncompleted: " in captured.out
    assert_followed_up_once(store, run_id)
    assert workers_of(store, run_id, NEW_STEPS) == {WORKER}

    assert main(["show", run_id]) == 0
    shown = capsys.readouterr().out
    for step_id in NEW_STEPS:
        assert re.search(rf"step_completed {step_id} \(on {WORKER}\)$", shown, re.MULTILINE)


def test_the_followup_command_prints_the_progress_of_the_worker_run(worker, store, capsys):
    run_id = completed_worker_run(store)

    assert main(["followup", run_id, FOLLOW_UP, "--yes", "--offline"]) == 0

    out = capsys.readouterr().out
    for step_id in NEW_STEPS:  # as in embedded mode: "  ✓ s4 completed direct"
        assert re.search(rf"^  \S {step_id} completed", out, re.MULTILINE), out


# ---- the dashboard -----------------------------------------------------------------------------


def _status(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Status:**"))


def test_the_dashboards_follow_up_box_starts_the_new_version_on_a_worker(worker, app_runner):
    run_id = completed_worker_run(app_runner.store)
    at = open_app("pages/run.py", query={"run": run_id}, language="en")

    at.text_area(key="followup_text").set_value(FOLLOW_UP).run()
    at.button(key="followup_submit").click().run()

    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert "Version 2 is running with the follow-up." in [s.value for s in at.success]
    assert app_runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: "Completed" in _status(a))
    assert any(e.label == "Version 1 → 2 · follow-up" for e in at.expander)
    assert_followed_up_once(app_runner.store, run_id)
    assert workers_of(app_runner.store, run_id, NEW_STEPS) == {WORKER}
