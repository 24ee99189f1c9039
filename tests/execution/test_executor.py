"""The four executor modes, conditions, offline behaviour and the LLM-call prediction."""

from __future__ import annotations

import threading

import pytest

from core.base.usage import Usage
from core.errors import ToolArgumentError
from core.execution.executor import execute_step, predict_llm_calls
from core.llm.client import ChatReply, ToolCall
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, current_idempotency_key, make_tool
from tests.support.fakes import ScriptedChatModel, tool_reply


class Shop:
    """Small tools that record how they were called."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict, str | None]] = []

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()
        register_builtin_tools(registry)

        def query_order(order_id: str) -> dict:
            """Look up an order.

            Args:
                order_id: the order number.
            """
            self.calls.append(("query_order", {"order_id": order_id}, current_idempotency_key()))
            return {"order_id": order_id, "status": "delivered", "tracking_no": "SF1"}

        def apply_refund(order_id: str, reason: str) -> dict:
            """Refund an order.

            Args:
                order_id: the order number.
                reason: why.
            """
            self.calls.append(("apply_refund", {"order_id": order_id, "reason": reason},
                               current_idempotency_key()))
            return {"refund_id": "R1", "order_id": order_id}

        def boom(x: int = 1) -> dict:
            """Always breaks."""
            raise RuntimeError("disk on fire")

        registry.add(make_tool(query_order, read_only=True))
        registry.add(make_tool(apply_refund))
        registry.add(make_tool(boom, read_only=True))
        return registry


@pytest.fixture
def shop() -> Shop:
    return Shop()


def _plan(*steps: Step, goal: str = "Check order 88231 and refund it if delivered") -> Plan:
    return Plan(goal=goal, steps=list(steps))


def _engine(shop: Shop, *replies, delay_s: float = 0.0) -> tuple[Engine, ScriptedChatModel]:
    model = ScriptedChatModel(replies=list(replies), delay_s=delay_s)
    return Engine(registry=shop.registry(), model=model), model


def test_complete_tool_step_makes_no_llm_call(shop):
    engine, model = _engine(shop)
    step = Step(id="s1", description="look up", tool="query_order", args={"order_id": "88231"})
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "completed" and outcome.mode == "direct"
    assert outcome.result["status"] == "delivered"
    assert outcome.usage.llm_calls == 0 and model.requests == []
    assert outcome.resolved_args == {"order_id": "88231"}


def test_references_are_resolved_before_the_direct_call(shop):
    engine, _ = _engine(shop)
    s1 = Step(id="s1", description="look up", tool="query_order", args={"order_id": "1"},
              status="completed", result={"order_id": "88231"})
    s2 = Step(id="s2", description="refund", tool="apply_refund", depends_on=["s1"],
              args={"order_id": "{{s1.order_id}}", "reason": "broken"})
    outcome = execute_step(_plan(s1, s2), s2, engine, idempotency_key="run:s2:v1")
    assert outcome.status == "completed"
    assert outcome.resolved_args == {"order_id": "88231", "reason": "broken"}
    assert shop.calls == [("apply_refund", {"order_id": "88231", "reason": "broken"},
                           "run:s2:v1")]


def test_unresolvable_reference_fails_the_step_naming_it(shop):
    engine, model = _engine(shop)
    s1 = Step(id="s1", description="look up", tool="query_order", status="completed",
              result={"order_id": "88231"})
    s2 = Step(id="s2", description="refund", tool="apply_refund", depends_on=["s1"],
              args={"order_id": "{{s1.tracking}}", "reason": "x"})
    outcome = execute_step(_plan(s1, s2), s2, engine)
    assert outcome.status == "failed"
    assert "{{s1.tracking}}" in outcome.error and "s2" in outcome.error
    assert shop.calls == [] and model.requests == []


def test_missing_arguments_make_one_forced_call_exposing_only_that_tool(shop):
    engine, model = _engine(shop, tool_reply("apply_refund", {"order_id": "88231",
                                                              "reason": "from model"}))
    step = Step(id="s1", description="refund order 88231", tool="apply_refund",
                args={"reason": "broken"})
    outcome = execute_step(_plan(step), step, engine, idempotency_key="k1")
    assert outcome.status == "completed" and outcome.mode == "forced_tool"
    assert len(model.requests) == 1
    request = model.requests[0]
    assert len(request["tools"]) == 1
    assert request["tools"][0]["function"]["name"] == "apply_refund"
    assert request["tool_choice"] == {"type": "function", "function": {"name": "apply_refund"}}
    # the plan's own value wins over the model's
    assert outcome.resolved_args == {"order_id": "88231", "reason": "broken"}
    assert shop.calls[0][2] == "k1"
    assert outcome.usage.llm_calls == 1


def test_args_none_always_infers_even_with_defaults(shop):
    engine, model = _engine(shop, tool_reply("get_current_time", {"timezone": "UTC"}))
    step = Step(id="s1", description="what time is it in UTC", tool="get_current_time")
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.mode == "forced_tool" and outcome.status == "completed"
    assert outcome.result["timezone"] == "UTC" and len(model.requests) == 1


def test_forced_call_ignored_by_the_provider_fails_clearly(shop):
    engine, model = _engine(shop, "I think you should refund it.", "Refund order 88231.")
    step = Step(id="s1", description="refund", tool="apply_refund")
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "failed"
    assert "did not call apply_refund (tool_choice 'named' was not honoured)" in outcome.error
    assert "asked for apply_refund's arguments as JSON, the model answered 'Refund order " \
        "88231.'" in outcome.notes
    assert shop.calls == []  # no tool at all ran
    assert len(model.requests) == 2 and outcome.usage.llm_calls == 2


def test_a_model_that_answers_in_words_is_asked_for_the_arguments_as_json(shop):
    # a 1.5B model on llama.cpp answered every forced diagnose call with text
    engine, model = _engine(shop, "Service order-service looks degraded.",
                            '{"order_id": "88231", "reason": "broken"}')
    step = Step(id="s1", description="refund order 88231", tool="apply_refund")
    outcome = execute_step(_plan(step), step, engine, idempotency_key="k1")
    assert outcome.status == "completed"
    assert outcome.resolved_args == {"order_id": "88231", "reason": "broken"}
    assert "the model gave apply_refund's arguments as JSON" in outcome.notes
    ask = model.requests[1]
    assert ask["tools"] is None and ask["json_mode"] is True
    assert ask["json_schema"]["schema"] == engine.registry.get("apply_refund").parameters
    assert ask["messages"][-1]["content"].startswith("Do not answer in words.")


def test_a_tool_needing_nothing_runs_with_its_defaults_when_the_model_does_not_call_it(shop):
    engine, model = _engine(shop, "It is probably around noon.")
    step = Step(id="s1", description="Retrieve the current time", tool="get_current_time")
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "completed" and outcome.mode == "forced_tool"
    assert outcome.result["timezone"] == "Asia/Shanghai"  # the tool's default, not the text
    assert "did not call get_current_time" in " ".join(outcome.notes)
    assert len(model.requests) == 1


def test_invalid_model_arguments_are_rejected_before_the_call(shop):
    engine, _ = _engine(shop, tool_reply("apply_refund", {"order_id": 5, "bogus": True}))
    step = Step(id="s1", description="refund", tool="apply_refund")
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "failed" and "rejected" in outcome.error
    assert shop.calls == []


def test_synthesis_has_no_tools_and_follows_the_request_language(shop):
    engine, model = _engine(shop, "订单已签收，退款已提交。")
    s1 = Step(id="s1", description="查询", tool="query_order", status="completed",
              result={"status": "delivered"})
    s2 = Step(id="s2", description="综合回复", depends_on=["s1"])
    plan = _plan(s1, s2, goal="帮我查一下订单88231到了没有，到了就退款")
    outcome = execute_step(plan, s2, engine)
    assert outcome.status == "completed" and outcome.mode == "synthesis"
    assert outcome.result == "订单已签收，退款已提交。"
    request = model.requests[0]
    assert request["tools"] is None and request["tool_choice"] is None
    system = request["messages"][0]["content"]
    assert "Chinese" in system and "delivered" in system


def test_react_is_bounded_and_never_offered_side_effecting_tools(shop):
    engine, model = _engine(
        shop,
        tool_reply("query_order", {"order_id": "1"}, call_id="a"),
        tool_reply("apply_refund", {"order_id": "1", "reason": "r"}, call_id="b"),
        "The order was delivered.",
    )
    s1 = Step(id="s1", description="think about the order", depends_on=[])
    s2 = Step(id="s2", description="answer", depends_on=["s1"])
    outcome = execute_step(_plan(s1, s2), s1, engine)
    assert outcome.status == "completed" and outcome.mode == "react"
    assert outcome.result == "The order was delivered."
    assert len(model.requests) == 3
    assert [len(r["messages"]) for r in model.requests] == [2, 4, 7]  # grows only by rounds
    for request in model.requests[:2]:
        names = {t["function"]["name"] for t in request["tools"]}
        assert "query_order" in names and "apply_refund" not in names
    assert model.requests[2]["tools"] is None  # the last round must answer
    assert [c[0] for c in shop.calls] == ["query_order"]  # the refund was refused
    refusal = model.requests[2]["messages"][-2]
    assert refusal["role"] == "tool" and "not available" in refusal["content"]
    calls = [m for m in model.requests[2]["messages"] if m.get("tool_calls")]
    assert [m["content"] for m in calls] == ["", ""]  # text, never null (llama.cpp refuses it)
    assert outcome.usage.llm_calls == 3


def test_react_without_an_answer_fails(shop):
    engine, _ = _engine(shop, *[tool_reply("query_order", {"order_id": "1"})] * 3)
    s1 = Step(id="s1", description="think", depends_on=[])
    outcome = execute_step(_plan(s1, Step(id="s2", description="answer",
                                          depends_on=["s1"])), s1, engine)
    assert outcome.status == "failed" and "3 rounds" in outcome.error
    assert outcome.usage.llm_calls == 3


def test_false_expression_condition_skips_without_llm(shop):
    engine, model = _engine(shop)
    s1 = Step(id="s1", description="look up", tool="query_order", status="completed",
              result={"status": "in_transit"})
    s2 = Step(id="s2", description="refund", tool="apply_refund", depends_on=["s1"],
              args={"order_id": "1", "reason": "r"}, condition="s1.status == 'delivered'")
    outcome = execute_step(_plan(s1, s2), s2, engine)
    assert outcome.status == "skipped" and outcome.mode == "condition"
    assert "condition not met" in outcome.error
    assert shop.calls == [] and model.requests == []


def test_prose_condition_is_judged_by_one_llm_call(shop):
    engine, model = _engine(shop, "no")
    step = Step(id="s1", description="refund", tool="apply_refund",
                args={"order_id": "1", "reason": "r"}, condition="the customer is unhappy")
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "skipped" and len(model.requests) == 1
    assert model.requests[0]["tools"] is None and outcome.usage.llm_calls == 1
    engine, model = _engine(shop, "Yes.")
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "completed" and outcome.usage.llm_calls == 1


def test_offline_behaviour(shop):
    engine = Engine(registry=shop.registry(), model=None)
    prose = Step(id="s1", description="look up", tool="query_order",
                 args={"order_id": "7"}, condition="if it seems useful")
    outcome = execute_step(_plan(prose), prose, engine)
    assert outcome.status == "skipped" and "skipped to be safe" in outcome.notes[0]
    assert outcome.result is None  # the tool never ran on a guess
    missing = Step(id="s1", description="refund", tool="apply_refund")
    outcome = execute_step(_plan(missing), missing, engine)
    assert outcome.status == "failed" and "order_id" in outcome.error
    assert "no LLM" in outcome.error
    reasoning = Step(id="s1", description="think")
    plan = _plan(reasoning, Step(id="s2", description="answer", depends_on=["s1"]))
    outcome = execute_step(plan, reasoning, engine)
    assert outcome.status == "failed" and "needs an LLM" in outcome.error
    done = Step(id="s1", description="look up", tool="query_order", status="completed",
                result={"status": "delivered"})
    synthesis = Step(id="s2", description="answer", depends_on=["s1"])
    outcome = execute_step(_plan(done, synthesis), synthesis, engine)
    assert outcome.status == "completed" and "delivered" in outcome.result


def test_a_raising_tool_ends_its_step_with_the_message(shop):
    engine, _ = _engine(shop)
    step = Step(id="s1", description="explode", tool="boom", args={"x": 2})
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "failed" and "disk on fire" in outcome.error


def test_unknown_tool_and_llm_errors_fail_the_step(shop):
    engine, _ = _engine(shop, RuntimeError("socket closed"))
    step = Step(id="s1", description="x", tool="nope", args={})
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "failed" and "nope" in outcome.error
    step = Step(id="s1", description="refund", tool="apply_refund")
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "failed" and "socket closed" in outcome.error


def test_cancelled_before_start_is_skipped(shop):
    engine, _ = _engine(shop)
    cancel = threading.Event()
    cancel.set()
    step = Step(id="s1", description="look up", tool="query_order", args={"order_id": "1"})
    outcome = execute_step(_plan(step), step, engine, cancel=cancel)
    assert outcome.status == "skipped" and shop.calls == []


def test_usage_of_the_forced_call_is_kept_when_the_step_fails(shop):
    reply = ChatReply(tool_calls=[ToolCall(id="1", name="apply_refund", arguments="{oops")],
                      usage=Usage(llm_calls=1, prompt_tokens=70, completion_tokens=5))
    engine, _ = _engine(shop, reply)
    step = Step(id="s1", description="refund", tool="apply_refund")
    outcome = execute_step(_plan(step), step, engine)
    assert outcome.status == "failed" and "not JSON" in outcome.error
    assert outcome.usage == Usage(llm_calls=1, prompt_tokens=70, completion_tokens=5)


def test_predict_llm_calls(shop):
    registry = shop.registry()
    plan = _plan(
        Step(id="s1", description="a", tool="query_order", args={"order_id": "1"}),
        Step(id="s2", description="b", tool="apply_refund", args={"reason": "r"}),
        Step(id="s3", description="c", tool="get_current_time"),
        Step(id="s4", description="d", depends_on=["s1"], condition="worth it"),
        Step(id="s5", description="e", tool="query_order", status="completed",
             args={}, result={}),
        Step(id="s6", description="answer", depends_on=["s1", "s2", "s3", "s4"]),
    )
    # s2 forced, s3 forced, s4 react + prose condition, s6 synthesis; s1 direct, s5 done
    assert predict_llm_calls(plan, registry) == 5


def test_react_stops_when_the_run_is_cancelled(shop):
    cancel = threading.Event()

    def first(request):
        cancel.set()  # a person cancels while the first round is thinking
        return tool_reply("query_order", {"order_id": "1"})

    engine, model = _engine(shop, first)
    s1 = Step(id="s1", description="think")
    outcome = execute_step(_plan(s1, Step(id="s2", description="answer", depends_on=["s1"])),
                           s1, engine, cancel=cancel)
    assert outcome.status == "skipped" and "cancelled" in outcome.error
    assert len(model.requests) == 1 and outcome.usage.llm_calls == 1


def test_a_read_only_tool_refusing_the_models_arguments_is_called_again_with_its_error(shop):
    engine, model = _engine(shop, tool_reply("get_current_time", {"timezone": "Tokyo"}),
                            tool_reply("get_current_time", {"timezone": "Asia/Tokyo"}))
    step = Step(id="s1", description="what time is it in Tokyo", tool="get_current_time")
    outcome = execute_step(_plan(step, goal="What time is it in Tokyo?"), step, engine)
    assert outcome.status == "completed" and outcome.result["timezone"] == "Asia/Tokyo"
    assert len(model.requests) == 2 and outcome.usage.llm_calls == 2
    told = model.requests[1]["messages"][-1]["content"]
    assert '{"timezone": "Tokyo"}' in told and "'Tokyo'" in told  # the arguments, the error


def _clock_registry(calls: list[dict], *, read_only: bool = True) -> ToolRegistry:
    def convert_time(source_timezone: str, time: str, target_timezone: str) -> dict:
        """Convert a time between timezones.

        Args:
            source_timezone: IANA name.
            time: the time in 24-hour format (HH:MM).
            target_timezone: IANA name.
        """
        calls.append({"source_timezone": source_timezone, "time": time,
                      "target_timezone": target_timezone})
        if len(time) != 5 or time[2] != ":":
            raise ToolArgumentError("Invalid time format. Expected HH:MM [24-hour format]")
        return {"target": {"timezone": target_timezone, "time": time}}

    registry = ToolRegistry()
    register_builtin_tools(registry)
    registry.add(make_tool(convert_time, read_only=read_only))
    return registry


def _converting(registry: ToolRegistry) -> tuple[Plan, Step]:
    clock = Step(id="s1", description="the time in London", status="completed",
                 result={"timezone": "Europe/London", "datetime": "2026-12-02T18:41:36+00:00"})
    step = Step(id="s2", description="convert it to Tokyo time", tool="convert_time",
                args={"source_timezone": "Europe/London", "time": "{{s1.datetime}}",
                      "target_timezone": "Asia/Tokyo"}, depends_on=["s1"])
    return _plan(clock, step, goal="What time is it in Tokyo when it is now in London?"), step


def test_a_value_read_from_a_step_that_the_tool_refuses_is_rewritten_by_the_model_once():
    calls: list[dict] = []
    registry = _clock_registry(calls)
    plan, step = _converting(registry)
    model = ScriptedChatModel(replies=[tool_reply("convert_time", {
        "source_timezone": "Asia/Shanghai", "time": "18:41", "target_timezone": "Asia/Tokyo"})])
    outcome = execute_step(plan, step, Engine(registry=registry, model=model))
    assert outcome.status == "completed" and outcome.mode == "forced_tool"
    assert [call["time"] for call in calls] == ["2026-12-02T18:41:36+00:00", "18:41"]
    # the plan's own values stand; only the one read from s1 was the model's to rewrite
    assert calls[1]["source_timezone"] == "Europe/London"
    told = model.requests[0]["messages"][-1]["content"]
    assert "2026-12-02T18:41:36+00:00" in told and "Expected HH:MM" in told
    assert '"source_timezone": "Europe/London"' in model.requests[0]["messages"][0]["content"]


@pytest.mark.parametrize("written", ["noon", "at {{s1.datetime}}"])
def test_a_refused_value_the_plan_wrote_itself_fails_without_asking_the_model(written):
    calls: list[dict] = []
    registry = _clock_registry(calls)
    plan, step = _converting(registry)
    step.args["time"] = written  # its own words, or a reference inside them
    model = ScriptedChatModel(replies=[])
    outcome = execute_step(plan, step, Engine(registry=registry, model=model))
    assert outcome.status == "failed" and "Expected HH:MM" in outcome.error
    assert len(calls) == 1 and model.requests == []


def test_a_side_effect_refusing_a_value_read_from_a_step_is_not_called_again():
    calls: list[dict] = []
    registry = _clock_registry(calls, read_only=False)
    plan, step = _converting(registry)
    model = ScriptedChatModel(replies=[])
    outcome = execute_step(plan, step, Engine(registry=registry, model=model))
    assert outcome.status == "failed" and len(calls) == 1 and model.requests == []


def test_a_side_effect_refusing_the_models_arguments_is_not_called_again():
    attempts: list[str] = []

    def cancel_order(order_id: str) -> dict:
        """Cancel an order.

        Args:
            order_id: the order number, digits only.
        """
        attempts.append(order_id)
        if not order_id.isdigit():
            raise ToolArgumentError(f"order_id {order_id!r} is not digits")
        return {"cancelled": order_id}

    registry = ToolRegistry()
    registry.add(make_tool(cancel_order))
    model = ScriptedChatModel(replies=[tool_reply("cancel_order", {"order_id": "A-88231"}),
                                       tool_reply("cancel_order", {"order_id": "88231"})])
    step = Step(id="s1", description="cancel order A-88231", tool="cancel_order")
    outcome = execute_step(_plan(step, goal="Cancel order A-88231"), step,
                           Engine(registry=registry, model=model))
    assert outcome.status == "failed" and "is not digits" in outcome.error
    assert attempts == ["A-88231"] and len(model.requests) == 1
