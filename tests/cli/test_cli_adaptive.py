"""Adaptive planning from the command line: routing, checkpoints, lessons, follow-ups, questions."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from tests.support.fake_openai import text

SEED_000 = ("我家老人想要一台扫地机，预算 2000 以内，要好操作的。"
            "另外帮我看看订单 {order} 到了没，到了的话帮我把那台坏的退掉。")


def run_json(capsys, *argv: str, expect: int = 0) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == expect, captured.err
    return json.loads(captured.out)


def use_endpoint(monkeypatch, server) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("PLANBOARD_MAX_RETRIES", "0")


@pytest.mark.parametrize(("request_text", "mode"), [
    ("退货政策是什么？", "knowledge"),
    ("查一下订单 88231", "direct"),
    (SEED_000.format(order="88231"), "plan"),
])
def test_routing_offline(capsys, request_text, mode):
    assert run_json(capsys, "route", request_text, "--offline")["mode"] == mode


def test_routing_with_an_llm_uses_one_plain_call(capsys, monkeypatch, fake_openai):
    use_endpoint(monkeypatch, fake_openai)
    fake_openai.script(text('{"mode": "knowledge", "reason": "a policy question"}'))
    assert run_json(capsys, "route", "退货政策是什么？") == {
        "mode": "knowledge", "reason": "a policy question"}
    (body,) = fake_openai.chat_bodies
    assert "tools" not in body


def test_a_knowledge_request_is_answered_from_the_policy_without_a_plan(capsys):
    result = run_json(capsys, "run", "退货政策是什么？", "--mode", "auto", "--offline", "--yes")
    assert result["mode"] == "knowledge" and result["route_reason"]
    assert result["status"] == "completed"
    assert "7 天" in result["answer"] and "return-refund-policy" in result["answer"]
    assert [s["tool"] for s in result["plan"]["steps"]] == ["search_knowledge", None]
    runs = run_json(capsys, "runs")
    assert runs[0]["run_id"] == result["run_id"]


def test_a_direct_request_calls_the_tool_without_planning(capsys):
    result = run_json(capsys, "run", "查一下订单 88231", "--mode", "auto", "--offline", "--yes")
    assert result["mode"] == "direct"
    assert "88231" in result["answer"] and "S10 Pro" in result["answer"]


def test_the_adaptive_checkpoint_drops_a_refund_already_in_progress(capsys):
    result = run_json(capsys, "run", SEED_000.format(order="66001"), "--offline", "--yes",
                      "--checkpoint", "adaptive")
    assert result["status"] == "completed" and result["versions"] == 2
    assert "apply_refund" not in [s["tool"] for s in result["plan"]["steps"]]
    assert "RF20260620001" in result["answer"] and "退款中" in result["answer"]


def test_a_failed_run_leaves_a_lesson_that_the_next_plan_carries(
        tmp_path, capsys, monkeypatch, fake_openai):
    use_endpoint(monkeypatch, fake_openai)
    lesson = "Check that a divisor is not zero before dividing with calculate"
    fake_openai.script(  # the synthesis is skipped (its dependency failed): only the reflection
        text(json.dumps({"root_cause": "the plan divided by zero", "lesson": lesson,
                         "should_retry": False, "retry_hint": "", "tools": ["calculate"]})),
    )
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"goal": "divide 1 by 0", "steps": [
        {"id": "s1", "description": "Divide", "tool": "calculate",
         "args": {"expression": "1 / 0"}, "depends_on": []},
        {"id": "s2", "description": "Report", "tool": None, "depends_on": ["s1"]},
    ]}))
    failed = run_json(capsys, "run", "--plan", str(plan), "--yes", "--max-replans", "0",
                      expect=1)
    assert failed["status"] == "failed"
    lessons = run_json(capsys, "lessons")
    assert lessons[0]["text"] == lesson and lessons[0]["run_id"] == failed["run_id"]

    fake_openai.script(text(json.dumps({"goal": "g", "steps": [
        {"id": "s1", "description": "Divide safely", "tool": "calculate",
         "args": {"expression": "10 / 2"}, "depends_on": []},
        {"id": "s2", "description": "Report", "tool": None, "depends_on": ["s1"]}]})))
    run_json(capsys, "plan", "calculate 10 / 2")
    assert lesson in fake_openai.chat_bodies[-1]["messages"][0]["content"]


def test_a_follow_up_adds_steps_without_rerunning_the_old_ones(capsys):
    first = run_json(capsys, "run", SEED_000.format(order="88231"), "--offline", "--yes")
    before = {s["id"]: s for s in first["plan"]["steps"]}
    result = run_json(capsys, "followup", first["run_id"], "另外帮我查一下订单 70412 的物流",
                      "--offline", "--yes")
    assert result["status"] == "completed" and result["versions"] == 2
    after = {s["id"]: s for s in result["plan"]["steps"]}
    for step_id, old in before.items():
        assert after[step_id]["started_at"] == old["started_at"]
        assert after[step_id]["result"] == old["result"]
    new_tools = [s["tool"] for sid, s in after.items() if sid not in before]
    assert "query_order" in new_tools or "query_logistics" in new_tools
    assert "70412" in result["answer"]


def test_a_request_missing_its_order_id_asks_for_it(capsys, monkeypatch):
    code = main(["run", "帮我把那台坏的扫地机退掉", "--offline", "--yes"])
    assert code == 1
    assert "订单号" in capsys.readouterr().err
    answers = iter(["88231", "y", "y"])  # the order, Execute?, and the refund's own y/N
    monkeypatch.setattr("builtins.input", lambda _question: next(answers))
    result = run_json(capsys, "run", "帮我把那台坏的扫地机退掉", "--offline")
    assert result["status"] == "completed"
    assert "88231" in result["plan"]["goal"]


def test_a_reflection_that_advises_a_retry_runs_a_new_attempt_with_the_lesson(
        tmp_path, capsys, monkeypatch, fake_openai):
    use_endpoint(monkeypatch, fake_openai)
    lesson = "Divide by a non-zero number; the request allows six divided by two"
    fake_openai.script(
        text(json.dumps({"root_cause": "division by zero", "lesson": lesson,
                         "should_retry": True, "retry_hint": "compute 6 / 2 instead",
                         "tools": ["calculate"]})),
        text(json.dumps({"goal": "g", "steps": [
            {"id": "s3", "description": "Divide six by two", "tool": "calculate",
             "args": {"expression": "6 / 2"}, "depends_on": []},
            {"id": "s4", "description": "Report", "tool": None, "depends_on": ["s3"]}]})),
        text("Six divided by two is 3."),
    )
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"goal": "divide", "steps": [
        {"id": "s1", "description": "Divide", "tool": "calculate",
         "args": {"expression": "1 / 0"}, "depends_on": []},
        {"id": "s2", "description": "Report", "tool": None, "depends_on": ["s1"]},
    ]}))
    result = run_json(capsys, "run", "--plan", str(plan), "--yes", "--max-replans", "0")
    assert result["status"] == "completed" and result["versions"] == 2
    assert result["answer"] == "Six divided by two is 3."
    retry_prompt = json.dumps(fake_openai.chat_bodies[1]["messages"], ensure_ascii=False)
    assert lesson in retry_prompt and "compute 6 / 2 instead" in retry_prompt
    assert result["usage"]["llm_calls"] == 3  # reflection, retry planning, synthesis
