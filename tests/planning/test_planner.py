"""Tests of the planner and replanner with a scripted chat model (no network)."""

from __future__ import annotations

import json

import pytest

from core.errors import ConfigError, LLMConnectionError
from core.execution.context import context_step_ids
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.planning.checks.code_arguments import reason_instead_of_code
from core.planning.planner import (
    fallback_plan,
    make_plan,
    normalise_tool_names,
    plan_request,
)
from core.prompts.planning import (
    describe_tools,
    describe_tools_compact,
    lessons_block,
    planner_system_prompt,
)
from core.runs.session import request_language
from core.tools.registry import tool
from tests.support.checks import found
from tests.support.planning import REQUEST, engine_with

GOOD = {
    "goal": REQUEST,
    "definition_of_done": "the user knows the refund status",
    "constraints": [],
    "steps": [
        {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
         "args": {"order_id": "88231"}, "depends_on": []},
        {"id": "s2", "description": "Refund it if delivered", "tool": "apply_refund",
         "args": {"order_id": "{{s1.order_id}}"}, "depends_on": ["s1"],
         "condition": "s1.status == 'delivered'"},
        {"id": "s3", "description": "Tell the user", "tool": None, "depends_on": ["s1", "s2"]},
    ],
}


# ---- planning -----------------------------------------------------------------------------


def test_without_a_model_planning_says_how_to_configure_one(planner_registry):
    with pytest.raises(ConfigError, match=r"No LLM is configured: set OPENAI_API_KEY.*--offline"):
        make_plan(REQUEST, Engine(registry=planner_registry),
                  language=request_language(REQUEST))


