"""Knowledge and direct answers are runs like the others: DBOS workflows whose model calls and
tool calls are recorded steps, recorded in the store with their mode, exported, steered
through their mailbox and resumed by the one ``resume``.

A crash is a real SIGKILL of ``python -m core run`` while the fake OpenAI server holds the
answer's model call; the tools count their calls in a file (tests/toolsets/counted.py), so
that a tool call the killed process made and a resume repeated would show.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dbos import DBOS

from core.base.messages import render
from core.cli.main import main
from core.errors import ToolError
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.planning.router import person_route
from core.runs import durable
from core.runs.answers import AnswerTools
from core.runs.export import export_run
from core.runs.runner import Runner
from core.store.run_store import RunStore
from core.tools.toolsets import default_registry
from tests.support.app import open_app, wait_for
from tests.support.core_processes import CoreProcesses
from tests.support.durable_runs import await_workflow
from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI, FakeReply, text, tool_call
from tests.support.fakes import ScriptedChatModel, tool_reply
from tests.support.pg import on_both_backends
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S
from tests.toolsets import counted, greetings

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

HANDBOOK_ANSWER = "The help desk is open from 9:00 to 17:00 on weekdays."
TICKET_ANSWER = "Ticket T-7 is waiting for parts."
LOST = "(the killed process never reads this reply)"


def recorded_steps(workflow_id: str) -> list[str]:
    """The names of the workflow's recorded steps, its mailbox reads aside."""
    return [step["function_name"] for step in DBOS.list_workflow_steps(workflow_id)
            if not step["function_name"].startswith("DBOS.")]


def step_events(store: RunStore, run_id: str) -> list[tuple[str, str | None]]:
    return [(e.kind, e.step_id) for e in store.events(run_id)]


def cli_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


class HeldServer:
    """The fake endpoint: it answers the chat calls with ``replies`` in order, but the
    ``held``-th call (1-based) waits until :meth:`release` before it answers (a process
    killed meanwhile never reads that reply)."""

    def __init__(self, replies: list[FakeReply], held: int) -> None:
        self.replies, self.held = list(replies), held
        self.arrived = threading.Event()
        self._released = threading.Event()
        self._count = 0
        self.server = FakeOpenAI(responder=self._reply)

    def _reply(self, body: dict) -> FakeReply:
        self._count += 1
        if self._count == self.held:
            self.arrived.set()
            self._released.wait(DEFAULT_TIMEOUT_S)
        return self.replies.pop(0)

    def release(self) -> None:
        self._released.set()


@pytest.fixture
def held_server() -> Iterator[Callable[[list[FakeReply], int], HeldServer]]:
    made: list[HeldServer] = []

    def start(replies: list[FakeReply], held: int) -> HeldServer:
        made.append(HeldServer(replies, held))
        made[-1].server.start()
        return made[-1]

    yield start
    for held in made:
        held.release()
        held.server.stop()


