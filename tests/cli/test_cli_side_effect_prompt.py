"""What ``run`` asks before a side effect: the plan's prompt names the side-effecting steps,
and each of them asks again before it runs, naming its tool and its arguments as they will
be sent (a reference to s1 as s1's value)."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from tests.support.cli import write_plan
from tests.support.shop import refunds_for

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

STEPS = [
    {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
     "args": {"order_id": "88231"}},
    {"id": "s2", "description": "Refund the order s1 found", "tool": "apply_refund",
     "args": {"order_id": "{{s1.order_id}}", "reason": "item is broken"}, "depends_on": ["s1"]},
    {"id": "s3", "description": "Tell the user what was done", "depends_on": ["s2"]},
]


def _run(capsys, monkeypatch, tmp_path, answer: str, *argv: str) -> tuple[int, list[tuple]]:
    """Run the plan offline, answering ``answer`` to each question; each question with what
    was printed before it."""
    asked: list[tuple[str, str]] = []

    def reply(question: str) -> str:
        asked.append((capsys.readouterr().out, question))
        return answer

    monkeypatch.setattr("builtins.input", reply)
    code = main(["run", "--plan", write_plan(tmp_path, STEPS, "Refund order 88231"),
                 "--offline", *argv])
    return code, asked


def test_each_side_effect_is_asked_for_with_its_tool_and_resolved_arguments(
        capsys, monkeypatch, tmp_path):
    code, asked = _run(capsys, monkeypatch, tmp_path, "y")
    (plan_shown, execute), (step_shown, run_step) = asked
    assert execute == "Execute? [y/N] "
    assert "Side effects: s2 apply_refund. Each asks you before it runs" in plan_shown
    assert run_step == "Run step s2? [y/N] "
    assert "Step s2 calls apply_refund, which has a side effect" in step_shown
    assert "  order_id: 88231 ← s1.order_id\n" in step_shown
    assert "  reason: item is broken\n" in step_shown
    assert "{{" not in step_shown
    assert code == 0 and len(refunds_for("88231")) == 1


def test_no_to_the_step_makes_no_refund(capsys, monkeypatch, tmp_path):
    asked: list[str] = []

    def reply(question: str) -> str:
        asked.append(question)
        return "y" if question.startswith("Execute") else "n"

    monkeypatch.setattr("builtins.input", reply)
    main(["run", "--plan", write_plan(tmp_path, STEPS, "Refund order 88231"), "--offline",
          "--json"])
    result = json.loads(capsys.readouterr().out)
    refund = next(s for s in result["plan"]["steps"] if s["id"] == "s2")
    assert asked == ["Execute? [y/N] ", "Run step s2? [y/N] "]
    assert (refund["status"], refund["error"]) == ("skipped", "rejected by a person")
    assert refunds_for("88231") == []


def test_yes_says_that_the_side_effects_run_without_asking(capsys, monkeypatch, tmp_path):
    code, asked = _run(capsys, monkeypatch, tmp_path, "y", "--yes")
    assert asked == [] and code == 0
    assert "Side effects: s2 apply_refund. --yes runs them without asking." in (
        capsys.readouterr().out)
    assert len(refunds_for("88231")) == 1
