"""``run REQUEST --yes --detach`` only records the request and puts it on the runs queue:
the submitting process loads no tool and asks no model; the worker that takes the run
drafts its plan (with its own tools and model), approves it as the person said, runs it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.runs import durable
from core.store.run_store import RunStore
from tests.support.core_processes import CoreProcesses
from tests.support.durable_runs import await_status
from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI, text

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

REQUEST = "Where is order 88231?"
PLAN = json.dumps({"goal": REQUEST, "steps": [
    {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
     "args": {"order_id": "88231"}, "depends_on": []},
    {"id": "s2", "description": "Tell the user where the order is", "tool": None,
     "depends_on": ["s1"]}]})


def _model(body: dict) -> object:
    """The planner asks for JSON: the plan; the answer step: a sentence."""
    if body.get("response_format"):
        return text(PLAN)
    return text("Order 88231 was delivered and signed for on 2026-06-22.")


def test_a_detached_request_is_planned_by_the_worker_not_by_the_submitter(
        launched, tmp_path, monkeypatch):
    durable.shutdown()  # the launch made DBOS's tables; no process serves the queue now
    marks = tmp_path / "toolsets-loaded-by"
    with FakeOpenAI(responder=_model) as server:
        env = {**os.environ, "OPENAI_API_KEY": DEFAULT_KEY, "OPENAI_BASE_URL": server.base_url,
               "PLANBOARD_PLANNER_MODEL": "gpt-4o-mini",
               "PLANBOARD_EXECUTOR_MODEL": "gpt-4o-mini",
               "PLANBOARD_TOOLSETS": "builtin,demo,tests.toolsets.marked",
               "MARKED_TOOLSET_FILE": str(marks)}
        processes = CoreProcesses(tmp_path / "processes", env)
        try:
            submitted = processes.run_json(
                {"submit": ["run", REQUEST, "--yes", "--detach", "--json"]})["submit"]
            run_id = submitted["run_id"]
            store = RunStore()
            try:
                record = store.get_run(run_id)
                # recorded and queued: no plan yet, no tool loaded, no model asked
                assert (submitted["status"], record.status, record.plan) == (
                    "planned", "planned", None)
                assert durable.workflow_status(run_id) == "ENQUEUED"
                assert not marks.exists()
                assert server.chat_bodies == []

                worker = processes.start("worker", "worker", "--name", "drafter")
                status = await_status(store, run_id, {"completed", "failed"}, 180)
                assert status == "completed", processes.report()
                record = store.get_run(run_id)
                versions = store.plan_versions(run_id)
            finally:
                durable.shutdown()
                store.close()
        finally:
            processes.kill_all()

    # the worker drafted the plan (with the planner's call) and ran it as drafted
    assert [(v.version, v.source) for v in versions] == [(1, "draft")]
    assert [step.id for step in record.plan.steps] == ["s1", "s2"]
    assert {step.status for step in record.plan.steps} == {"completed"}
    assert record.options["approved_version"] == 1
    assert record.options["planning_usage"]["llm_calls"] == 1
    assert record.options["estimate"]["llm_calls"] == 1  # the answer; the lookup asks none
    assert server.chat_bodies[0].get("response_format")  # the planner's, then the answer's
    assert set(marks.read_text().split()) == {str(worker.popen.pid)}  # the worker's only


def test_a_detached_request_the_planner_has_questions_about_fails_naming_them(
        launched, tmp_path, isolated_environment):
    from core.execution.options import RunOptions
    from core.runs import dispatch
    from core.runs.workflow import run_workflow  # noqa: F401  registers the workflow

    store = RunStore()
    try:
        # offline, the rules ask which order "refund my order" means
        run_id = dispatch.submit_request(store, "refund my order",
                                         settings_public={"offline": True},
                                         options=RunOptions(confirm_side_effects=False))
        assert await_status(store, run_id, {"completed", "failed"}) == "failed"
        finished = store.events(run_id)[-1]
    finally:
        store.close()
    assert finished.kind == "run_finished"
    assert finished.data["error"].startswith(
        "The request needs more detail before it can be planned (")


def test_an_empty_detached_request_is_refused_before_anything_is_recorded(
        tmp_path, capsys):
    from core.cli.main import main

    assert main(["run", "  ", "--yes", "--detach", "--offline"]) == 1
    assert "The request is empty" in capsys.readouterr().err
    assert not Path(os.environ["PLANBOARD_HOME"], "planboard.db").exists()