def crash_mid_answer(tmp_path: Path, monkeypatch, server: HeldServer, request: str,
                     mode: str) -> str:
    """Run ``python -m core run REQUEST --mode MODE`` against ``server`` with the counted
    tools, SIGKILL it while ``server`` holds its model call, and return the run's id."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", DEFAULT_KEY)
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin,tests.toolsets.counted")
    monkeypatch.setenv(counted.CALLS_ENV, str(tmp_path / "calls.txt"))
    processes = CoreProcesses(tmp_path / "processes", dict(os.environ))
    try:
        child = processes.start("answer", "run", request, "--mode", mode, "--yes", "--json")
        processes.await_true(server.arrived.is_set, "the answer's model call",
                             DEFAULT_TIMEOUT_S, watch=[child])
        child.kill()
    finally:
        processes.kill_all()
        server.release()
    store = RunStore()
    (run,) = store.list_runs()
    store.close()
    return run.run_id


# ---- a crash mid-answer, then resume -------------------------------------------------------

@on_both_backends
def test_sigkill_during_a_knowledge_answer_leaves_it_interrupted_and_resume_finishes_it(
        tmp_path, monkeypatch, capsys, held_server, db_url):
    server = held_server([text(LOST), text(HANDBOOK_ANSWER)], held=1)
    run_id = crash_mid_answer(tmp_path, monkeypatch, server, "When is the help desk open?",
                              "knowledge")
    try:
        assert counted.calls() == ["search_handbook"]  # made and recorded before the kill
        _, shown = cli_json(capsys, "show", run_id, "--json")
        assert shown["status"] == "interrupted"
        code, result = cli_json(capsys, "resume", run_id, "--yes", "--json")
        assert (code, result["status"], result["answer"]) == (0, "completed", HANDBOOK_ANSWER)
        assert counted.calls() == ["search_handbook"]  # the recorded search was not repeated
        held, asked = server.server.chat_bodies
        assert asked["messages"] == held["messages"]  # it asked from the recorded search
        assert "9:00 to 17:00" in asked["messages"][0]["content"]
        assert recorded_steps(run_id) == ["load", "tool:s1:search_handbook", "model:1"]
        store = RunStore()
        events = step_events(store, run_id)
        assert events.count(("step_completed", "s1")) == 1
        assert [k for k, _ in events if k in {"interrupted", "resumed", "run_finished"}] == [
            "interrupted", "resumed", "run_finished"]
        record = store.get_run(run_id)
        assert record.options["mode"] == "knowledge"
        assert [(s.id, s.tool, s.status) for s in record.plan.steps] == [
            ("s1", "search_handbook", "completed"), ("s2", None, "completed")]
        store.close()
    finally:
        durable.shutdown()  # before the test's database goes


def test_sigkill_during_a_direct_answer_resumes_without_calling_its_tool_again(
        tmp_path, monkeypatch, capsys, held_server):
    server = held_server([tool_call("lookup_ticket", {"ticket_id": "T-7"}), text(LOST),
                          text(TICKET_ANSWER)], held=2)
    run_id = crash_mid_answer(tmp_path, monkeypatch, server, "What is the status of ticket T-7?",
                              "direct")
    assert counted.calls() == ["lookup_ticket"]
    code, result = cli_json(capsys, "resume", run_id, "--yes", "--json")
    assert (code, result["status"], result["answer"]) == (0, "completed", TICKET_ANSWER)
    assert counted.calls() == ["lookup_ticket"]  # recorded before the kill: not called again
    _, held, asked = server.server.chat_bodies  # the first model call was not made again
    assert asked["messages"] == held["messages"]
    assert "waiting for parts" in asked["messages"][-1]["content"]
    assert recorded_steps(run_id) == ["load", "model:1", "tool:s1:lookup_ticket", "model:2"]
    steps = result["plan"]["steps"]
    assert [(s["tool"], s["status"]) for s in steps] == [("lookup_ticket", "completed"),
                                                         (None, "completed")]


# ---- an answer is a workflow, recorded and exported like any run ---------------------------

def test_a_direct_answer_is_a_workflow_recorded_with_its_mode_and_exported(registry, runner):
    # the rules read the order number: its lookup is made without asking the model
    model = ScriptedChatModel(["Order 88231 was delivered on 2026-06-22."])
    run_id = runner.answer("check order 88231", person_route("direct"),
                           engine=Engine(registry, model), settings_public={"offline": False})
    record = runner.wait(run_id, DEFAULT_TIMEOUT_S)
    assert record.status == "completed" and record.workflow_id == run_id
    assert record.answer == "Order 88231 was delivered on 2026-06-22."
    assert (record.options["mode"], record.options["route_reason"]) == (
        "direct", "chosen by a person: direct")
    assert recorded_steps(run_id) == ["load", "tool:s1:query_order", "model:1"]
    assert record.usage.llm_calls == 1
    assert [(s.id, s.tool, s.depends_on) for s in record.plan.steps] == [
        ("s1", "query_order", []), ("s2", None, ["s1"])]
    assert step_events(runner.store, run_id) == [
        ("run_started", None), ("step_started", "s1"), ("step_completed", "s1"),
        ("step_started", "s2"), ("step_completed", "s2"), ("run_finished", None)]
    exported = json.loads(export_run(runner.store, run_id, "json"))
    assert exported["answer"] == record.answer
    report = export_run(runner.store, run_id, "md")
    assert "| s1 | ✓ completed | Look up with query\\_order |" in report
    assert f"## Answer\n\n{record.answer}" in report


def test_a_follow_up_of_an_answer_runs_as_a_plan(registry, runner):
    engine = Engine(registry)
    run_id = runner.answer("What is the return policy?", person_route("knowledge"),
                           engine=engine, settings_public={"offline": True})
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    runner.follow_up(run_id, "also check order 88231", engine=engine)
    record = runner.wait(run_id, DEFAULT_TIMEOUT_S)
    assert record.status == "completed" and record.plan.version == 2
    assert record.workflow_id != run_id  # a new workflow of the run, executing version 2
    assert [s.status for s in record.plan.steps if s.tool == "query_order"] == ["completed"]
    assert any(name.startswith("step:") and name.endswith(":v2")
               for name in recorded_steps(record.workflow_id))


# ---- the controls: pause, resume and cancel between recorded calls -------------------------

@pytest.fixture
def held_answer(held_server, registry, runner):
    """Start a knowledge answer whose model call is held; return (server, run id)."""
    server = held_server([text("Within 7 days after the parcel is signed for.")], held=1)

    def start() -> tuple[HeldServer, str]:
        model = OpenAIChatModel(server.server.settings())
        run_id = runner.answer("What is the return policy?", person_route("knowledge"),
                               engine=Engine(registry, model),
                               settings_public={"offline": False})
        assert server.arrived.wait(DEFAULT_TIMEOUT_S), "the answer never called the model"
        return server, run_id

    return start


def test_a_paused_answer_stops_after_its_call_and_resume_finishes_it(held_answer, runner):
    server, run_id = held_answer()
    runner.pause(run_id)
    server.release()  # the held call is answered; the answer reads its mailbox after it
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "paused"
    runner.resume(run_id)
    record = runner.wait(run_id, DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert len(server.server.chat_bodies) == 1  # the call made before the pause was kept
    kinds = [k for k, _ in step_events(runner.store, run_id)]
    assert kinds.index("paused") < kinds.index("resumed") < kinds.index("run_finished")


def test_a_cancelled_answer_ends_after_its_call_without_an_answer(held_answer, runner):
    server, run_id = held_answer()
    runner.cancel(run_id, timeout=0)  # only asks: the answer reads it after its call
    server.release()
    record = runner.wait(run_id, DEFAULT_TIMEOUT_S)
    assert record.status == "cancelled" and record.answer is None
    assert [s.tool for s in record.plan.steps] == ["search_knowledge"]  # no answer step
    assert ("cancelled", None) in step_events(runner.store, run_id)


def test_an_answer_whose_process_closes_is_paused_and_resumed_elsewhere(held_answer, runner,
                                                                       registry):
    server, run_id = held_answer()
    runner.pause(run_id)  # as closing does first (here before the call returns, for sure)
    closing = threading.Thread(target=runner.close, kwargs={"timeout": DEFAULT_TIMEOUT_S})
    closing.start()  # it waits for the answer to pause after its call, then suspends it
    server.release()
    closing.join(DEFAULT_TIMEOUT_S)
    assert durable.workflow_status(run_id) == "CANCELLED"  # stopped where it waited
    store = RunStore()
    assert store.get_run(run_id).status == "paused"
    later = Runner(store, poll_s=0.05)  # another process's, say
    try:
        later.resume(run_id, engine=Engine(registry, OpenAIChatModel(server.server.settings())))
        record = later.wait(run_id, DEFAULT_TIMEOUT_S)
    finally:
        later.close()
        store.close()
    assert record.status == "completed"
    assert len(server.server.chat_bodies) == 1  # its call was recorded: not made again


# ---- no side effects -------------------------------------------------------------------------

def test_an_answer_s_tools_refuse_a_side_effect_before_calling_it():
    registry = default_registry({"PLANBOARD_TOOLSETS": "tests.toolsets.greetings"})
    tools = AnswerTools(registry)
    before = list(greetings.CALLS)
    with pytest.raises(ToolError) as refused:
        tools.call("send_card", {"name": "Ann"})
    assert refused.value.message.code == "answer.no_side_effects"
    assert "send_card" in render(refused.value, "zh") and "规划模式" in render(refused.value, "zh")
    assert tools.plan.steps == [] and before == greetings.CALLS  # nothing called, no step
    assert tools.call("greet", {"name": "Ann"}) == {"greeting": "Hello, Ann!"}
    assert [(r.name, r.result) for r in tools.records] == [("greet",
                                                            {"greeting": "Hello, Ann!"})]


def test_a_knowledge_tool_with_side_effects_is_refused_before_a_run_is_recorded(runner):
    from tests.toolsets.counted import search_handbook

    registry = default_registry({"PLANBOARD_TOOLSETS": "builtin"})
    registry.add(dataclasses.replace(search_handbook, side_effect=True))  # not read-only
    with pytest.raises(ToolError) as refused:
        runner.answer("When is the help desk open?", person_route("knowledge"),
                      engine=Engine(registry), settings_public={"offline": True})
    assert refused.value.message.code == "answer.no_side_effects"
    assert runner.store.list_runs() == []


def test_a_direct_answer_never_runs_the_side_effect_a_model_asks_for(registry, runner):
    model = ScriptedChatModel([
        tool_reply("apply_refund", {"order_id": "88231", "reason": "broken"}),
        "I could not refund it here; order 88231 was delivered.",
    ])
    run_id = runner.answer("check order 88231", person_route("direct"),
                           engine=Engine(registry, model), settings_public={"offline": False})
    record = runner.wait(run_id, DEFAULT_TIMEOUT_S)
    assert record.status in {"completed", "failed"}
    assert "apply_refund" not in [s.tool for s in record.plan.steps]
    assert refunds_for("88231") == []


# ---- workers mode ------------------------------------------------------------------------------

@pytest.fixture
def workers_mode(monkeypatch) -> None:
    """PLANBOARD_EXECUTION=workers (before ``app_runner``, which reads it)."""
    monkeypatch.setenv("PLANBOARD_EXECUTION", "workers")


def test_under_workers_the_dashboard_s_answer_runs_on_a_worker(workers_mode, app_runner):
    import core.runs.workflow  # noqa: F401  the run workflow, registered before the launch

    worker = durable.worker_executor_id("worker-a")
    durable.launch(worker)  # a worker has served the home once (its queue exists) ...
    durable.shutdown()  # ... and is stopped while the dashboard answers
    at = open_app(plan_mode="knowledge")
    at.text_area(key="request").input("What is the return policy?").run()
    at.button(key="generate_plan").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    run_id = at.query_params["run"]
    assert app_runner.store.get_run(run_id).status == "planned"  # only queued here
    assert durable.workflow_status(run_id) == "ENQUEUED"
    durable.launch(worker)
    record = app_runner.wait(run_id, DEFAULT_TIMEOUT_S)
    # the run is recorded completed a moment before its workflow returns
    assert await_workflow(run_id) == "SUCCESS"
    assert durable.workflow_state(run_id) == ("SUCCESS", worker)
    assert record.status == "completed" and "7 days" in record.answer
    workers = {e.data.get("worker") for e in app_runner.store.events(run_id)
               if e.kind.startswith("step_")}
    assert workers == {"worker-a"}
    wait_for(at, lambda a: any(m.value == "**Status:** Completed" for m in a.markdown))
