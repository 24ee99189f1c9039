"""Tests of parse_plan: the canonical format, every seed format, and every kind of wrapping."""

from __future__ import annotations

import json

import pytest

from core.errors import PlanParseError
from core.plan.parse import extract_json, parse_plan

CANONICAL = {
    "goal": "Refund order 88231 if it was delivered",
    "language": "en",
    "definition_of_done": "the user knows the refund status",
    "constraints": ["refund only delivered orders"],
    "steps": [
        {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
         "args": {"order_id": "88231"}, "depends_on": [], "success_criteria": "status known"},
        {"id": "s2", "description": "If delivered, request a refund", "tool": "apply_refund",
         "args": {"order_id": "{{s1.order_id}}", "reason": "broken"},
         "depends_on": ["s1"], "condition": "s1.status == 'delivered'"},
        {"id": "s3", "description": "Summarise for the user", "tool": None,
         "depends_on": ["s1", "s2"]},
    ],
}

# seed 000: a bare array of {stepId, description, toolHint}
SEED_000 = """[
  {"stepId":1,"description":"查询订单 88231 的详情，确认订单状态","toolHint":"queryOrder"},
  {"stepId":2,"description":"如果订单已签收，为订单 88231 申请退款","toolHint":"applyRefund"},
  {"stepId":3,"description":"综合以上结果，告知用户订单状态和退款进展","toolHint":null}
]"""

# seed 002: {goal, steps: [{step, description, tool}]}, tool may be the string "null"
SEED_002 = """{
  "goal": "查北京天气并计算温差",
  "steps": [
  {"step": 1, "description": "查询北京今天的天气", "tool": "get_weather"},
  {"step": 2, "description": "计算最高温和最低温的差", "tool": "calculate"},
  {"step": 3, "description": "整理成一段回答", "tool": "null"}
  ]
}"""

# seed 003: {goal, definition_of_done, constraints, steps: [{id, depends_on, ...}]}
SEED_003 = {
    "goal": "写一份竞品分析",
    "definition_of_done": "报告覆盖三家竞品",
    "constraints": ["不超过 2000 字"],
    "steps": [
        {"id": "step_1", "description": "搜索竞品 A", "depends_on": [],
         "success_criteria": "拿到 A 的定价", "tools_needed": ["web_search"]},
        {"id": "step_2", "description": "搜索竞品 B", "depends_on": [],
         "success_criteria": "拿到 B 的定价", "tools_needed": ["web_search"]},
        {"id": "step_3", "description": "对比并写报告", "depends_on": ["step_1", "step_2"],
         "success_criteria": "报告完成", "tools_needed": []},
    ],
}

# seed 004: {steps: [{step_id, description, tool, args, depends_on}]} with numeric ids
SEED_004 = {
    "steps": [
        {"step_id": 1, "description": "check service A", "tool": "check_service",
         "args": {"name": "A"}, "depends_on": []},
        {"step_id": 2, "description": "check service B", "tool": "check_service",
         "args": {"name": "B"}, "depends_on": []},
        {"step_id": 3, "description": "restart A if it is down", "tool": "restart",
         "args": {"name": "{{1.name}}"}, "depends_on": [1], "condition": "step_1.up == false"},
        {"step_id": 4, "description": "report", "tool": None, "args": {},
         "depends_on": [1, 2, 3]},
    ]
}


def test_canonical_format_round_trips():
    plan = parse_plan(json.dumps(CANONICAL), CANONICAL["goal"])
    assert plan.canonical() == CANONICAL
    assert plan.warnings == []


def test_the_request_is_the_goal_and_the_models_goal_is_a_fallback():
    assert parse_plan(json.dumps(CANONICAL), "my own words").goal == "my own words"
    assert parse_plan(json.dumps(CANONICAL), "").goal == CANONICAL["goal"]


def test_seed_000_bare_array_forms_a_chain_ending_in_synthesis():
    plan = parse_plan(SEED_000, "订单 88231 到了就退")
    assert plan.ids() == ["s1", "s2", "s3"]
    assert [s.tool for s in plan.steps] == ["queryOrder", "applyRefund", None]
    assert plan.step("s2").depends_on == ["s1"]
    assert plan.step("s1").depends_on == []
    assert plan.step("s3").depends_on == ["s1", "s2"]  # synthesis reads every step
    assert plan.synthesis_step() is plan.step("s3")
    assert plan.step("s1").description == "查询订单 88231 的详情，确认订单状态"


