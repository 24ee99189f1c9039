"""Tests for core.plan.arg_form: a tool's schema as form fields, read back into a step's args."""

from __future__ import annotations

import enum
from typing import Literal

import pytest

from core.base.messages import render
from core.plan.arg_form import (
    OMIT,
    FieldSpec,
    arg_problems,
    condition_problems,
    criteria_problem,
    field_specs,
    is_reference,
    read_value,
    reference_options,
    set_arg,
    set_tool,
    shown_value,
)
from core.plan.edit import update_step
from core.plan.model import Plan, Step
from core.tools.registry import tool
from tests.support.shown import worded


class Speed(enum.Enum):
    """How fast (an enum class: the schema refers to its definition)."""

    SLOW = "slow"
    FAST = "fast"


@tool(read_only=True)
def sample(query: str, top_k: int = 3, ratio: float | None = None, exact: bool = False,
           mode: Literal["a", "b"] = "a", speed: Speed = Speed.SLOW,
           names: str | list[str] = "all", filters: dict | None = None) -> dict:
    """A tool with one parameter of every kind.

    Args:
        query: what to look for.
        top_k: how many results.
    """
    return {}


def _plan() -> Plan:
    return Plan(goal="Refund order 88231 if it was delivered", steps=[
        Step(id="s1", description="Look up the order", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="Refund it", tool="apply_refund",
             args={"order_id": "{{s1.order_id}}"}, depends_on=["s1"],
             condition="s1.status == 'delivered'"),
        Step(id="s3", description="Summarise", depends_on=["s1", "s2"]),
    ])


def _specs() -> dict[str, FieldSpec]:
    return {spec.name: spec for spec in field_specs(sample.parameters)}


# ---- schema -> fields ------------------------------------------------------------------

def test_every_schema_kind_becomes_a_field_with_its_widget_kind():
    specs = _specs()
    assert list(specs) == ["query", "top_k", "ratio", "exact", "mode", "speed", "names",
                           "filters"]
    assert {name: spec.kind for name, spec in specs.items()} == {
        "query": "string", "top_k": "integer", "ratio": "number", "exact": "boolean",
        "mode": "enum", "speed": "enum", "names": "string", "filters": "json"}
    assert specs["mode"].options == ("a", "b") and specs["speed"].options == ("slow", "fast")
    assert specs["names"].json_ok and not specs["query"].json_ok


def test_required_marks_defaults_and_descriptions_come_from_the_schema():
    specs = _specs()
    assert specs["query"].required and not specs["top_k"].required
    assert specs["query"].description == "what to look for."
    assert not specs["query"].has_default
    assert specs["top_k"].default == 3 and specs["names"].default == "all"
    assert specs["ratio"].default is None and specs["ratio"].has_default


def test_a_real_tool_and_an_argument_the_tool_does_not_take(registry):
    specs = field_specs(registry.get("search_knowledge").parameters,
                        {"query": "vacuum", "colour": "red"})
    assert [(s.name, s.kind, s.required, s.known) for s in specs] == [
        ("query", "string", True, True), ("top_k", "integer", False, True),
        ("colour", "json", False, False)]
    health = field_specs(registry.get("check_health").parameters)[0]
    assert (health.kind, health.json_ok, health.default) == ("string", True, "all")


# ---- values shown and read back --------------------------------------------------------

@pytest.mark.parametrize(("name", "value", "shown"), [
    ("query", "vacuum", "vacuum"),
    ("query", OMIT, ""),
    ("top_k", 5, 5),
    ("top_k", "7", 7),
    ("top_k", "{{s1.count}}", None),
    ("top_k", "many", None),
    ("ratio", 0.5, 0.5),
    ("exact", True, True),
    ("exact", OMIT, False),
    ("mode", "b", "b"),
    ("mode", "z", None),
    ("names", ["a", "b"], '["a", "b"]'),
    ("filters", {"城市": "上海"}, '{"城市": "上海"}'),
    ("filters", OMIT, ""),
])
def test_an_argument_is_shown_as_its_widget_holds_it(name, value, shown):
    assert shown_value(_specs()[name], value) == shown


