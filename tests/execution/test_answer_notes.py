"""Tests of what the final answer must say: the identifiers of what was done, and the
parts of the request no step looked into."""

from __future__ import annotations

import pytest

from core.execution.answer_notes import receipt_note
from core.execution.scheduler import RunOptions, run_plan
from core.llm.engine import Engine
from core.llm.providers import PROFILES
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry, make_tool
from tests.support.fake_openai import text
from tests.support.fakes import ScriptedChatModel, answer

NO_CONFIRMATION = RunOptions(confirm_side_effects=False)  # the plan counts as approved


def registry() -> ToolRegistry:
    def refund(order_id: str) -> dict:
        """Refund an order.

        Args:
            order_id: the order.
        """
        return {"refund_id": "RF20260620001", "order_id": order_id, "status": "processing"}

    def look(order_id: str) -> dict:
        """Look an order up.

        Args:
            order_id: the order.
        """
        return {"order_id": order_id, "tracking_id": "SF1122334455"}

    tools = ToolRegistry()
    tools.add(make_tool(refund))
    tools.add(make_tool(look, read_only=True))
    return tools


def refund_plan(goal: str) -> Plan:
    return Plan(goal=goal, steps=[
        Step(id="s1", description="look up order 66001", tool="look",
             args={"order_id": "66001"}),
        Step(id="s2", description="refund order 66001", tool="refund",
             args={"order_id": "66001"}, depends_on=["s1"]),
        answer("s3", "s1", "s2")])


@pytest.mark.parametrize(("goal", "reply", "note"), [
    ("Please refund order 66001", "A refund has already been initiated for order 66001.",
     "Done on your behalf:\n- s2 (refund order 66001): refund_id RF20260620001 (processing)"),
    ("请帮我退掉订单 66001", "订单 66001 的退款已经发起。",
     "已执行的操作：\n- s2（refund order 66001）：refund_id RF20260620001 (processing)"),
])
def test_an_answer_without_the_refund_id_gets_it_added(goal, reply, note):
    model = ScriptedChatModel([reply])
    outcome = run_plan(refund_plan(goal), Engine(registry=registry(), model=model),
                       options=NO_CONFIRMATION)
    assert outcome.status == "completed"
    assert outcome.answer == f"{reply}\n\n{note}"


def test_nothing_is_added_when_the_answer_names_it_or_nothing_was_done():
    plan = refund_plan("Please refund order 66001")
    model = ScriptedChatModel(["Refund RF20260620001 for order 66001 is being processed."])
    outcome = run_plan(plan, Engine(registry=registry(), model=model),
                       options=NO_CONFIRMATION)
    assert outcome.answer == "Refund RF20260620001 for order 66001 is being processed."
    looked_up_only = refund_plan("Where is order 66001?")
    looked_up_only.steps[0].status, looked_up_only.steps[0].result = "completed", {
        "order_id": "66001", "tracking_id": "SF1122334455"}  # a read names no receipt
    assert receipt_note(looked_up_only, "It is on its way.", registry()) == ""


def clock_registry() -> ToolRegistry:
    def current_time(timezone: str) -> dict:
        """The time now in a time zone.

        Args:
            timezone: an IANA name.
        """
        return {"timezone": timezone, "datetime": "2026-12-03T04:55:00+09:00"}

    tools = ToolRegistry()
    tools.add(make_tool(current_time, read_only=True))
    return tools


def time_plan(goal: str) -> Plan:
    return Plan(goal=goal, language="zh" if "东京" in goal else "en", steps=[
        Step(id="s1", description="Get the current time in Tokyo", tool="current_time",
             args={"timezone": "Asia/Tokyo"}),
        answer("s2", "s1")])


def test_a_part_of_the_request_no_step_looked_into_is_named_under_the_answer():
    goal = "What was the last commit's message in /srv/repo, and what time is it in Tokyo?"
    model = ScriptedChatModel(replies=['The last commit was "Update README.md"; it is 04:55 '
                                       'in Tokyo.'])
    outcome = run_plan(time_plan(goal), Engine(registry=clock_registry(), model=model),
                       options=NO_CONFIRMATION)
    assert outcome.answer.endswith(
        "⚠️ No step of the plan looked into this part of the request, so nothing the answer "
        "says about it comes from a result: \"What was the last commit's message in "
        "/srv/repo\"")
    assert "what time is it in Tokyo" not in outcome.answer.split("⚠️")[1]


