"""Tests of plan diffs: added, removed and changed steps, and their text in two languages."""

from __future__ import annotations

from core.plan.diff import diff_plans, format_diff
from core.plan.model import Plan, Step


def old_plan() -> Plan:
    return Plan(goal="g", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}, status="completed", result={"status": "delivered"}),
        Step(id="s2", description="Refund it", tool="apply_refund", args={"order_id": "88231"},
             depends_on=["s1"]),
        Step(id="s3", description="Tell the user", depends_on=["s1", "s2"]),
    ])


def new_plan() -> Plan:
    plan = old_plan().model_copy(deep=True, update={"version": 2})
    plan.steps = [plan.steps[0], Step(id="s4", description="Track the parcel",
                                      tool="query_logistics", depends_on=["s1"]),
                  plan.steps[2].model_copy(update={"depends_on": ["s1", "s4"]})]
    return plan


def test_diff_plans() -> None:
    diff = diff_plans(old_plan(), new_plan())
    assert [s.id for s in diff.added] == ["s4"]
    assert [s.id for s in diff.removed] == ["s2"]
    assert [(c.new.id, c.fields) for c in diff.changed] == [("s3", ["depends_on"])]
    assert diff.counts() == {"added": 1, "removed": 1, "changed": 1}
    assert not diff.is_empty and not diff.plan_fields


def test_format_diff_in_both_languages() -> None:
    diff = diff_plans(old_plan(), new_plan())
    assert format_diff(diff) == (
        "v1 → v2\n"
        "+ added s4 [query_logistics]: Track the parcel\n"
        "- removed s2 [apply_refund]: Refund it\n"
        '~ changed s3: depends_on: ["s1", "s2"] → ["s1", "s4"]'
    )
    chinese = format_diff(diff, "zh")
    assert "+ 新增 s4" in chinese and "- 删除 s2" in chinese and "~ 修改 s3" in chinese


def test_runtime_fields_are_ignored_unless_asked() -> None:
    before = old_plan()
    after = before.model_copy(deep=True, update={"version": 2})
    after.steps[1].advance("running")
    assert diff_plans(before, after).is_empty
    assert format_diff(diff_plans(before, after), "zh") == "v1 → v2: 计划没有变化。"
    with_status = diff_plans(before, after, include_status=True)
    assert with_status.changed[0].fields == ["status"]


def test_plan_level_fields_and_empty_values() -> None:
    before = old_plan()
    after = before.model_copy(deep=True, update={"goal": "g2", "constraints": ["budget <= 2"]})
    after.steps[2].args = {}  # {} and None mean the same: no arguments
    diff = diff_plans(before, after)
    assert diff.plan_fields == ["goal", "constraints"] and not diff.changed
    assert format_diff(diff).endswith("~ plan: goal, constraints")