@pytest.mark.parametrize(("name", "raw", "value"), [
    ("query", "robot vacuum", "robot vacuum"),
    ("query", "{{s1.order_id}}", "{{s1.order_id}}"),
    ("query", "[not json", "[not json"),
    ("top_k", 5.0, 5),
    ("top_k", 4, 4),
    ("ratio", 0.25, 0.25),
    ("exact", False, False),
    ("mode", "b", "b"),
    ("names", '["order-service", "pay-service"]', ["order-service", "pay-service"]),
    ("names", "all", "all"),
    ("names", "[half", "[half"),
    ("filters", '{"a": 1}', {"a": 1}),
])
def test_a_widget_value_is_read_back_as_the_argument(name, raw, value):
    back = read_value(_specs()[name], raw)
    assert back.error is None and back.value == value


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_an_empty_field_leaves_the_argument_out(raw):
    for spec in _specs().values():
        assert read_value(spec, raw).value is OMIT


def test_a_json_field_that_does_not_parse_says_where_in_either_language():
    back = read_value(_specs()["filters"], '{"a": }')
    assert back.value is OMIT and render(back.error, "en").startswith("filters is not valid JSON (")
    assert render(back.error, "zh").startswith("filters 不是有效的 JSON")


def test_every_shown_value_reads_back_to_itself():
    arguments = {"query": "x", "top_k": 2, "ratio": 1.5, "exact": True, "mode": "b",
                 "speed": "fast", "names": ["a"], "filters": {"k": [1, 2]}}
    for name, spec in _specs().items():
        assert read_value(spec, shown_value(spec, arguments[name])).value == arguments[name]


def test_whole_references_are_told_from_text_that_contains_one():
    assert is_reference("{{s1.tracking_no}}") and is_reference(" {{ s2 }} ")
    assert is_reference("{{s1.items[0].name}}")
    assert not is_reference("order {{s1.order_id}}") and not is_reference(3)


# ---- references offered ----------------------------------------------------------------

def test_references_come_from_the_dependencies_only():
    plan = _plan()
    assert reference_options(plan, "s1", "order_id") == []
    assert reference_options(plan, "s2", "order_id") == [
        "{{s1.order_id}}", "{{s1.status}}", "{{s1}}"]  # status: the condition reads it
    assert reference_options(plan, "s3", "reason") == [
        "{{s1.reason}}", "{{s1.order_id}}", "{{s1.status}}", "{{s1}}", "{{s2.reason}}",
        "{{s2}}"]


def test_references_offer_the_fields_of_a_known_result_and_skip_unknown_steps():
    plan = _plan()
    plan.step("s1").result = {"order_id": "88231", "tracking_no": "SF1"}
    plan.step("s3").depends_on = ["s1", "s9"]
    options = reference_options(plan, "s3", "tracking_no")
    assert options == ["{{s1.tracking_no}}", "{{s1.order_id}}", "{{s1.status}}", "{{s1}}"]


# ---- edits -----------------------------------------------------------------------------

def test_set_arg_sets_and_removes_one_argument_on_a_copy():
    plan = _plan()
    changed = set_arg(plan, "s2", "reason", "broken on arrival")
    assert changed.step("s2").args == {"order_id": "{{s1.order_id}}",
                                       "reason": "broken on arrival"}
    assert plan.step("s2").args == {"order_id": "{{s1.order_id}}"}
    assert set_arg(plan, "s1", "order_id", OMIT).step("s1").args is None


def test_update_step_refuses_a_field_a_step_does_not_have():
    with pytest.raises(AttributeError, match="no field 'colour'"):
        update_step(_plan(), "s1", colour="red")


