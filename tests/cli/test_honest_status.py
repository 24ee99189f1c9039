"""Honest status end to end: a run whose executor calls
all fail, or whose model gives non-answers, ends ``failed`` and the CLI exits non-zero."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.cli.main import main
from tests.support.fake_openai import FakeError, FakeOpenAI, FakeReply, error, text

PLANNER, EXECUTOR = "fake-planner", "fake-executor"
REQUEST = "Check order 88231 and tell me when it will arrive"
PLAN = {"goal": REQUEST, "steps": [
    {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
     "depends_on": []},  # no args: the executor must fill them in (one forced call)
    {"id": "s2", "description": "Tell the user when it arrives", "tool": None,
     "depends_on": ["s1"]},
]}


def planner_then(executor_reply: FakeReply | FakeError, plan: dict[str, Any] = PLAN) -> Any:
    """A responder: ``plan`` for every planner call, ``executor_reply`` for the rest."""
    def respond(body: dict[str, Any]) -> FakeReply | FakeError:
        if body["model"] == PLANNER:
            return text(json.dumps(plan))
        return executor_reply
    return respond


def run_request(capsys, monkeypatch, server: FakeOpenAI, *extra: str,
                timeout_s: float = 5.0) -> tuple[int, dict[str, Any], str]:
    for name, value in {
        "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": server.api_key,
        "PLANBOARD_PLANNER_MODEL": PLANNER, "PLANBOARD_EXECUTOR_MODEL": EXECUTOR,
        "PLANBOARD_MAX_RETRIES": "0", "PLANBOARD_TIMEOUT": str(timeout_s),
    }.items():
        monkeypatch.setenv(name, value)
    code = main(["run", REQUEST, "--yes", "--json", "--max-replans", "1", *extra])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


@pytest.mark.parametrize(("reply", "timeout_s"), [
    (error(429, "Rate limit reached; try again later", type="rate_limit_error"), 5.0),
    (error(500, "The server had an error", type="server_error"), 5.0),
    (text("too late", delay_s=1.0), 0.3),  # answers after the client gave up
], ids=["429", "500", "timeout"])
def test_every_executor_call_failing_ends_failed_with_a_non_zero_exit(
        capsys, monkeypatch, reply, timeout_s):
    with FakeOpenAI(responder=planner_then(reply)) as server:
        code, result, _ = run_request(capsys, monkeypatch, server, timeout_s=timeout_s)
    assert result["status"] == "failed" and code != 0
    steps = {s["id"]: s for s in result["plan"]["steps"]}
    assert all(s["status"] != "completed" for s in steps.values() if s["tool"] is None)
    assert "the model endpoint failed" in json.dumps(result["plan"])
    assert "Look up order 88231: failed" in result["answer"]  # it says what is missing


def test_a_non_answer_from_the_model_fails_its_check_and_is_replanned(capsys, monkeypatch):
    asks = "I need more information… can you provide the results from the previous steps?"
    with FakeOpenAI(responder=planner_then(text(asks), _think_plan())) as server:
        code, result, _ = run_request(capsys, monkeypatch, server, "--plan", _plan_file())
        planner_calls = [b for b in server.chat_bodies if b["model"] == PLANNER]
    assert result["status"] == "failed" and code != 0
    assert result["versions"] == 2  # the non-answer triggered a replan
    assert "replanner" in planner_calls[0]["messages"][0]["content"]  # the plan is a file
    failed = [s for s in result["plan"]["steps"] if s["status"] == "failed"]
    assert failed and all("not an answer" in s["error"] for s in failed)
    assert asks not in result["answer"].split("What could not be done")[0]


def test_a_real_answer_after_a_non_answer_completes_the_run(capsys, monkeypatch):
    replies = iter([text("I'm sorry, I cannot access order data."),
                    text("Order 88231 was delivered on 2026-06-22.")])

    def respond(body: dict[str, Any]) -> FakeReply:
        return text(json.dumps(_think_plan())) if body["model"] == PLANNER else next(replies)

    with FakeOpenAI(responder=respond) as server:
        code, result, _ = run_request(capsys, monkeypatch, server, "--plan", _plan_file())
    assert (result["status"], code, result["versions"]) == ("completed", 0, 2)
    assert result["answer"] == "Order 88231 was delivered on 2026-06-22."


def _think_plan() -> dict[str, Any]:
    return {"goal": REQUEST, "steps": [
        {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
         "args": {"order_id": "88231"}, "depends_on": []},
        {"id": "s2", "description": "Tell the user when it arrives", "tool": None,
         "depends_on": ["s1"]},
    ]}


def _plan_file() -> str:
    from pathlib import Path

    path = Path("plan.json")  # the test's own working directory (conftest chdir)
    path.write_text(json.dumps(_think_plan()), encoding="utf-8")
    return str(path)


def test_a_knowledge_question_no_source_covers_fails_with_a_non_zero_exit(capsys):
    code = main(["run", "weather in Beijing tomorrow", "--mode", "knowledge", "--offline",
                 "--json"])
    result = json.loads(capsys.readouterr().out)
    assert (result["status"], code) == ("failed", 1)
    assert result["answer"].startswith("No source in the knowledge base covers this question")