def test_seed_002_goal_steps_with_string_null_tool():
    plan = parse_plan(SEED_002, "")
    assert plan.goal == "查北京天气并计算温差"
    assert [s.tool for s in plan.steps] == ["get_weather", "calculate", None]
    assert [s.depends_on for s in plan.steps] == [[], ["s1"], ["s1", "s2"]]


def test_seed_003_keeps_dependencies_criteria_and_plan_fields():
    plan = parse_plan(json.dumps(SEED_003, ensure_ascii=False), "goal")
    assert plan.definition_of_done == "报告覆盖三家竞品"
    assert plan.constraints == ["不超过 2000 字"]
    assert plan.ids() == ["s1", "s2", "s3"]
    assert [s.depends_on for s in plan.steps] == [[], [], ["s1", "s2"]]
    assert [s.tool for s in plan.steps] == ["web_search", "web_search", None]
    assert plan.step("s1").success_criteria == "拿到 A 的定价"
    assert plan.warnings == []  # "step_1" is step 1 as seed 003 writes it: nothing to say


def test_seed_004_numeric_ids_dependencies_references_and_conditions():
    plan = parse_plan(json.dumps(SEED_004), "check services")
    assert plan.ids() == ["s1", "s2", "s3", "s4"]
    s3 = plan.step("s3")
    assert s3.depends_on == ["s1"]
    assert s3.args == {"name": "{{s1.name}}"}
    assert s3.condition == "s1.up == false"
    assert plan.step("s4").depends_on == ["s1", "s2", "s3"]
    assert plan.step("s4").args == {}
    assert plan.validate() == []


def test_several_tools_needed_uses_the_first_and_warns():
    data = {"steps": [{"id": "a", "description": "x", "depends_on": [],
                       "tools_needed": ["web_search", "calculate"]}]}
    plan = parse_plan(json.dumps(data), "g")
    assert plan.step("s1").tool == "web_search"
    assert plan.warnings == [
        "step id 'a' is now s1",
        "s1 lists several tools (web_search, calculate); it uses web_search",
    ]


def test_non_numeric_ids_are_numbered_by_position_and_references_follow():
    data = {"steps": [
        {"id": "lookup", "description": "a", "tool": "t", "depends_on": []},
        {"id": "act", "description": "b", "tool": "t", "depends_on": ["lookup"],
         "args": {"x": "{{lookup.value}}"}},
        {"id": "answer", "description": "c", "tool": None, "depends_on": ["lookup", "act"]},
    ]}
    plan = parse_plan(json.dumps(data), "g")
    assert plan.ids() == ["s1", "s2", "s3"]
    assert plan.step("s2").depends_on == ["s1"]
    assert plan.step("s2").args == {"x": "{{s1.value}}"}
    assert plan.step("s3").depends_on == ["s1", "s2"]


def test_zero_based_or_duplicate_numbers_are_numbered_by_position():
    data = [{"stepId": 0, "description": "a"}, {"stepId": 1, "description": "b"}]
    assert parse_plan(json.dumps(data), "g").ids() == ["s1", "s2"]
    data = [{"stepId": 2, "description": "a"}, {"stepId": 2, "description": "b"}]
    assert parse_plan(json.dumps(data), "g").ids() == ["s1", "s2"]


def test_existing_sn_ids_are_kept_so_references_stay_valid():
    data = {"steps": [
        {"id": "s5", "description": "a", "tool": "t", "depends_on": ["s2"]},
        {"id": "s6", "description": "b", "tool": None, "depends_on": ["s5"]},
    ]}
    plan = parse_plan(json.dumps(data), "g")
    assert plan.ids() == ["s5", "s6"]
    assert plan.step("s5").depends_on == ["s2"]  # a step outside this reply (e.g. kept)


def test_unknown_dependency_is_kept_for_validation_to_report():
    data = {"steps": [{"id": "s1", "description": "a", "depends_on": ["later"]}]}
    plan = parse_plan(json.dumps(data), "g")
    assert [str(p) for p in plan.validate()] == ["s1 depends on unknown step later"]


