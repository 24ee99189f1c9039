"""Links a step's own references imply are added; anything doubtful is left to validation."""

from __future__ import annotations

from core.plan.implied_deps import add_implied_dependencies
from core.plan.model import Plan, Step


def _plan(*steps: Step) -> Plan:
    return Plan(goal="g", steps=list(steps))


def test_a_reference_in_the_arguments_or_the_condition_adds_the_link():
    plan = _plan(
        Step(id="s1", description="look up", tool="query_order", args={"order_id": "1"}),
        Step(id="s2", description="price", tool="calculate",
             args={"expression": "{{s1.price}} * 0.9"}),
        Step(id="s3", description="refund", tool="apply_refund", args={"order_id": "1"},
             condition="s1.status == 'delivered'", depends_on=["s2"]),
    )
    assert add_implied_dependencies(plan) == ["s2 → s1", "s3 → s1"]
    assert plan.step("s2").depends_on == ["s1"] and plan.step("s3").depends_on == ["s2", "s1"]
    assert add_implied_dependencies(plan) == []  # nothing left to add


def test_unknown_ids_cycles_and_finished_steps_are_left_alone():
    plan = _plan(
        Step(id="s1", description="a", tool="calculate", args={"expression": "{{s2.x}}"}),
        Step(id="s2", description="b", tool="calculate", args={"expression": "{{s1.x}}"},
             depends_on=["s1"]),
        Step(id="s3", description="c", tool="calculate", args={"expression": "{{s9.x}}"}),
        Step(id="s4", description="d", tool="calculate", args={"expression": "{{s1.x}}"},
             status="completed", result=1),
        Step(id="s5", description="e", condition="s1.status ==", tool=None),
    )
    assert add_implied_dependencies(plan) == []
    assert plan.step("s1").depends_on == [] and plan.step("s3").depends_on == []
    assert plan.step("s4").depends_on == []
    assert any("does not depend on s2" in problem for problem in map(str, plan.validate()))