def test_one_plain_json_call_without_tools(planner_registry):
    engine, model = engine_with(planner_registry, json.dumps(GOOD))
    result = plan_request(REQUEST, engine, language=request_language(REQUEST))
    assert result.plan is not None and result.plan.canonical() == {**GOOD, "language": "en"}
    assert (result.attempts, result.fallback, result.errors) == (1, False, [])
    assert result.usage.llm_calls == 1 and result.usage.prompt_tokens == 100
    assert result.raw_replies == [json.dumps(GOOD)]
    [request] = model.requests
    assert request["role"] == "planner"
    assert request["tools"] is None and request["tool_choice"] is None
    assert request["json_mode"] is True
    system, user = request["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert REQUEST in user["content"]


def test_system_prompt_holds_the_catalogue_and_the_principles(planner_registry):
    engine, model = engine_with(planner_registry, json.dumps(GOOD))
    make_plan(REQUEST, engine, language=request_language(REQUEST))
    system = model.requests[0]["messages"][0]["content"]
    assert "- query_order(order_id: string (the order number.)): Look up an order" in system
    assert (
        '- apply_refund(order_id: string (the order number.), reason: string = "not given" '
        "(why.)) [side effect]: Request a refund" in system
    )
    for principle in ("One action per step", "3 to 10 steps", "s2.status == 'delivered'",
                      "{{sN.field}}", "synthesis step", "in English", '"definition_of_done"'):
        assert principle in system
    assert "Lessons from earlier runs" not in system


def test_descriptions_follow_the_language_of_the_request(planner_registry):
    engine, model = engine_with(planner_registry, json.dumps(GOOD))
    make_plan("查一下订单 88231 到了没，到了就退掉", engine, language="zh")
    assert "the constraints in Chinese (简体中文), the" in (
        model.requests[0]["messages"][0]["content"]
    )


def test_lessons_are_injected_into_the_prompt(planner_registry):
    engine, model = engine_with(planner_registry, json.dumps(GOOD))
    make_plan(REQUEST, engine, lessons=["Check the order before refunding", "  ", ""],
              language=request_language(REQUEST))
    system = model.requests[0]["messages"][0]["content"]
    assert "Lessons from earlier runs (avoid repeating these mistakes):\n" in system
    assert "- Check the order before refunding" in system
    assert lessons_block([]) == "" and lessons_block(["  "]) == ""


def test_seed_format_with_camel_case_tools_is_normalised_and_accepted(planner_registry):
    reply = json.dumps([
        {"stepId": 1, "description": "查询订单 88231", "toolHint": "queryOrder"},
        {"stepId": 2, "description": "如果已签收就退款", "toolHint": "applyRefund"},
        {"stepId": 3, "description": "综合以上结果", "toolHint": None},
    ], ensure_ascii=False)
    seed_reply = f"好的：\n```json\n{reply}\n```"
    engine, _ = engine_with(planner_registry, seed_reply, seed_reply)
    plan = make_plan("订单 88231 到了就退", engine, language="zh")
    assert [s.tool for s in plan.steps] == ["query_order", "apply_refund", None]
    assert plan.validate(planner_registry) == []
    # the seed format has no conditions: the refund's "如果已签收" is only words
    assert any("s2（apply_refund）的描述带条件" in warning for warning in plan.warnings)


def test_corrective_retry_sends_the_parse_error_back(planner_registry):
    engine, model = engine_with(planner_registry, "Sorry, I am not sure.", json.dumps(GOOD))
    result = plan_request(REQUEST, engine, language=request_language(REQUEST))
    assert result.plan is not None and result.plan.canonical() == {**GOOD, "language": "en"}
    assert result.attempts == 2 and result.usage.llm_calls == 2
    assert result.errors == [
        "attempt 1: the reply holds no JSON object or array; answer with the plan as JSON"
    ]
    retry = model.requests[1]
    assert retry["tools"] is None and retry["json_mode"] is True
    messages = retry["messages"]
    assert messages[:2] == model.requests[0]["messages"][:2]
    assert messages[2] == {"role": "assistant", "content": "Sorry, I am not sure."}
    assert messages[3]["role"] == "user"
    assert "- the reply holds no JSON object or array" in messages[3]["content"]
    assert "corrected plan" in messages[3]["content"]


def test_corrective_retry_sends_validation_problems_back(planner_registry):
    bad = json.loads(json.dumps(GOOD))
    bad["steps"][0]["tool"] = "fly"
    bad["steps"][2]["depends_on"] = ["s1", "s9"]
    engine, model = engine_with(planner_registry, json.dumps(bad), json.dumps(GOOD))
    plan = make_plan(REQUEST, engine, language=request_language(REQUEST))
    assert plan.step("s1").tool == "query_order"
    feedback = model.requests[1]["messages"][3]["content"]
    assert "- s1 uses unknown tool 'fly'" in feedback
    assert "- s3 depends on unknown step s9" in feedback


def test_code_given_to_calculate_becomes_a_reasoning_step_before_the_run(planner_registry):
    # a 1.5B model wrote this to "check" an earbud, and wrote it again when sent back
    bad = json.loads(json.dumps(GOOD))
    bad["steps"].insert(1, {"id": "s9", "description": "Check the earbud", "tool": "calculate",
                            "args": {"expression": "if(order['left_earbud'] == 'silent', 1, 0)"},
                            "depends_on": ["s1"]})
    engine, _ = engine_with(planner_registry, json.dumps(bad))
    result = plan_request(REQUEST, engine, language=request_language(REQUEST))
    assert result.attempts == 1 and not result.fallback
    check = result.plan.step("s9")
    assert (check.tool, check.args, check.depends_on) == (None, {}, ["s1"])
    assert result.plan.warnings == [
        "s9 gave calculate code, not arithmetic ({\"expression\": \"if(order['left_earbud'] == "
        "'silent', 1, 0)\"}); it is worked out by reasoning instead."]


def test_arithmetic_that_reads_a_result_or_cannot_be_computed_stays_a_calculation(planner_registry):
    plan = Plan(goal="订单 88231 打九折是多少？", steps=[
        Step(id="s1", description="查询订单 88231", tool="query_order", args={"order_id": "88231"}),
        Step(id="s2", description="打九折", tool="calculate",
             args={"expression": "{{s1.amount}} * 0.9"}, depends_on=["s1"]),
        Step(id="s3", description="除以零", tool="calculate", args={"expression": "1 / 0"}),
        Step(id="s4", description="数行数", tool="calculate", args={"expression": "COUNT(*)"}),
        Step(id="s5", description="回复用户", depends_on=["s2", "s3", "s4"]),
    ])
    assert found(reason_instead_of_code, plan, planner_registry) == [
        "s4 给 calculate 的不是算式（{\"expression\": \"COUNT(*)\"}），改为由模型推理完成。"]
    assert [s.tool for s in plan.steps] == ["query_order", "calculate", "calculate", None, None]


def test_garbage_twice_gives_the_fallback_plan_with_every_error(planner_registry):
    engine, model = engine_with(planner_registry, "no plan", "<think>hmm</think> still no plan")
    result = plan_request(REQUEST, engine, language=request_language(REQUEST))
    plan = result.plan
    assert result.fallback is True and result.attempts == 2 and len(model.requests) == 2
    assert plan is not None and plan.ids() == ["s1", "s2"]
    assert plan.step("s1").tool is None and plan.step("s2").depends_on == ["s1"]
    assert plan.synthesis_step() is plan.step("s2")
    assert plan.warnings[0].startswith("The planner's output could not be used")
    assert plan.warnings[1:] == [
        "attempt 1: the reply holds no JSON object or array; answer with the plan as JSON",
        "attempt 2: the reply holds no JSON object or array; answer with the plan as JSON",
    ]
    assert plan.goal == REQUEST and REQUEST in plan.step("s1").description
    assert plan.validate(planner_registry) == []


def test_fallback_plan_speaks_the_language_of_the_request():
    plan = fallback_plan("帮我查一下订单", ["attempt 1: bad"], "zh")
    assert plan.step("s1").description == "直接处理用户的请求：帮我查一下订单"
    assert plan.step("s2").description == "综合以上结果，给出最终回复"
    assert plan.warnings == ["规划器的输出无法使用，已改用简单的两步计划", "attempt 1: bad"]


def test_a_missing_synthesis_step_is_added(planner_registry):
    data = {"steps": [
        {"id": "s1", "description": "Look up", "tool": "query_order",
         "args": {"order_id": "1"}, "depends_on": []},
        {"id": "s2", "description": "Time", "tool": "get_current_time", "depends_on": []},
    ]}
    engine, _ = engine_with(planner_registry, json.dumps(data))
    plan = make_plan("Check order 1 and tell me the time", engine, language="en")
    assert plan.ids() == ["s1", "s2", "s3"]
    assert plan.step("s3").tool is None and plan.step("s3").depends_on == ["s1", "s2"]
    assert plan.synthesis_step() is plan.step("s3")


def test_the_answer_step_depends_on_every_result_no_other_step_reads(planner_registry):
    data = {"steps": [
        {"id": "s1", "description": "Time", "tool": "get_current_time", "depends_on": []},
        {"id": "s2", "description": "Look up", "tool": "query_order",
         "args": {"order_id": "1"}, "depends_on": []},
        {"id": "s3", "description": "Price", "tool": "calculate",
         "args": {"expression": "2 * 3"}, "depends_on": ["s2"]},
        {"id": "s4", "description": "Answer", "tool": None, "depends_on": ["s1"]},
    ]}
    engine, _ = engine_with(planner_registry, json.dumps(data))
    plan = make_plan("Tell me the time and check order 1", engine, language="en")
    # s3's result (and through it s2's) is there for the answer: it sees them
    assert plan.step("s4").depends_on == ["s1", "s3"]
    assert context_step_ids(plan, plan.step("s4")) == ["s1", "s2", "s3"]
    assert not [w for w in plan.warnings if "s4" in w]  # the plan's shape, no note


def test_llm_errors_are_not_swallowed(planner_registry):
    engine, _ = engine_with(planner_registry, LLMConnectionError("cannot reach the endpoint"))
    with pytest.raises(LLMConnectionError):
        make_plan(REQUEST, engine, language=request_language(REQUEST))


# ---- tool names and prompts ---------------------------------------------------------------


def test_normalise_tool_names(planner_registry):
    planner_registry.add(tool(name="query_orders", read_only=True)(lambda order_id: {}))
    plan = Plan(goal="g", steps=[
        Step(id="s1", description="a", tool="queryOrder"),
        Step(id="s2", description="b", tool="functions.apply_refund"),
        Step(id="s3", description="c", tool="Get-Current-Time"),
        Step(id="s4", description="d", tool="teleport"),
        Step(id="s5", description="e", tool="CALCULATE"),
        Step(id="s6", description="f"),
    ])
    fixed = normalise_tool_names(plan, planner_registry)
    assert [s.tool for s in fixed.steps] == [
        "query_order", "apply_refund", "get_current_time", "teleport", "calculate", None,
    ]
    assert plan.step("s1").tool == "queryOrder"  # the input is not changed


def test_describe_tools_without_tools():
    assert "no tools" in describe_tools([])
    assert "no tools" in planner_system_prompt([])


def test_the_compact_catalogue_says_which_form_an_argument_takes():
    # the time server's parameters say their form only in their descriptions: without it
    # a small model wrote "Tokyo" for an IANA time zone, and the server refused the call
    schema = {"type": "object", "required": ["source_timezone", "time", "order_id"],
              "properties": {
                  "source_timezone": {"type": "string", "description": (
                      "Source IANA timezone name (e.g., 'America/New_York'). Use 'Etc/UTC' "
                      "as local timezone if no source timezone provided by the user.")},
                  "time": {"type": "string"},
                  "order_id": {"type": "string", "description": 'The order, e.g. "10001".'}}}
    line = describe_tools_compact([{"name": "convert", "description": "Convert a time",
                                    "parameters": schema}])
    args = json.loads(line.split("Args: ", 1)[1])
    assert args == {
        "source_timezone": "<source_timezone: Source IANA timezone name (e.g., "
                           "'America/New_York')>",
        "time": "<time>", "order_id": "10001"}


def test_the_compact_example_step_names_the_optional_arguments_its_tool_quotes_a_value_for():
    # called with {} in the example, a small model called the clock so for "what time is
    # it in Tokyo?", then planned conversions to reach Tokyo (5 of 6 drafts); shown the
    # quoted zone, it copied it for 东京 (5 of 5): a placeholder shows the shape only
    clock = {"name": "get_current_time", "description": "The time in a zone", "parameters": {
        "type": "object", "properties": {
            "timezone": {"type": "string", "description": 'a zone such as "Asia/Shanghai"'},
            "format": {"type": "string"}}}}
    system = planner_system_prompt([clock], style="compact", example_tool="get_current_time")
    example_step = system.split("JSON:", 1)[1]
    assert '"tool": "get_current_time", "args": {"timezone": "<timezone>"}' in example_step
    assert "Args: {} Optional: timezone, format." in system  # the catalogue line is as it was


def test_a_long_plan_is_accepted_as_it_is(planner_registry):
    """Twelve steps the request needs are no problem: nothing to warn the approver of."""
    steps = [{"id": f"s{i}", "description": f"step {i}", "tool": "calculate",
              "args": {"expression": f"{i} * 2"}, "depends_on": []} for i in range(1, 12)]
    steps.append({"id": "s12", "description": "answer", "tool": None, "depends_on": []})
    engine, _ = engine_with(planner_registry, json.dumps({"steps": steps}))
    plan = make_plan("Double each of the numbers 1 to 11", engine, language="en")
    assert len(plan.steps) == 12
    assert plan.warnings == []