def test_a_new_tool_keeps_the_arguments_it_takes_and_says_which_it_removed(registry):
    plan = set_arg(_plan(), "s2", "reason", "broken")
    changed, notes = set_tool(plan, "s2", "query_order", registry)
    assert changed.step("s2").tool == "query_order"
    assert changed.step("s2").args == {"order_id": "{{s1.order_id}}"}
    assert worded(notes) == ["s2 now uses query_order: removed the argument(s) reason, which it "
                     "does not take"]
    reasoning, notes = set_tool(plan, "s1", None, registry)
    assert reasoning.step("s1").tool is None and reasoning.step("s1").args is None
    assert worded(notes, "zh") == ["s1 改用 推理步骤：去掉了它不接受的参数 order_id"]
    same, notes = set_tool(_plan(), "s1", "apply_refund", registry)
    assert same.step("s1").args == {"order_id": "88231"} and notes == []


# ---- live checks -----------------------------------------------------------------------

def test_an_argument_shows_the_problems_it_causes_in_validate_s_words(registry):
    plan = set_arg(_plan(), "s1", "colour", "red")
    assert worded(arg_problems(plan, registry, "s1", "colour")) == [
        "s1 gives query_order an unknown argument 'colour'; its parameters are: order_id"]
    assert arg_problems(plan, registry, "s1", "order_id") == []
    assert arg_problems(plan, registry, "s1", "absent") == []
    loose = update_step(_plan(), "s2", depends_on=[])
    loose = update_step(loose, "s2", condition=None)
    assert worded(arg_problems(loose, registry, "s2", "order_id")) == [
        "s2 refers to {{s1...}} but does not depend on s1; add s1 to depends_on"]


def test_an_empty_required_argument_shows_under_its_field_what_the_list_says_offline(
        registry):
    """Without a model nothing fills a required argument in at run time: the field says so,
    in the plan's own words; with one, an empty field is no problem (the model fills it)."""
    plan = set_arg(_plan(), "s1", "order_id", OMIT)
    [problem] = arg_problems(plan, registry, "s1", "order_id", can_infer=False)
    assert problem in plan.validate(registry, can_infer=False)
    assert worded([problem]) == [
        "s1 needs arguments for query_order (missing: order_id) and no LLM is configured to "
        "fill them in; write them into the step's args"]
    assert arg_problems(plan, registry, "s1", "order_id") == []
    assert arg_problems(_plan(), registry, "s1", "order_id", can_infer=False) == []
    assert arg_problems(plan, registry, "s2", "reason", can_infer=False) == []  # optional


def test_a_wrong_type_is_reported_under_its_own_field(registry):
    plan = Plan(goal="g", steps=[Step(id="s1", description="Search", tool="search_knowledge",
                                      args={"query": "vacuum", "top_k": "many"})])
    problems = worded(arg_problems(plan, registry, "s1", "top_k"))
    assert len(problems) == 1 and problems[0].startswith("s1 argument 'top_k'")
    assert arg_problems(plan, registry, "s1", "query") == []


def test_a_condition_shows_only_its_own_problems(registry):
    plan = update_step(_plan(), "s2", description="")  # another problem of the step
    assert condition_problems(plan, registry, "s2") == []
    unread = update_step(plan, "s2", condition="s3.status == 'x'")
    assert worded(condition_problems(unread, registry, "s2")) == [
        "s2 condition reads s3 but does not depend on it; add s3 to depends_on"]
    broken = update_step(plan, "s2", condition="s1.status ==")
    [problem] = worded(condition_problems(broken, registry, "s2"), "zh")
    assert problem.startswith("s2 的条件无法解析")
    prose = update_step(plan, "s2", condition="if the customer is unhappy")
    assert condition_problems(prose, registry, "s2") == []


@pytest.mark.parametrize(("text", "problem"), [
    (None, False), ("", False), ("the order status is known", False),
    ("result.count > 0", False), ("'S10' in result.product", False),
    ("result.count >", True), ("result.status == = 'x'", True),
])
def test_success_criteria_written_as_an_expression_must_parse(text, problem):
    found = criteria_problem(text)
    assert (found is not None) == problem
    if problem:
        worded = render(found, "en")
        assert worded.startswith("the success criteria read like an expression")
        assert "s0" not in worded and "result" in worded
