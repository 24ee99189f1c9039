"""Replanning: kept results, renumbering, corrective retries and the replanner's prompt."""

from __future__ import annotations

import json

import pytest

from core.errors import ConfigError, PlanError
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.planning.planner import replan, replan_request
from core.runs.session import request_language
from tests.support.planning import REQUEST, engine_with


def failed_plan() -> Plan:
    plan = Plan(goal=REQUEST, definition_of_done="done", version=1, steps=[
        Step(id="s1", description="Look up", tool="query_order", args={"order_id": "88231"},
             status="completed", result={"order_id": "88231", "status": "delivered"}),
        Step(id="s2", description="Refund", tool="apply_refund",
             args={"order_id": "{{s1.order_id}}"}, depends_on=["s1"], status="failed",
             error="refund service timed out"),
        Step(id="s3", description="Tell the user", depends_on=["s1", "s2"]),
    ])
    return plan


def test_replan_keeps_completed_results_and_continues_numbering(planner_registry):
    reply = {"steps": [
        {"id": "s4", "description": "Retry the refund", "tool": "apply_refund",
         "args": {"order_id": "{{s1.order_id}}", "reason": "retry"}, "depends_on": ["s1"]},
        {"id": "s5", "description": "Tell the user", "tool": None, "depends_on": ["s4"]},
    ]}
    engine, model = engine_with(planner_registry, json.dumps(reply))
    old = failed_plan()
    before = old.model_dump()
    new = replan(old, "s2 failed: refund service timed out", engine)
    assert old.model_dump() == before  # the old version is untouched
    assert new.version == 2 and new.id == old.id and new.goal == old.goal
    assert new.ids() == ["s1", "s4", "s5"]
    kept = new.step("s1")
    assert kept.status == "completed" and kept.result == {"order_id": "88231",
                                                          "status": "delivered"}
    assert new.step("s4").status == "pending"
    assert new.step("s5").depends_on == ["s1", "s4"]  # synthesis sees the kept result too
    assert new.validate(planner_registry) == []
    [request] = model.requests
    assert request["role"] == "planner" and request["tools"] is None and request["json_mode"]
    system, user = (m["content"] for m in request["messages"])
    assert "Number the new steps from s4 on" in system
    assert "s2 failed: refund service timed out" in user
    assert "✓ s1: Look up" in user and "✗ s2: Refund → refund service timed out" in user
    assert '"status": "delivered"' in user


def test_replan_renumbers_steps_that_reuse_old_ids(planner_registry):
    reply = {"steps": [
        {"id": "s2", "description": "Retry the refund", "tool": "apply_refund",
         "args": {"order_id": "{{s1.order_id}}"}, "depends_on": ["s1"],
         "condition": "s1.status == 'delivered'"},
        {"id": "s3", "description": "Check the time", "tool": "get_current_time",
         "depends_on": ["s2"]},
        {"id": "s4", "description": "Answer", "tool": None, "depends_on": ["s2", "s3"]},
    ]}
    engine, _ = engine_with(planner_registry, json.dumps(reply))
    new = replan(failed_plan(), "refund failed", engine)
    assert new.ids() == ["s1", "s4", "s5", "s6"]
    assert new.step("s4").args == {"order_id": "{{s1.order_id}}"}
    assert new.step("s4").condition == "s1.status == 'delivered'"
    assert new.step("s5").depends_on == ["s4"]
    assert new.step("s6").depends_on == ["s1", "s4", "s5"]
    assert new.validate(planner_registry) == []