def test_the_note_is_in_the_requests_language():
    goal = "/srv/repo 最近一次提交的说明是什么？东京现在几点？"
    model = ScriptedChatModel(replies=["东京现在是 04:55。"])
    outcome = run_plan(time_plan(goal), Engine(registry=clock_registry(), model=model),
                       options=NO_CONFIRMATION)
    assert "⚠️ 计划中没有步骤处理请求的这一部分" in outcome.answer
    assert "/srv/repo 最近一次提交的说明是什么" in outcome.answer.split("⚠️")[1]


def test_a_request_every_part_of_which_has_a_step_gets_no_such_note():
    plan = time_plan("What time is it in Tokyo, and what time is it in London?")
    plan.steps.insert(1, Step(id="s3", description="Get the current time in London",
                              tool="current_time", args={"timezone": "Europe/London"}))
    plan.steps[-1].depends_on.append("s3")
    model = ScriptedChatModel(replies=["It is 04:55 in Tokyo and 19:55 in London."])
    outcome = run_plan(plan, Engine(registry=clock_registry(), model=model),
                       options=NO_CONFIRMATION)
    assert outcome.answer == "It is 04:55 in Tokyo and 19:55 in London."


class _Hosted(ScriptedChatModel):
    """A model whose profile runs no workaround for weak models (PLANBOARD_WEAK_MODEL_CHECKS
    off reads the same)."""

    profile = PROFILES["generic"].model_copy(update={"weak_model_checks": False})


def test_the_note_follows_the_switch_of_the_check_it_comes_from():
    """Coverage is a check for weak models: its note under the answer is one too."""
    goal = "What was the last commit's message in /srv/repo, and what time is it in Tokyo?"
    model = _Hosted(replies=["It is 04:55 in Tokyo; no step looked up the commit."])
    outcome = run_plan(time_plan(goal), Engine(registry=clock_registry(), model=model),
                       options=NO_CONFIRMATION)
    assert outcome.answer == "It is 04:55 in Tokyo; no step looked up the commit."


def calculation_plan(expression: str) -> Plan:
    goal = "Count the bottles in three crates of (40 + 2) * 3 bottles"
    return Plan(goal=goal, steps=[
        Step(id="s1", description="Count the bottles", tool="calculate",
             args={"expression": expression}),
        Step(id="s2", description="Answer the user", depends_on=["s1"]),
    ])


@pytest.mark.parametrize("weak", [True, False], ids=["weak checks on", "weak checks off"])
def test_an_answer_that_states_another_expression_than_the_one_computed_gets_a_note(
        fake_openai, weak):
    """The calculation dropped the request's parentheses (40 + 2 * 3 = 46); the answer
    restates the request's expression with that result."""
    from core.llm.client import OpenAIChatModel
    from core.tools.toolsets import default_registry

    fake_openai.script(text("(40 + 2) * 3 is 46 bottles."), text("(40 + 2) * 3 is 126 bottles."))
    with OpenAIChatModel(fake_openai.settings(weak_model_checks=weak)) as model:
        engine = Engine(registry=default_registry({}), model=model)
        wrong = run_plan(calculation_plan("40 + 2 * 3"), engine,
                         options=RunOptions(confirm_side_effects=False))
        right = run_plan(calculation_plan("(40 + 2) * 3"), engine,
                         options=RunOptions(confirm_side_effects=False))
    assert wrong.answer == (
        "(40 + 2) * 3 is 46 bottles.\n\n⚠️ The answer gives 46 for (40 + 2) * 3, but 46 is "
        "what s1 computed for 40 + 2 * 3; (40 + 2) * 3 is 126")
    assert right.answer == "(40 + 2) * 3 is 126 bottles."
