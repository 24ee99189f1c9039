"""Tests of the Plan model: validation, DAG operations, summary and JSON round trip."""

from __future__ import annotations

import json

import pytest

from core.errors import PlanValidationError
from core.plan.model import Plan, Step, references_in
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry
from tests.support.shown import worded


@pytest.fixture
def builtin_registry() -> ToolRegistry:
    """The built-in tools only."""
    registry = ToolRegistry()
    register_builtin_tools(registry)
    return registry


def make(*steps: Step, goal: str = "goal") -> Plan:
    return Plan(goal=goal, steps=list(steps))


def diamond() -> Plan:
    return make(
        Step(id="s1", description="a"),
        Step(id="s2", description="b", depends_on=["s1"]),
        Step(id="s3", description="c", depends_on=["s1"]),
        Step(id="s4", description="d", depends_on=["s2", "s3"]),
    )


# ---- validate -----------------------------------------------------------------------------


def test_a_good_plan_has_no_problems(builtin_registry):
    plan = make(
        Step(id="s1", description="add", tool="calculate", args={"expression": "1+2"}),
        Step(id="s2", description="double", tool="calculate",
             args={"expression": "{{s1.value}} * 2"}, depends_on=["s1"],
             condition="s1.value > 2"),
        Step(id="s3", description="answer", depends_on=["s1", "s2"]),
    )
    assert worded(plan.validate(builtin_registry)) == []
    plan.raise_if_invalid(builtin_registry)


def test_empty_plan_is_a_problem():
    assert worded(Plan(goal="g").validate()) == ["the plan has no steps; add at least one step"]


def test_duplicate_ids_are_named():
    plan = make(Step(id="s1", description="a"), Step(id="s1", description="b"))
    assert "s1 appears more than once; give every step its own id" in worded(plan.validate())


def test_malformed_id_is_named():
    problems = worded(make(Step(id="step1", description="a")).validate())
    assert "'step1' is not a valid id; ids look like s1, s2, s3" in problems


def test_unknown_tool_names_the_step_and_the_known_tools(builtin_registry):
    problems = worded(make(Step(id="s1", description="a", tool="fly")).validate(builtin_registry))
    assert len(problems) == 1
    assert problems[0].startswith("s1 uses unknown tool 'fly'")
    assert "calculate" in problems[0] and "get_current_time" in problems[0]


def test_unknown_tool_is_not_checked_without_a_registry():
    assert worded(make(Step(id="s1", description="a", tool="fly")).validate()) == []


def test_unknown_and_self_dependencies():
    plan = make(
        Step(id="s1", description="a", depends_on=["s1"]),
        Step(id="s2", description="b", depends_on=["s7"]),
    )
    problems = worded(plan.validate())
    assert "s1 depends on itself; remove it from depends_on" in problems
    assert "s2 depends on unknown step s7" in problems


def test_cycle_is_reported():
    plan = make(
        Step(id="s1", description="a", depends_on=["s2"]),
        Step(id="s2", description="b", depends_on=["s1"]),
    )
    problems = worded(plan.validate())
    assert problems == ["s1, s2 form a dependency cycle; remove one link"]
    with pytest.raises(PlanValidationError) as caught:
        plan.raise_if_invalid()
    assert worded(caught.value.problems) == problems


def test_bad_argument_type_and_unknown_argument(builtin_registry):
    plan = make(
        Step(id="s1", description="a", tool="calculate", args={"expression": ["1"]}),
        Step(id="s2", description="b", tool="calculate", args={"expr": "1+1"}),
    )
    problems = worded(plan.validate(builtin_registry))
    assert any(p.startswith("s1 argument 'expression' for calculate:") for p in problems)
    assert (
        "s2 gives calculate an unknown argument 'expr'; its parameters are: expression"
        in problems
    )


def test_missing_arguments_are_allowed_because_the_executor_infers_them(builtin_registry):
    plan = make(Step(id="s1", description="a", tool="calculate", args={}))
    assert worded(plan.validate(builtin_registry)) == []


def test_reference_to_a_step_that_is_not_a_dependency():
    plan = make(
        Step(id="s1", description="a", tool="calculate", args={"expression": "1"}),
        Step(id="s2", description="b", tool="calculate",
             args={"expression": "{{s1.value}} + 1"}),
    )
    assert worded(plan.validate()) == [
        "s2 refers to {{s1...}} but does not depend on s1; add s1 to depends_on"
    ]