def test_a_tool_less_last_step_without_dependencies_reads_every_step():
    data = {"steps": [
        {"id": "s1", "description": "a", "tool": "t", "depends_on": []},
        {"id": "s2", "description": "b", "tool": "t", "depends_on": []},
        {"id": "s3", "description": "answer", "tool": None, "depends_on": []},
    ]}
    plan = parse_plan(json.dumps(data), "g")
    assert plan.step("s3").depends_on == ["s1", "s2"]
    assert plan.step("s2").depends_on == []


def test_lenient_field_shapes():
    data = {"plan": {"steps": [
        "look something up",
        {"id": 2, "task": "compute", "tool": {"name": "calculate"},
         "arguments": '{"expression": "1+1"}', "dependencies": "1"},
        {"id": 3, "description": "answer", "tool": "None", "depends_on": "1, 2",
         "constraints": None},
    ]}, "constraints": "be brief"}
    plan = parse_plan(json.dumps(data), "g")
    assert [s.description for s in plan.steps] == ["look something up", "compute", "answer"]
    assert plan.step("s2").tool == "calculate"
    assert plan.step("s2").args == {"expression": "1+1"}
    assert plan.step("s2").depends_on == ["s1"]
    assert plan.step("s3").tool is None
    assert plan.step("s3").depends_on == ["s1", "s2"]
    assert plan.constraints == ["be brief"]


# ---- wrappings ----------------------------------------------------------------------------

WRAPPED = json.dumps(CANONICAL, ensure_ascii=False, indent=2)


@pytest.mark.parametrize(
    "text",
    [
        f"```json\n{WRAPPED}\n```",
        f"```\n{WRAPPED}\n```",
        f"Sure! Here is the plan:\n\n```json\n{WRAPPED}\n```\n\nLet me know if it helps.",
        f"Here is the plan: {WRAPPED} I hope this helps {{see notes}}.",
        f"<think>The user wants a refund. Maybe {{\"steps\": []}} first?</think>\n{WRAPPED}",
        f"<think>\nplanning...\n</think>\n```json\n{WRAPPED}\n```",
        f"planning in the open...</think>{WRAPPED}",
        f"{WRAPPED}\n\nNote: step s2 only runs when the order was delivered.",
        f"{WRAPPED}]]}}",
        WRAPPED.replace('"s1", "s2"\n', '"s1", "s2",\n').replace("}\n  ]\n}", "},\n  ]\n}"),
    ],
    ids=[
        "json-fence", "bare-fence", "prose-around-fence", "prose-around-bare", "think-block",
        "think-then-fence", "think-without-opening-tag", "trailing-text", "trailing-brackets",
        "trailing-commas",
    ],
)
def test_wrappings_are_tolerated(text):
    plan = parse_plan(text, CANONICAL["goal"])
    assert plan.canonical() == CANONICAL


def test_trailing_comma_case_really_has_trailing_commas():
    text = WRAPPED.replace("}\n  ]\n}", "},\n  ]\n}")
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    assert extract_json(text)["goal"] == CANONICAL["goal"]


def test_the_plan_like_value_wins_over_an_earlier_json_value():
    text = 'Config: {"temperature": 0}\nPlan: ' + json.dumps(CANONICAL)
    assert parse_plan(text, "g").ids() == ["s1", "s2", "s3"]


# ---- garbage ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the reply is empty"),
        ("   \n", "the reply is empty"),
        ("I cannot help with that.", "holds no JSON object or array"),
        ("<think>still thinking about {the plan", "holds only a <think> block"),
        ('{"answer": 42}', 'has no "steps" list (its keys are: answer)'),
        ('{"steps": []}', "the plan has no steps"),
        ("[]", "the plan has no steps"),
        ('"just a string"', "holds no JSON object or array"),
        ("[1, 2]", "step 1 is a number, not an object; step 2 is a number"),
        ('{"steps": [{"id": 1, "description": "a", "args": [1]}]}',
         "step 1 args must be a JSON object, not a list"),
        ('{"steps": [{"id": 1, "description": "a", "args": "do it"}]}',
         "step 1 args is text, not a JSON object"),
        ('{"steps": [{"id": 1, "description": "a", "tool": 7}]}',
         "step 1 names its tool with a number"),
        ('{"steps": [{"id": 1, "description": "a",,}]', "holds no JSON object or array"),
    ],
)
def test_garbage_raises_plan_parse_error_with_raw_text(text, message):
    with pytest.raises(PlanParseError) as caught:
        parse_plan(text, "g")
    assert message in str(caught.value)
    assert caught.value.raw == text
