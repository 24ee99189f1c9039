"""The approved plan is the CLI's boundary: a replan that adds a refund is not run unasked.

The issue's scenario on the fake OpenAI server: s1 looks up an order that does not exist
(fatal: the tracking step needs it); the replanner's new version refunds another order.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.cli.main import main
from core.plan.model import Plan, Step
from core.store.run_store import RunStore
from tests.support.cli import use_endpoint, write_plan
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.shop import refunds_for

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

ORDER = "88231"  # delivered and refundable; nobody asked to refund it
STEPS = [
    {"id": "s1", "description": "Look up order 00000", "tool": "query_order",
     "args": {"order_id": "00000"}, "depends_on": []},
    {"id": "s2", "description": "Track its parcel", "tool": "query_logistics",
     "args": {"tracking_no": "{{s1.tracking_no}}"}, "depends_on": ["s1"]},
    {"id": "s3", "description": "Tell the user where the parcel is", "tool": None,
     "depends_on": ["s2"]},
]


def _new_version(tool: str, args: dict[str, Any]) -> str:
    return json.dumps({"goal": "Where is my parcel?", "steps": [
        {"id": "s1", "description": f"Use {tool} on order {ORDER} instead", "tool": tool,
         "args": args, "depends_on": []},
        {"id": "s2", "description": "Tell the user what was done", "tool": None,
         "depends_on": ["s1"]},
    ]})


REFUND = _new_version("apply_refund", {"order_id": ORDER, "reason": "lost parcel"})
LOOKUP = _new_version("query_order", {"order_id": ORDER})


def _responder(new_version: str):
    """The replanner proposes ``new_version``; the reflector advises no retry."""
    def respond(body: dict[str, Any]):
        system = str(body["messages"][0].get("content", ""))
        if "You are a replanner" in system:
            return text(new_version)
        if "You are the reflector" in system:
            return text(json.dumps({"root_cause": "order 00000 does not exist",
                                    "lesson": "check the order id with query_order first",
                                    "should_retry": False, "retry_hint": ""}))
        return text("Here is what was done.")
    return respond


def _run(capsys, monkeypatch, tmp_path, new_version: str, *argv: str,
         answer: str | None = None) -> tuple[int, dict[str, Any], list[str]]:
    """Run the scenario (``answer`` to the version question when interactive)."""
    asked: list[str] = []

    def reply(question: str) -> str:
        asked.append(question)
        return answer if "new version" in question else "y"

    monkeypatch.setattr("builtins.input", reply)
    with FakeOpenAI(responder=_responder(new_version)) as server:
        use_endpoint(monkeypatch, server)
        code = main(["run", "--plan", write_plan(tmp_path, STEPS, "Where is my parcel?"),
                     "--json", "--max-replans", "1", *argv])
    return code, json.loads(capsys.readouterr().out), asked


def _step(result: dict[str, Any], tool: str) -> dict[str, Any]:
    return next(s for s in result["plan"]["steps"] if s["tool"] == tool)


def test_yes_runs_no_refund_a_replan_added(capsys, monkeypatch, tmp_path):
    code, result, asked = _run(capsys, monkeypatch, tmp_path, REFUND, "--yes")
    refund = _step(result, "apply_refund")
    assert refund["status"] == "failed" and refund["error"].startswith("needs approval")
    assert refunds_for(ORDER) == []
    assert result["status"] == "failed" and code != 0
    assert asked == []


@pytest.mark.parametrize("answer", ["n", "y"])
def test_interactive_asks_to_approve_the_new_version(capsys, monkeypatch, tmp_path, answer):
    code, result, asked = _run(capsys, monkeypatch, tmp_path, REFUND, answer=answer)
    assert asked == ["Execute? [y/N] ", "Approve the new version? [y/N] "]
    refund = _step(result, "apply_refund")
    if answer == "y":
        assert refund["status"] == "completed" and len(refunds_for(ORDER)) == 1
    else:
        assert (refund["status"], refund["error"]) == ("skipped", "rejected by a person")
        assert refunds_for(ORDER) == []
    assert code == (0 if result["status"] == "completed" else 1)


def test_approve_replans_is_the_opt_in(capsys, monkeypatch, tmp_path):
    _, result, asked = _run(capsys, monkeypatch, tmp_path, REFUND, "--yes",
                            "--approve-replans")
    assert _step(result, "apply_refund")["status"] == "completed"
    assert len(refunds_for(ORDER)) == 1 and asked == []


def test_a_read_only_replan_needs_no_approval(capsys, monkeypatch, tmp_path):
    _, result, asked = _run(capsys, monkeypatch, tmp_path, LOOKUP, answer="n")
    assert asked == ["Execute? [y/N] "]
    versions = [s for s in result["plan"]["steps"] if s["tool"] == "query_order"]
    assert versions[-1]["status"] == "completed"
    assert "needs approval" not in json.dumps(result)


def _paused_with_a_refund_nobody_approved(store: RunStore) -> str:
    first = Plan(goal="Where is my parcel?", steps=[
        Step(id="s1", description="Look up the order", tool="query_order",
             args={"order_id": ORDER})])
    run_id = store.create_run(first.goal, {"offline": True}, first, status="paused",
                              options={"approved_version": 1})
    second = first.model_copy(deep=True, update={"version": 2})
    second.steps.append(Step(id="s2", description="Refund it", tool="apply_refund",
                             args={"order_id": ORDER}))
    store.save_plan_version(run_id, second, "replanned", source="failure")
    return run_id  # paused with no workflow: resume starts one on the stored plan


@pytest.mark.parametrize("opt_in", [False, True])
def test_resume_yes_follows_the_same_rule(capsys, store, opt_in):
    """The run keeps the options it started with (a new version waits for a person):
    resume --yes answers that wait with no, unless --approve-replans."""
    run_id = _paused_with_a_refund_nobody_approved(store)
    code = main(["resume", run_id, "--yes", "--json",
                 *(["--approve-replans"] if opt_in else [])])
    result = json.loads(capsys.readouterr().out)
    refund = _step(result, "apply_refund")
    decisions = [(e.kind, e.data.get("version")) for e in store.events(run_id)
                 if e.kind in {"confirmed", "rejected"}]
    if opt_in:
        assert refund["status"] == "completed" and len(refunds_for(ORDER)) == 1
        assert decisions == [("confirmed", 2)]
    else:
        assert (refund["status"], refund["error"]) == ("skipped", "rejected by a person")
        assert refunds_for(ORDER) == [] and decisions == [("rejected", 2)]
    assert code == (0 if result["status"] == "completed" else 1)
