"""Tests of checkpoint policies, decisions (rules and LLM) and applying them to a plan."""

from __future__ import annotations

import json

import pytest

from core.base.messages import render
from core.errors import LLMConnectionError, PlanParseError, PlanValidationError
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.diff import diff_plans
from core.plan.model import Plan, Step
from core.planning.checkpoint import (
    CheckpointDecision,
    apply_decision,
    checkpoint,
    checkpoint_action,
    run_checkpoint,
    steps_from_dicts,
)
from core.tools.registry import ToolHints, ToolRegistry, make_tool
from demo.offline import compose_answer, offline_plan
from tests.support.checkpoints import FINISH_EARLY, run_step, three_steps
from tests.support.fake_openai import text
from tests.support.fakes import ScriptedChatModel


def run_rest(plan: Plan, engine: Engine) -> None:
    for step in plan.topological_order():
        if step.status == "pending":
            run_step(plan, step, engine)




def test_policies() -> None:
    plan = three_steps()
    s1 = plan.step("s1")
    assert checkpoint_action("rigid", plan, s1) == "none"
    assert checkpoint_action("on_failure", plan, s1) == "none"
    assert checkpoint_action("adaptive", plan, s1) == "checkpoint"
    assert checkpoint_action("every_step", plan, s1) == "replan"
    assert checkpoint_action("adaptive", plan, plan.step("s2")) == "none"  # not completed


@pytest.mark.parametrize(("request_text", "reason_words", "answer_words"), [
    ("帮我看看订单 66001 到了没，到了的话帮我把那台坏的退掉",
     ["66001", "已在处理中", "RF20260620001"], ["退款中", "RF20260620001"]),
    ("Check order 66001 and if it was delivered, refund it because it is broken",
     ["already in progress", "RF20260620001"], ["refunding", "RF20260620001"]),
])
def test_adaptive_policy_drops_the_refund_of_an_order_already_refunding(
    registry: ToolRegistry, request_text: str, reason_words: list[str],
    answer_words: list[str],
) -> None:
    engine = Engine(registry)
    plan = offline_plan(request_text, registry)
    check = next(s for s in plan.steps if s.tool == "query_order")
    assert any(s.tool == "apply_refund" for s in plan.steps)
    run_step(plan, check, engine)
    assert checkpoint_action("adaptive", plan, check) == "checkpoint"

    decision, usage = checkpoint(plan, [check], engine)
    assert decision.needs_replan and usage.llm_calls == 0
    for word in reason_words:
        assert word in decision.reason

    new = apply_decision(plan, decision, registry)
    assert new is not None and new.version == plan.version + 1
    assert all(s.tool != "apply_refund" for s in new.steps)
    assert new.step(check.id).model_dump() == check.model_dump()  # untouched
    assert plan.version == 1 and any(s.tool == "apply_refund" for s in plan.steps)
    diff = diff_plans(plan, new)
    assert [s.tool for s in diff.removed] == ["apply_refund"]

    run_rest(new, engine)
    answer = new.steps[-1].result
    assert answer == compose_answer(new)
    for word in answer_words:
        assert word in answer
    assert registry.call("query_order", {"order_id": "66001"})["refund"]["refund_id"] == (
        "RF20260620001")


def test_offline_checkpoint_keeps_the_plan_when_the_premise_holds(
    registry: ToolRegistry,
) -> None:
    engine = Engine(registry)
    plan = offline_plan("帮我看看订单 88231 到了没，到了的话帮我把那台坏的退掉", registry)
    run_step(plan, plan.steps[0], engine)
    decision, _ = checkpoint(plan, [plan.steps[0]], engine)
    assert not decision.needs_replan
    assert apply_decision(plan, decision, registry) is None