def test_a_field_of_a_reasoning_steps_text_is_a_problem_and_the_whole_text_is_not():
    plan = make(
        Step(id="s1", description="think of a time"),
        Step(id="s2", description="b", tool="calculate", depends_on=["s1"],
             args={"expression": "{{s1.datetime}}", "note": ["{{s1}}"]}),
        Step(id="s3", description="c", tool="calculate", depends_on=["s1"],
             args={"expression": "{{s1}}"}),
    )
    assert worded(plan.validate()) == [
        "s2 reads {{s1.datetime}}, but s1 has no tool: its result is text, with no fields; "
        "use {{s1}} for the whole text, or give s1 a tool that returns data"
    ]


def test_a_field_of_a_tool_reply_that_came_back_as_text_is_a_problem_of_steps_still_to_run():
    log = "Commit: d9981ac\nMessage: Teach the parcel tracker"
    plan = make(
        Step(id="s1", description="the last commit", tool="calculate", status="completed",
             result=log),
        Step(id="s2", description="a time", tool="calculate", status="completed",
             result={"datetime": "2026-12-02T22:17:13+00:00"}),
        Step(id="s3", description="b", tool="calculate", depends_on=["s1", "s2"],
             args={"expression": "{{s1.result}}", "at": "{{s2.datetime}}"}),
        Step(id="s4", description="c", tool="calculate", depends_on=["s1"], status="failed",
             args={"expression": "{{s1.message}}"}, error="s1 has no field 'message'"),
    )
    assert worded(plan.validate()) == [  # s4 already ran: history, not a plan to fix
        "s3 reads {{s1.result}}, but s1 came back as text, with no fields; use {{s1}} for "
        "the whole text, or read the field from a step whose tool returns data"
    ]


def test_condition_that_does_not_parse_or_reads_a_non_dependency():
    plan = make(
        Step(id="s1", description="a"),
        Step(id="s2", description="b", depends_on=["s1"], condition="s1.status == ("),
        Step(id="s3", description="c", depends_on=["s1"], condition="s2.ok == True"),
    )
    problems = worded(plan.validate())
    assert any(p.startswith("s2 condition does not parse:") for p in problems)
    assert "s3 condition reads s2 but does not depend on it; add s2 to depends_on" in problems


def test_a_condition_reading_a_missing_step_asks_for_a_rewrite():
    plan = make(Step(id="s1", description="a"),
                Step(id="s3", description="c", depends_on=["s1"], condition="s2.ok == True"))
    assert worded(plan.validate()) == [
        "s3 condition reads s2, which is not a step of the plan; rewrite or clear the condition"]
    assert worded(plan.validate(), "zh") == ["s3 的条件读取了不存在的步骤 s2；请改写或清空这个条件"]


def test_prose_condition_is_left_to_the_executor():
    plan = make(Step(id="s1", description="a", condition="if the user is happy"))
    assert worded(plan.validate()) == []


def test_empty_description_is_a_problem():
    assert worded(make(Step(id="s1", description="  ")).validate()) == [
        "s1 has no description; say what the step does"
    ]


def test_references_in_nested_values():
    assert references_in({"a": ["{{s1.x}}", {"b": "{{ s2 }} and {{s3[0]}}"}], "c": 3}) == {
        "s1", "s2", "s3",
    }


# ---- DAG operations -----------------------------------------------------------------------


def test_topological_order_puts_dependencies_first():
    plan = make(
        Step(id="s3", description="c", depends_on=["s1", "s2"]),
        Step(id="s2", description="b", depends_on=["s1"]),
        Step(id="s1", description="a"),
    )
    assert [s.id for s in plan.topological_order()] == ["s1", "s2", "s3"]


def test_critical_path():
    plan = diamond()
    plan.steps.append(Step(id="s5", description="e"))
    assert plan.critical_path() == ["s1", "s2", "s4"]
    assert plan.critical_path_length() == 3
    independent = make(*(Step(id=f"s{i}", description="x") for i in range(1, 5)))
    assert independent.critical_path_length() == 1


def test_progress_and_finished():
    plan = diamond()
    assert plan.progress() == 0.0
    plan.step("s1").advance("running")
    plan.step("s1").advance("completed")
    plan.step("s2").advance("failed")
    assert plan.progress() == 0.5
    assert not plan.is_finished()
    plan.step("s3").advance("skipped")
    plan.step("s4").advance("skipped")
    assert plan.is_finished()
    assert Plan(goal="g").progress() == 0.0


def test_next_step_id_never_reuses_ids():
    plan = make(Step(id="s1", description="a"), Step(id="s7", description="b"))
    assert plan.next_step_id() == "s8"
    assert Plan(goal="g").next_step_id() == "s1"