def test_replan_drops_a_repeated_completed_step(planner_registry):
    reply = {"steps": [
        {"id": "s1", "description": "Look up", "tool": "query_order",
         "args": {"order_id": "88231"}, "depends_on": []},
        {"id": "s2", "description": "Refund again", "tool": "apply_refund",
         "args": {"order_id": "{{s1.order_id}}"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "Answer", "tool": None, "depends_on": ["s1", "s2"]},
    ]}
    engine, _ = engine_with(planner_registry, json.dumps(reply))
    new = replan(failed_plan(), "refund failed", engine)
    assert new.ids() == ["s1", "s4", "s5"]
    assert new.step("s4").depends_on == ["s1"]
    assert new.step("s5").depends_on == ["s1", "s4"]


@pytest.mark.parametrize(("goal", "warning"), [
    (REQUEST, "s2 already did “Refund it again”; it is not done again"),
    ("查一下订单 88231，到了就退款", "s2 已经完成了“Refund it again”，没有再做一次"),
])
def test_replan_does_not_repeat_a_side_effect_that_already_ran(planner_registry, goal, warning):
    plan = failed_plan().model_copy(update={"goal": goal, "language": request_language(goal)})
    refund = plan.step("s2")
    refund.args, refund.status, refund.error = {"order_id": "88231"}, "completed", None
    refund.result = {"refund_id": "RF1", "status": "refunding"}
    plan.step("s3").status, plan.step("s3").error = "failed", "the answer was a non-answer"
    reply = {"steps": [  # a retry plan that starts over, the refund included
        {"id": "s4", "description": "Look up again", "tool": "query_order",
         "args": {"order_id": "88231"}},
        {"id": "s5", "description": "Refund it again", "tool": "apply_refund",
         "args": {"order_id": "88231"}, "depends_on": ["s4"]},
        {"id": "s6", "description": "Tell the user", "tool": None, "depends_on": ["s4", "s5"]},
    ]}
    engine, _ = engine_with(planner_registry, json.dumps(reply))
    new = replan(plan, "s3 failed", engine)
    assert new.ids() == ["s1", "s2", "s4", "s6"]
    assert [new.step(i).tool for i in new.ids()] == [
        "query_order", "apply_refund", "query_order", None]  # a read may run again
    assert new.step("s6").depends_on == ["s1", "s2", "s4"]
    assert new.warnings[-1] == warning


def test_replan_keeps_skipped_steps_only_when_their_dependencies_are_kept(planner_registry):
    plan = failed_plan()
    plan.steps.insert(1, Step(id="s4", description="Maybe", tool="get_current_time",
                              depends_on=["s1"], status="skipped", error="condition false"))
    plan.steps.append(Step(id="s5", description="Blocked", tool="get_current_time",
                           depends_on=["s2"], status="skipped", error="s2 failed"))
    reply = {"steps": [{"id": "s6", "description": "Answer", "tool": None, "depends_on": []}]}
    engine, model = engine_with(planner_registry, json.dumps(reply))
    new = replan(plan, "refund failed", engine)
    assert new.ids() == ["s1", "s4", "s6"]
    assert new.step("s4").status == "skipped"
    assert "from s6 on" in model.requests[0]["messages"][0]["content"]


def test_replan_corrective_retry_then_success(planner_registry):
    good = {"steps": [{"id": "s4", "description": "Answer", "tool": None, "depends_on": []}]}
    bad = {"steps": [{"id": "s4", "description": "Answer", "tool": None,
                      "depends_on": ["s9"]}]}
    engine, model = engine_with(planner_registry, json.dumps(bad), json.dumps(good))
    result = replan_request(failed_plan(), "refund failed", engine)
    assert result.plan is not None and result.plan.ids() == ["s1", "s4"]
    assert result.attempts == 2 and result.usage.llm_calls == 2
    assert "- s4 depends on unknown step s9" in model.requests[1]["messages"][3]["content"]


def test_replan_adds_the_dependency_a_reference_implies_without_a_corrective_call(planner_registry):
    # a local 1.5B model forgot depends_on twice in a row: the retry cannot fix it, the
    # reference already says what the link is
    reply = {"steps": [
        {"id": "s4", "description": "Retry the refund", "tool": "apply_refund",
         "args": {"order_id": "{{s1.order_id}}"}, "condition": "s1.status == 'delivered'"},
        {"id": "s5", "description": "Answer", "tool": None, "depends_on": ["s4"]},
    ]}
    engine, model = engine_with(planner_registry, json.dumps(reply))
    result = replan_request(failed_plan(), "refund failed", engine)
    assert result.plan is not None and result.attempts == 1 and len(model.requests) == 1
    assert result.plan.step("s4").depends_on == ["s1"]
    assert result.plan.validate(planner_registry) == []


def test_replan_failing_twice_raises_plan_error_with_the_reasons(planner_registry):
    engine, _ = engine_with(planner_registry, "nope", "still nope")
    result = replan_request(failed_plan(), "refund failed", engine)
    assert result.plan is None and result.usage.llm_calls == 2 and len(result.errors) == 2
    engine, _ = engine_with(planner_registry, "nope", "still nope")
    with pytest.raises(PlanError, match=r"^Replanning failed: .*attempt 2: the reply holds no"):
        replan(failed_plan(), "refund failed", engine)


def test_replan_without_a_model_is_a_config_error(planner_registry):
    with pytest.raises(ConfigError, match="No LLM is configured"):
        replan(failed_plan(), "x", Engine(registry=planner_registry))


def test_replan_lessons_and_language(planner_registry):
    plan = failed_plan().model_copy(update={"goal": "查一下订单 88231，到了就退",
                                            "language": "zh"})
    reply = {"steps": [{"id": "s4", "description": "回复用户", "tool": None, "depends_on": []}]}
    engine, model = engine_with(planner_registry, json.dumps(reply, ensure_ascii=False))
    new = replan(plan, "退款失败", engine, lessons=["退款前先确认状态"])
    system = model.requests[0]["messages"][0]["content"]
    assert "- 退款前先确认状态" in system and "Chinese" in system
    assert new.version == 2


def test_replanner_prompt_folds_long_results(planner_registry):
    plan = failed_plan()
    plan.step("s1").result = {"text": "x" * 5000}
    reply = {"steps": [{"id": "s4", "description": "Answer", "tool": None, "depends_on": []}]}
    engine, model = engine_with(planner_registry, json.dumps(reply))
    replan(plan, "boom", engine)
    user = model.requests[0]["messages"][1]["content"]
    line = next(x for x in user.splitlines() if x.startswith("- s1: "))
    assert len(line) == len("- s1: ") + 1200 and line.endswith("…")


def test_a_new_reasoning_step_does_not_wait_for_the_step_that_failed(planner_registry):
    reply = {"steps": [
        {"id": "s4", "description": "Tell the user what is known", "tool": None,
         "args": {"refund": "{{s2.refund_id}}", "order": "{{s1.order_id}}"},
         "depends_on": ["s1", "s2"]},
    ]}
    engine, _ = engine_with(planner_registry, json.dumps(reply))
    new = replan(failed_plan(), "s2 failed: refund service timed out", engine)
    assert new.ids() == ["s1", "s4"]
    assert new.step("s4").depends_on == ["s1"] and new.step("s4").args == {
        "order": "{{s1.order_id}}"}


def test_a_new_tool_step_that_only_waited_for_the_failed_step_no_longer_waits(
        planner_registry):
    reply = {"steps": [
        {"id": "s4", "description": "Look the order up again", "tool": "query_order",
         "args": {"order_id": "{{s1.order_id}}"}, "depends_on": ["s1", "s2"]},
        {"id": "s5", "description": "Answer", "tool": None, "depends_on": ["s4"]}]}
    engine, model = engine_with(planner_registry, json.dumps(reply))
    new = replan(failed_plan(), "s2 failed: refund service timed out", engine)
    assert len(model.requests) == 1  # nothing to correct: s4 reads nothing of s2
    assert new.step("s4").depends_on == ["s1"]
    assert new.validate(planner_registry) == []


def test_a_new_tool_step_reading_the_failed_step_is_told_what_to_read_instead(
        planner_registry):
    reads_failed = {"steps": [
        {"id": "s4", "description": "Refund again", "tool": "apply_refund",
         "args": {"order_id": "{{s2.order_id}}", "reason": "retry"}, "depends_on": ["s2"]},
        {"id": "s5", "description": "Answer", "tool": None, "depends_on": ["s4"]}]}
    fixed = {"steps": [
        {"id": "s4", "description": "Refund again", "tool": "apply_refund",
         "args": {"order_id": "{{s1.order_id}}", "reason": "retry"}, "depends_on": ["s1"]},
        {"id": "s5", "description": "Answer", "tool": None, "depends_on": ["s4"]}]}
    engine, model = engine_with(planner_registry, json.dumps(reads_failed), json.dumps(fixed))
    new = replan(failed_plan(), "s2 failed: refund service timed out", engine)
    assert new.step("s4").args["order_id"] == "{{s1.order_id}}"
    corrective = model.requests[1]["messages"][-1]["content"]
    assert ("s4 depends on or reads s2, which did not complete and is not in the new version"
            in corrective and "read a completed step (s1)" in corrective)


def _conversion_failed() -> Plan:
    return Plan(goal="What time is it in Tokyo?", version=1, steps=[
        Step(id="s1", description="The time in Tokyo", tool="get_current_time",
             args={"timezone": "Asia/Tokyo"}, status="completed",
             result={"timezone": "Asia/Tokyo", "datetime": "2026-12-03T03:41:23+09:00"}),
        Step(id="s2", description="Convert it to UTC", tool="calculate",
             args={"expression": "{{s1.datetime}} - 9"}, depends_on=["s1"], status="failed",
             error="calculate failed: not arithmetic"),
        Step(id="s3", description="Tell the user", depends_on=["s1", "s2"]),
    ])


def test_the_replanner_is_told_a_failed_lookup_nothing_waits_for_may_be_left_out(
        planner_registry):
    answer_only = json.dumps({"steps": [
        {"id": "s4", "description": "Tell the user", "tool": None, "depends_on": ["s1"]}]})
    engine, model = engine_with(planner_registry, answer_only)
    result = replan_request(_conversion_failed(), "s2 failed: not arithmetic", engine)
    told = model.requests[0]["messages"][-1]["content"]
    assert ("No other step waits for s2. If the results of the completed steps already "
            "answer every part of the goal, send only the synthesis step.") in told
    assert result.plan.ids() == ["s1", "s4"]


def test_a_failed_step_another_step_waits_for_is_not_offered_to_leave_out(planner_registry):
    plan = _conversion_failed()
    plan.steps.insert(2, Step(id="s4", description="Round it", tool="calculate",
                              args={"expression": "{{s2.value}}"}, depends_on=["s2"]))
    plan.steps[-1].depends_on = ["s1", "s4"]
    engine, model = engine_with(planner_registry, json.dumps({"steps": [
        {"id": "s5", "description": "Tell the user", "tool": None, "depends_on": ["s1"]}]}))
    replan_request(plan, "s2 failed: not arithmetic", engine)
    assert "No other step waits for" not in model.requests[0]["messages"][-1]["content"]