def test_llm_checkpoint_replaces_pending_steps_with_fresh_ids(registry: ToolRegistry) -> None:
    plan = three_steps()
    reply = {
        "needs_replan": True, "can_finish_early": False, "reason": "track the parcel too",
        "updated_pending_steps": [
            {"id": "s1", "description": "trying to change a finished step"},
            {"id": "s2", "description": "Refund it", "tool": "apply_refund",
             "args": {"order_id": "88231"}, "depends_on": ["s1"],
             "condition": "s1.status == 'delivered'"},
            {"id": "step_x", "description": "Track the parcel", "tool": "query_logistics",
             "args": {"tracking_no": "{{s1.tracking_no}}"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "Tell the user", "tool": None,
             "depends_on": ["s1", "s2", "step_x"]},
        ],
    }
    model = ScriptedChatModel(["<think>hm</think>```json\n" + json.dumps(reply) + "\n```"])
    decision, usage = checkpoint(plan, [plan.step("s1")], Engine(ToolRegistry(), model))
    assert usage.llm_calls == 1
    sent = model.requests[0]
    assert sent["role"] == "planner" and sent["tools"] is None and sent["json_mode"]
    assert '"delivered"' in sent["messages"][1]["content"]
    assert "s4" in sent["messages"][0]["content"]  # the next id
    new = apply_decision(plan, decision, registry)
    assert new is not None
    assert new.ids() == ["s1", "s2", "s4", "s3"]
    assert new.step("s4").tool == "query_logistics"
    assert new.step("s3").depends_on == ["s1", "s2", "s4"]
    assert new.step("s1").model_dump() == plan.step("s1").model_dump()
    assert new.step("s1").description == "Look up order 88231"


def test_can_finish_early_keeps_only_the_synthesis(registry: ToolRegistry) -> None:
    plan = three_steps()
    plan.step("s1").result["status"] = "in_transit"  # the refund's condition fails
    model = ScriptedChatModel(['{"needs_replan": false, "can_finish_early": true, '
                               '"reason": "done", "updated_pending_steps": null}'])
    decision, _ = checkpoint(plan, [plan.step("s1")], Engine(ToolRegistry(), model))
    new = apply_decision(plan, decision, registry)
    assert new is not None and new.ids() == ["s1", "s3"]
    assert new.step("s3").depends_on == ["s1"]


def test_no_call_when_only_the_synthesis_is_pending() -> None:
    plan = three_steps()
    plan.step("s2").advance("skipped")
    decision, usage = checkpoint(plan, [plan.step("s1")], Engine(ToolRegistry(),
                                                              ScriptedChatModel([])))
    assert usage.llm_calls == 0 and not decision.needs_replan
    assert checkpoint_action("adaptive", plan, plan.step("s1")) == "none"


def test_unusable_checkpoint_reply_keeps_the_raw_text() -> None:
    plan = three_steps()
    model = ScriptedChatModel(["I think the plan is fine."])
    with pytest.raises(PlanParseError) as caught:
        checkpoint(plan, [plan.step("s1")], Engine(ToolRegistry(), model))
    assert caught.value.raw == "I think the plan is fine."


def test_apply_decision_returns_none_when_nothing_changes(registry: ToolRegistry) -> None:
    plan = three_steps()
    same = [e for e in plan.canonical()["steps"] if e["id"] != "s1"]
    assert apply_decision(plan, CheckpointDecision(reason="fine"), registry) is None
    decision = CheckpointDecision(needs_replan=True, updated_pending_steps=same)
    assert apply_decision(plan, decision, registry) is None


def test_apply_decision_rejects_a_cycle_and_drops_readers_of_dropped_steps(
        registry: ToolRegistry) -> None:
    plan = three_steps()
    cycle = CheckpointDecision(needs_replan=True, updated_pending_steps=[
        {"id": "s2", "description": "a", "tool": "apply_refund", "depends_on": ["s5"]},
        {"id": "s5", "description": "b", "tool": "query_order", "depends_on": ["s2"]},
        {"id": "s3", "description": "Tell the user", "depends_on": ["s2"]},
    ])
    with pytest.raises(PlanValidationError):
        apply_decision(plan, cycle, registry)
    plan.step("s1").result["status"] = "in_transit"  # s2 is not due: it may go
    dropped = CheckpointDecision(needs_replan=True, updated_pending_steps=[
        {"id": "s9", "description": "reads s2", "tool": "query_logistics",
         "args": {"tracking_no": "{{s2.tracking_no}}"}, "depends_on": ["s2"]},
    ])
    new = apply_decision(plan, dropped, registry)
    assert new is not None and new.ids() == ["s1", "s3"]


def test_steps_from_dicts_reads_seed_keys() -> None:
    plan = three_steps()
    steps = steps_from_dicts([{"step_id": "x", "description": "look", "tools_needed":
                               ["query_order"], "depends_on": []}], plan)
    assert steps[0].id == "s4" and steps[0].tool == "query_order"


def test_run_checkpoint_hook(registry: ToolRegistry) -> None:
    engine = Engine(registry)
    plan = offline_plan("帮我看看订单 66001 到了没，到了的话帮我把那台坏的退掉", registry)
    check = plan.steps[0]
    run_step(plan, check, engine)
    assert run_checkpoint("on_failure", plan, [check], engine).plan is None
    assert run_checkpoint("rigid", plan, [check], engine).action == "none"
    offline_every = run_checkpoint("every_step", plan, [check], engine,
                                   replanner=lambda *_: pytest.fail("no replan offline"))
    assert offline_every.action == "replan" and offline_every.plan is None
    result = run_checkpoint("adaptive", plan, [check], engine)
    assert result.action == "checkpoint" and result.plan is not None
    assert "66001" in result.reason and result.plan.version == 2


def test_run_checkpoint_every_step_calls_the_replanner() -> None:
    plan = three_steps()
    seen: list[str] = []

    def replanner(current: Plan, reason: str, engine: Engine) -> Plan:
        seen.append(reason)
        return current.model_copy(update={"version": current.version + 1})

    engine = Engine(ToolRegistry(), ScriptedChatModel([]))
    result = run_checkpoint("every_step", plan, [plan.step("s1")], engine, replanner=replanner)
    assert result.plan is not None and result.plan.version == 2
    assert seen == ["every-step replan after s1"]


def test_run_checkpoint_survives_a_bad_answer() -> None:
    plan = three_steps()
    engine = Engine(ToolRegistry(), ScriptedChatModel(["no idea", LLMConnectionError("down")]))
    result = run_checkpoint("adaptive", plan, [plan.step("s1")], engine)
    assert result.plan is None and "changed nothing" in result.warnings[0]
    result = run_checkpoint("adaptive", plan, [plan.step("s1")], engine)
    assert result.plan is None and "down" in result.warnings[0]


def test_adaptive_checkpoint_with_the_fake_endpoint_drops_the_refund(
    fake_openai, registry: ToolRegistry,
) -> None:
    plan = offline_plan("Check order 66001 and if it was delivered, refund it", registry)
    check = next(s for s in plan.steps if s.tool == "query_order")
    run_step(plan, check, Engine(registry))
    refund = next(s for s in plan.steps if s.tool == "apply_refund")
    synthesis = plan.steps[-1]
    fake_openai.script(text(json.dumps({
        "needs_replan": True, "can_finish_early": False,
        "reason": "order 66001 already has refund RF20260620001 in progress",
        "updated_pending_steps": [{"id": synthesis.id, "description": synthesis.description,
                                   "tool": None, "depends_on": [check.id]}],
    })))
    with OpenAIChatModel(fake_openai.settings()) as model:
        result = run_checkpoint("adaptive", plan, [check], Engine(registry, model))
    assert result.usage.llm_calls == 1
    assert "in progress" in result.reason
    assert result.plan is not None and refund.id not in result.plan.ids()
    body = fake_openai.chat_bodies[0]
    assert "tools" not in body
    assert "refunding" in body["messages"][1]["content"]
    assert refund.id in body["messages"][1]["content"]


def test_run_checkpoint_replans_when_no_steps_are_given() -> None:
    plan = three_steps()
    model = ScriptedChatModel(['{"needs_replan": true, "reason": "the order changed", '
                               '"updated_pending_steps": null}'])
    seen: list[str] = []

    def replanner(current: Plan, reason: str, engine: Engine) -> Plan:
        seen.append(reason)
        return current.model_copy(update={"version": 9})

    result = run_checkpoint("adaptive", plan, [plan.step("s1")], Engine(ToolRegistry(), model),
                            replanner=replanner)
    assert seen == ["the order changed"] and result.plan is not None
    assert result.plan.version == 9




def test_a_reason_in_another_language_becomes_what_changed(registry: ToolRegistry) -> None:
    plan = three_steps()
    plan.goal = "查一下订单 88231 的状态，已签收的话帮我退款"
    plan.language = "zh"
    plan.step("s2").description = "已签收则退款"
    plan.step("s1").result["status"] = "in_transit"  # the refund's condition fails
    model = ScriptedChatModel([FINISH_EARLY])
    result = run_checkpoint("adaptive", plan, [plan.step("s1")], Engine(registry, model))
    assert result.plan is not None and result.plan.ids() == ["s1", "s3"]
    assert result.reason == "去掉了 s2（已签收则退款）"
    same_language = FINISH_EARLY.replace("The goal is already met", "订单还没签收，不用退款")
    model = ScriptedChatModel([same_language.replace(" and the pending steps can be dropped.",
                                                     "")])
    result = run_checkpoint("adaptive", plan, [plan.step("s1")], Engine(registry, model))
    assert result.reason == "订单还没签收，不用退款"
    assert result.message is None  # a model's words: no code to word them otherwise


def test_a_checkpoint_cannot_plan_a_completed_side_effect_again(registry: ToolRegistry) -> None:
    plan = three_steps()
    refund = plan.step("s2")
    refund.status, refund.result = "completed", {"refund_id": "RF1", "status": "refunding"}
    plan.steps.insert(2, Step(id="s4", description="Note the time", tool="get_current_time"))
    again = {"needs_replan": True, "can_finish_early": False, "reason": "refund it",
             "updated_pending_steps": [
                 {"id": "s4", "description": "Note the time of the refund",
                  "tool": "get_current_time"},
                 {"id": "s5", "description": "Refund order 88231", "tool": "apply_refund",
                  "args": {"order_id": "88231"}},
                 {"id": "s3", "description": "Tell the user", "depends_on": ["s1", "s5"]}]}
    result = run_checkpoint("adaptive", plan, [plan.step("s2")],
                            Engine(registry, ScriptedChatModel([json.dumps(again)])))
    assert result.plan is not None and result.plan.ids() == ["s1", "s2", "s4", "s3"]
    assert result.plan.step("s3").depends_on == ["s1", "s2"]  # it read the repeat
    assert result.plan.warnings == ["s2 already did “Refund order 88231”; it is not done again"]


# ---- the offline rule reads the tools' declared hints, whatever the tools ----------------


def _ticket_tools(in_progress: tuple[str, ...]) -> ToolRegistry:
    registry = ToolRegistry()

    def find_ticket(ticket_id: str) -> dict:
        """Find a ticket.

        Args:
            ticket_id: the ticket.
        """
        return {"ticket_id": ticket_id, "status": "escalating"}

    def escalate(ticket_id: str) -> dict:
        """Escalate a ticket.

        Args:
            ticket_id: the ticket.
        """
        return {"ticket_id": ticket_id, "escalation_id": "E-1"}

    registry.add(make_tool(find_ticket, read_only=True))
    registry.add(make_tool(escalate, hints=ToolHints(in_progress=in_progress)))
    return registry


def _ticket_plan() -> Plan:
    # the drop guard lets a checkpoint drop an approved action only when its condition is
    # false: an escalation "if it is still open" is not due for a ticket already escalating
    return Plan(goal="Find ticket T-7 and escalate it if it is still open", steps=[
        Step(id="s1", description="Find ticket T-7", tool="find_ticket",
             args={"ticket_id": "T-7"}),
        Step(id="s2", description="Escalate it if it is open", tool="escalate",
             args={"ticket_id": "T-7"}, depends_on=["s1"], condition="s1.status == 'open'"),
        Step(id="s3", description="Answer", depends_on=["s1", "s2"]),
    ])


def test_a_side_effect_already_under_way_by_its_tools_own_hint_is_dropped_offline():
    registry = _ticket_tools(("escalating",))
    plan = _ticket_plan()
    run_step(plan, plan.step("s1"), Engine(registry))
    decision, _ = checkpoint(plan, [plan.step("s1")], Engine(registry))
    assert decision.needs_replan
    assert decision.reason == ("s1 shows ticket_id T-7 already in progress (T-7, escalating): "
                               "escalate is not needed again, so s2 was dropped")
    new = apply_decision(plan, decision, registry)
    assert new is not None and new.ids() == ["s1", "s3"]


def test_without_a_declared_in_progress_status_nothing_is_dropped():
    registry = _ticket_tools(())
    plan = _ticket_plan()
    run_step(plan, plan.step("s1"), Engine(registry))
    decision, _ = checkpoint(plan, [plan.step("s1")], Engine(registry))
    assert not decision.changes_plan


def test_the_rules_reason_keeps_its_code_and_its_words_whatever_it_quotes():
    """A version the rules made says why by a code (the run page words it in its reader's
    language), and the weak-model repair, which retells a model's reason given in another
    language as what changed, leaves the rules' own reason as it is, even when the record
    it quotes reads as another language."""
    registry = ToolRegistry()

    def find_ticket(ticket_id: str) -> dict:
        """Find a ticket.

        Args:
            ticket_id: the ticket.
        """
        return {"ticket_id": ticket_id, "team_id": "华东区售后服务中心第二客服组夜班",
                "status": "escalating"}

    registry.add(make_tool(find_ticket, read_only=True))
    registry.add(_ticket_tools(("escalating",)).get("escalate"))
    plan = _ticket_plan()
    run_step(plan, plan.step("s1"), Engine(registry))
    result = run_checkpoint("adaptive", plan, [plan.step("s1")], Engine(registry))
    assert result.plan is not None and result.plan.ids() == ["s1", "s3"]
    assert result.message is not None and result.message.code == "checkpoint.under_way"
    assert result.reason == render(result.message, "en") == (
        "s1 shows ticket_id T-7 already in progress (T-7, 华东区售后服务中心第二客服组夜班, "
        "escalating): escalate is not needed again, so s2 was dropped")
    assert render(result.message, "zh").startswith("s1 显示 ticket_id T-7 已在处理中")