def test_synthesis_step_is_the_last_tool_less_step_nobody_depends_on():
    plan = diamond()
    assert plan.synthesis_step() is plan.step("s4")
    plan.step("s4").tool = "calculate"
    assert plan.synthesis_step() is None


def test_step_lookup_names_existing_ids():
    with pytest.raises(KeyError, match="s1, s2, s3, s4"):
        diamond().step("s9")


# ---- status -------------------------------------------------------------------------------


def test_status_only_moves_forward():
    step = Step(id="s1", description="a")
    step.advance("running")
    assert step.attempts == 1 and step.started_at is not None
    step.advance("completed")
    assert step.finished_at is not None and step.duration_s is not None
    step.advance("completed")  # same status is a no-op
    for backwards in ("pending", "running", "failed"):
        with pytest.raises(ValueError, match="cannot go from completed"):
            step.advance(backwards)


def test_pending_cannot_complete_without_running():
    with pytest.raises(ValueError, match="s1 cannot go from pending to completed"):
        Step(id="s1", description="a").advance("completed")


def test_add_usage_accumulates():
    step = Step(id="s1", description="a")
    step.add_usage(1, 100, 20)
    step.add_usage(2, 50, 5)
    assert (step.llm_calls, step.prompt_tokens, step.completion_tokens) == (3, 150, 25)


# ---- summary and JSON ---------------------------------------------------------------------


def test_summary_uses_the_seed_icons_and_previews_results():
    plan = make(
        Step(id="s1", description="look up", status="completed", result={"status": "delivered"}),
        Step(id="s2", description="refund", status="running"),
        Step(id="s3", description="wait", status="pending"),
        Step(id="s4", description="broken", status="failed", error="timeout"),
        Step(id="s5", description="maybe", status="skipped", error="condition was false"),
        Step(id="s6", description="long", status="completed", result="x" * 200),
        goal="refund order",
    )
    lines = plan.summary().splitlines()
    assert lines[0] == "Plan v1: refund order"
    assert lines[1] == '  ✓ s1: look up → {"status": "delivered"}'
    assert lines[2] == "  ▶ s2: refund"
    assert lines[3] == "  ○ s3: wait"
    assert lines[4] == "  ✗ s4: broken → timeout"
    assert lines[5] == "  ⏭ s5: maybe → condition was false"
    assert lines[6] == "  ✓ s6: long → " + "x" * 79 + "…"


def test_json_round_trip_keeps_runtime_fields():
    plan = diamond()
    plan.warnings.append("careful")
    plan.step("s1").advance("running")
    plan.step("s1").advance("completed")
    plan.step("s1").result = {"n": 1, "text": "你好"}
    again = Plan.from_json(plan.to_json())
    assert again == plan
    assert again.step("s1").status == "completed"


def test_canonical_json_matches_the_design_shape():
    plan = make(
        Step(id="s1", description="a", tool="calculate", args={"expression": "1"},
             success_criteria="known", status="completed", result=1),
        Step(id="s2", description="b", depends_on=["s1"], condition="s1 > 0"),
    )
    data = plan.canonical()
    assert data == {
        "goal": "goal",
        "language": "en",
        "definition_of_done": "",
        "constraints": [],
        "steps": [
            {"id": "s1", "description": "a", "tool": "calculate",
             "args": {"expression": "1"}, "depends_on": [], "success_criteria": "known"},
            {"id": "s2", "description": "b", "tool": None, "depends_on": ["s1"],
             "condition": "s1 > 0"},
        ],
    }
    reread = Plan.from_json(json.dumps(data))
    assert reread.canonical() == data
    assert reread.step("s1").status == "pending"


def test_problems_can_be_worded_in_chinese():
    cyclic = Plan.model_validate({"goal": "g", "steps": [
        {"id": "s1", "description": "a", "depends_on": ["s2"]},
        {"id": "s2", "description": "b", "depends_on": ["s1"]}]})
    assert worded(cyclic.validate(), "zh") == ["s1, s2 形成了循环依赖；请去掉其中一条依赖"]
    broken = Plan.model_validate({"goal": "g", "steps": [
        {"id": "s1", "description": "", "depends_on": ["s9"]}]})
    assert worded(broken.validate(), "zh") == [
        "s1 没有描述；请写明这一步做什么", "s1 依赖了不存在的步骤 s9"]
    assert worded(broken.validate()) == [
        "s1 has no description; say what the step does", "s1 depends on unknown step s9"]
