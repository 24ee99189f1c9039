"""Follow-ups of a run a worker executed are refused in one line, for now: run here they
would keep the run's finished workflow id (steering, crash detection and cancel would go
astray). Through the Runner, the command line and the dashboard's follow-up box."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.base.messages import render
from core.cli.main import main
from core.errors import StoreError
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.runner import Runner
from core.store.run_store import RunStore
from core.tools.catalog import default_registry
from tests.test_ui_app import fresh_runner, open_app

RUN_ID = "workerrun01"


@pytest.fixture
def runner() -> Iterator[Runner]:
    """The app's runner on this test's PLANBOARD_HOME."""
    yield from fresh_runner()


def completed_worker_run(store: RunStore) -> str:
    """A run a worker executed to its end, as the store holds it."""
    step = Step(id="s1", description="add up", tool="calculate", args={"expression": "2+3"})
    step.advance("running")
    step.advance("completed")
    step.result = {"value": 5}
    store.create_run("add 2 and 3", {"offline": True}, Plan(goal="add 2 and 3", steps=[step]),
                     run_id=RUN_ID, workflow_id=RUN_ID)
    store.set_status(RUN_ID, "running")
    store.finish_run(RUN_ID, "completed", answer="5", usage=store.get_run(RUN_ID).usage,
                     plans=[store.get_run(RUN_ID).plan])
    return RUN_ID


def unchanged(store: RunStore, run_id: str, events: int) -> bool:
    record = store.get_run(run_id)
    return (record.status, record.plan.version, len(store.events(run_id))) == (
        "completed", 1, events)


def test_the_runner_refuses_a_follow_up_of_a_worker_run(runner):
    run_id = completed_worker_run(runner.store)
    events = len(runner.store.events(run_id))

    with pytest.raises(StoreError) as refused:
        runner.follow_up(run_id, "also multiply by 4", engine=Engine(default_registry()))

    for language, words in (("en", "executed by a worker"), ("zh", "由工作进程执行")):
        text = render(refused.value, language)
        assert run_id in text and words in text and "\n" not in text
    assert unchanged(runner.store, run_id, events)


def test_the_followup_command_refuses_it_before_planning(store, capsys):
    run_id = completed_worker_run(store)
    events = len(store.events(run_id))

    code = main(["followup", run_id, "also multiply by 4", "--yes", "--offline"])

    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""  # no new plan was made, nor shown
    assert captured.err.startswith(f"error: run {run_id} was executed by a worker")
    assert captured.err.count("\n") == 1
    assert unchanged(store, run_id, events)


def test_the_dashboards_follow_up_box_shows_the_refusal(runner):
    run_id = completed_worker_run(runner.store)
    events = len(runner.store.events(run_id))
    at = open_app("pages/run.py", query={"run": run_id}, language="en")

    at.text_area(key="followup_text").set_value("also multiply by 4").run()
    at.button(key="followup_submit").click().run()

    assert not at.exception, [e.value for e in at.exception]
    assert any("executed by a worker" in error.value for error in at.error)
    assert unchanged(runner.store, run_id, events)
