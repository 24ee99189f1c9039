"""Streamed planning on the command line and in the planner: ``plan`` prints each step while
the server still holds back the rest of the reply; the plan approved is the finished one."""

from __future__ import annotations

import json
import threading

from core.cli.main import main
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.planning.planner import plan_request
from core.tools.toolsets import default_registry
from tests.support.cli import use_endpoint
from tests.support.fake_openai import FakeOpenAI, Hold, streamed
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until

REQUEST = "work out 2+2, then 3*3, and tell me both"
PLAN = json.dumps({"goal": REQUEST, "steps": [
    {"id": "s1", "description": "Work out 2+2", "tool": "calculate",
     "args": {"expression": "2+2"}, "depends_on": []},
    {"id": "s2", "description": "Work out 3*3", "tool": "calculate",
     "args": {"expression": "3*3"}, "depends_on": []},
    {"id": "s3", "description": "Tell the user both results", "tool": None,
     "depends_on": ["s1", "s2"]},
]}, indent=1)
FIRST_STEP_END = PLAN.rindex("}", 0, PLAN.index('"s2"')) + 1  # s1's closing brace


def use(monkeypatch, server: FakeOpenAI) -> None:
    use_endpoint(monkeypatch, server)
    monkeypatch.setenv("PLANBOARD_WEAK_MODEL_CHECKS", "off")  # one reply, no corrective turn


def test_plan_prints_the_first_step_while_the_rest_of_the_reply_is_held(capsys, monkeypatch):
    hold = Hold(after=PLAN[:FIRST_STEP_END])
    with FakeOpenAI(responder=lambda _body: PLAN) as server:
        use(monkeypatch, server)
        server.script(streamed(PLAN, chunk_chars=16, hold=hold))
        codes: list[int] = []
        command = threading.Thread(target=lambda: codes.append(main(["plan", REQUEST])))
        command.start()
        try:
            wait_until(hold.reached.is_set, what="the server reaching the hold")
            err: list[str] = []
            wait_until(lambda: "s1" in "".join(err.append(capsys.readouterr().err) or err),
                       what="s1 printed")
            printed = "".join(err)
            # one step of three printed, the server still holding the second step's bytes
            assert not hold.release.is_set()
            assert printed.count("planning…") == 1
            assert "s1: Work out 2+2 [calculate]" in printed and "s2" not in printed
        finally:
            hold.release.set()
            command.join(timeout=DEFAULT_TIMEOUT_S)
    captured = capsys.readouterr()
    assert codes == [0]
    printed += captured.err
    assert [line.split(":")[0] for line in printed.splitlines()
            if line.startswith("planning…")] == ["planning… s1", "planning… s2", "planning… s3"]
    assert captured.out.startswith("Plan v1:") and "s3: Tell the user both results" in captured.out


def test_plan_json_prints_only_the_finished_plan(capsys, monkeypatch):
    with FakeOpenAI(responder=lambda _body: streamed(PLAN, chunk_chars=16)) as server:
        use(monkeypatch, server)
        assert main(["plan", REQUEST, "--json"]) == 0
    captured = capsys.readouterr()
    assert "planning…" not in captured.err
    assert [step["id"] for step in json.loads(captured.out)["steps"]] == ["s1", "s2", "s3"]


def test_streaming_changes_what_is_shown_never_the_plan():
    registry = default_registry()
    plans, previews = [], []
    with FakeOpenAI(responder=lambda _body: streamed(PLAN, chunk_chars=7)) as server:
        for listener in (None, previews.append):
            settings = server.settings(weak_model_checks=False)
            engine = Engine(registry=registry, model=OpenAIChatModel(settings))
            plans.append(plan_request(REQUEST, engine, language="en", on_steps=listener))
        streamed_bodies = [body.get("stream", False) for body in server.chat_bodies]
    whole, streamed_result = plans
    assert streamed_bodies[-1] is True and streamed_bodies[0] is False
    assert streamed_result.plan.canonical() == whole.plan.canonical()
    assert streamed_result.usage.prompt_tokens == whole.usage.prompt_tokens
    assert [len(steps) for steps in previews] == [1, 2, 3]


def test_a_server_that_does_not_stream_plans_as_before(capsys, monkeypatch):
    with FakeOpenAI(streams=False, responder=lambda _body: PLAN) as server:
        use(monkeypatch, server)
        assert main(["plan", REQUEST]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Plan v1:")
    assert captured.err.count("planning…") == 3  # the whole reply at once: every step


def test_run_prints_the_steps_as_the_planner_writes_them(capsys, monkeypatch):
    def reply(body: dict) -> object:  # the planner streams; the answer step is asked whole
        return streamed(PLAN, chunk_chars=16) if body.get("stream") else "4 and 9."

    with FakeOpenAI(responder=reply) as server:
        use(monkeypatch, server)
        assert main(["run", REQUEST, "--yes", "--mode", "plan"]) == 0
    captured = capsys.readouterr()
    assert [line.split(":")[0] for line in captured.err.splitlines()
            if line.startswith("planning…")] == ["planning… s1", "planning… s2", "planning… s3"]
    assert captured.out.startswith("Plan v1:") and "completed" in captured.out


HANDBOOK_PLAN = json.dumps({"goal": "when is the help desk open", "steps": [
    {"id": "s1", "description": "Search the handbook for opening hours",
     "tool": "search_handbook", "args": {"query": "opening hours"}, "depends_on": []},
    {"id": "s2", "description": "Tell the user the opening hours", "tool": None,
     "depends_on": ["s1"]},
]}, indent=1)


def test_run_read_ahead_searches_while_the_plan_is_written_and_not_again(
        capsys, monkeypatch, tmp_path):
    from core.store.run_store import RunStore
    from tests.toolsets import counted

    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin,tests.toolsets.counted")
    monkeypatch.setenv(counted.CALLS_ENV, str(tmp_path / "calls.txt"))
    hold = Hold(after=HANDBOOK_PLAN[:HANDBOOK_PLAN.index('"s2"')])
    with FakeOpenAI(responder=lambda _body: "The help desk is open 9:00-17:00.") as server:
        use(monkeypatch, server)
        server.script(streamed(HANDBOOK_PLAN, chunk_chars=16, hold=hold))
        codes: list[int] = []
        command = threading.Thread(target=lambda: codes.append(main(
            ["run", "when is the help desk open", "--mode", "plan", "--read-ahead", "--yes",
             "--json"])))
        command.start()
        try:
            wait_until(hold.reached.is_set, what="the server reaching the hold")
            wait_until(lambda: counted.calls() == ["search_handbook"],
                       what="the search while the plan is still written")
        finally:
            hold.release.set()
            command.join(timeout=DEFAULT_TIMEOUT_S)
    assert codes == [0], capsys.readouterr()
    assert counted.calls() == ["search_handbook"]  # the run used it: no second search
    store = RunStore()
    try:
        [record] = store.list_runs()
        [s1] = [e for e in store.events(record.run_id)
                if e.kind == "step_completed" and e.step_id == "s1"]
    finally:
        store.close()
    assert s1.data.get("read_ahead") is True and record.status == "completed"
