"""A side effect in flight at a crash is not repeated silently: the run asks a person.

First the engine's rule on a ledger that says a call began before (no process dies):
the step goes back to pending and asks, whatever the confirmation setting; a person's yes
runs it once more under a new key, a no skips it; an idempotent side effect (the demo's
refund) runs again without asking, as before. Then for real: a child process runs a plan
whose non-idempotent MCP tool (tests/mcp_servers/troubles.py ``bump``) is SIGKILLed in the
middle of its call; ``resume --yes`` asks anyway, and the call is not made twice.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from core.cli.main import main
from core.execution.control import RunControl
from core.execution.events import RunEvent
from core.execution.launcher import ThreadPoolLauncher, paced_work
from core.execution.scheduler import RunOptions, run_plan
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.mcp.pool import shutdown_pool
from core.tools.registry import ToolRegistry, current_idempotency_key, make_tool
from tests.support.child_runs import crash_when
from tests.support.mcp import own_server, write_config

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")


class NotedBefore:
    """A ledger in which an earlier attempt already noted the calls ``keys``."""

    def __init__(self, *keys: str) -> None:
        self.noted = set(keys)
        self.asked: list[str] = []

    def begin(self, key: str) -> bool:
        self.asked.append(key)
        if key in self.noted:
            return False
        self.noted.add(key)
        return True


def _engine(calls: list[str | None]) -> Engine:
    def send(to: str) -> dict:
        """Send a message (a side effect; sending twice sends two).

        Args:
            to: who gets it.
        """
        calls.append(current_idempotency_key())
        return {"sent_to": to}

    def refund(order_id: str) -> dict:
        """Refund an order (idempotent: one refund per key).

        Args:
            order_id: the order.
        """
        calls.append(current_idempotency_key())
        return {"refunded": order_id}

    registry = ToolRegistry()
    registry.add(make_tool(send))
    registry.add(make_tool(refund, idempotent=True))
    return Engine(registry=registry, model=None)


def _run(tool: str, ledger: NotedBefore, decide: bool | None, *,
         confirm_first: bool = False) -> tuple[Plan, list[str | None], list[RunEvent]]:
    """Run a one-tool plan (run id "r1") whose call ``ledger`` may hold; a person answers
    ``decide`` to every question (None: nobody answers, the run is paused instead)."""
    calls: list[str | None] = []
    args = {"to": "ada"} if tool == "send" else {"order_id": "1"}
    plan = Plan(goal="do it", steps=[
        Step(id="s1", description="do it", tool=tool, args=args),
        Step(id="s2", description="say so", tool=None, depends_on=["s1"])])
    control, events = RunControl(), []
    if confirm_first:
        control.confirm("s1")  # given before the crash, for the first call

    def sink(event: RunEvent) -> None:
        events.append(event)
        if event.kind == "waiting_confirmation":
            if decide is None:
                threading.Timer(0.05, control.pause).start()
            else:
                (control.confirm if decide else control.reject)(event.step_id)

    engine = _engine(calls)
    options = RunOptions(run_id="r1", confirm_side_effects=confirm_first)
    with ThreadPoolLauncher(paced_work(engine, control, 0, ledger=ledger), 2) as launcher:
        run_plan(plan, engine, options=options, control=control, on_event=sink,
                 launcher=launcher)
    return plan, calls, events


def test_a_call_that_began_before_is_not_made_again_when_a_person_says_no():
    plan, calls, events = _run("send", NotedBefore("r1:s1:v1"), decide=False)
    assert calls == []  # not called again
    s1 = plan.step("s1")
    assert s1.status == "skipped"
    assert s1.error == ("not run again: the call of send may already have happened before "
                        "the run stopped, and a person chose not to repeat it")
    asked = [e for e in events if e.kind == "waiting_confirmation"]
    assert [(e.step_id, e.data.get("in_doubt")) for e in asked] == [("s1", True)]
    reset = next(e for e in events if e.kind == "step_reset")
    assert reset.data["in_doubt"] and "may already have happened" in reset.data["reason"]
    assert plan.step("s2").status == "completed"  # the run goes on without it


def test_a_person_who_says_yes_gets_one_more_call_under_a_new_key():
    ledger = NotedBefore("r1:s1:v1")
    plan, calls, _ = _run("send", ledger, decide=True)
    assert plan.step("s1").status == "completed"
    assert calls == ["r1:s1:v1:r1"]
    assert ledger.asked == ["r1:s1:v1", "r1:s1:v1:r1"]  # the repeat is noted too


def test_a_confirmation_given_before_the_crash_does_not_answer_the_new_question():
    plan, calls, events = _run("send", NotedBefore("r1:s1:v1"), decide=None,
                               confirm_first=True)
    # nobody answered the new question: the step waits (paused here, pending)
    assert calls == [] and plan.step("s1").status == "pending"
    assert [e.data.get("in_doubt") for e in events if e.kind == "waiting_confirmation"] == [
        True]


def test_an_idempotent_side_effect_runs_again_without_asking_as_before():
    plan, calls, events = _run("refund", NotedBefore("r1:s1:v1"), decide=None)
    assert plan.step("s1").status == "completed" and calls == ["r1:s1:v1"]
    assert not any(e.kind == "waiting_confirmation" for e in events)


def test_a_first_call_is_noted_and_made():
    ledger = NotedBefore()
    plan, calls, _ = _run("send", ledger, decide=None)
    assert calls == ["r1:s1:v1"] and ledger.noted == {"r1:s1:v1"}
    assert plan.step("s1").status == "completed"


# ---- for real: a crash inside an MCP tool's call -------------------------------------------


def _kill_leftover_servers(counter: Path) -> None:
    """The killed child's MCP server outlives it, asleep in its call: end it."""
    import os
    import signal

    marker = f"COUNTER_FILE={counter}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes():
                    os.kill(int(entry.name), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                continue


def test_a_side_effect_in_flight_at_a_crash_is_not_repeated_on_resume(
        tmp_path, store, capsys, monkeypatch):
    counter = tmp_path / "bumps.txt"
    config = write_config(tmp_path / "mcp.json", {
        "troubles": own_server("troubles", env={"COUNTER_FILE": str(counter)})})
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin")
    monkeypatch.setenv("PLANBOARD_MCP_CONFIG", str(config))
    plan = Plan(goal="bump the counter once", steps=[
        Step(id="s1", description="bump", tool="troubles__bump", args={"pause": 60}),
        Step(id="s2", description="say so", tool=None, depends_on=["s1"])])
    try:
        run_id = crash_when(tmp_path, plan, lambda _: counter.exists() and counter.read_text())
    finally:
        _kill_leftover_servers(counter)
    assert counter.read_text() == "bumped\n"

    questions: list[str] = []

    def answer(question: str) -> str:
        questions.append(question)
        return "n"

    monkeypatch.setattr("builtins.input", answer)
    try:
        code = main(["resume", run_id, "--yes", "--json"])  # --yes: no question but that one
    finally:
        shutdown_pool()
    out = capsys.readouterr().out
    summary = json.loads(out[out.index("{"):])
    assert code == 0 and summary["status"] == "completed"
    assert questions == ["Run step s1 again? [y/N] "]
    assert counter.read_text() == "bumped\n"  # the call was not made again
    s1 = summary["plan"]["steps"][0]
    assert s1["status"] == "skipped" and "may already have happened" in s1["error"]
    kinds = [(e.kind, e.step_id, e.data.get("in_doubt")) for e in store.events(run_id)]
    assert ("waiting_confirmation", "s1", True) in kinds
    assert ("step_reset", "s1", True) in kinds
