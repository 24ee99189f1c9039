"""The one scheduling rule: ready steps, blocked steps, and expression conditions."""

import pytest

from core.base.expressions import ExpressionError
from core.execution.readiness import blocked_steps, condition_holds, ready_steps
from core.plan.model import Plan, Step


def diamond() -> Plan:
    return Plan(goal="goal", steps=[
        Step(id="s1", description="a"),
        Step(id="s2", description="b", depends_on=["s1"]),
        Step(id="s3", description="c", depends_on=["s1"]),
        Step(id="s4", description="d", depends_on=["s2", "s3"]),
    ])


def ids(steps: list[Step]) -> list[str]:
    return [s.id for s in steps]


def test_ready_steps_follow_dependencies():
    plan = diamond()
    assert ids(ready_steps(plan)) == ["s1"]
    plan.step("s1").advance("running")
    assert ready_steps(plan) == []
    plan.step("s1").advance("completed")
    assert ids(ready_steps(plan)) == ["s2", "s3"]
    plan.step("s2").advance("skipped")
    plan.step("s3").advance("running")
    plan.step("s3").advance("completed")
    assert ids(ready_steps(plan)) == ["s4"]


def test_an_ignorable_failure_counts_as_done_and_a_held_step_keeps_dependents_waiting():
    plan = diamond()
    plan.step("s1").advance("running")
    plan.step("s1").advance("failed")
    assert ready_steps(plan) == []
    assert ids(ready_steps(plan, ignorable={"s1"})) == ["s2", "s3"]
    assert ids(ready_steps(plan, ignorable={"s1"}, held={"s1"})) == []


def test_blocked_steps_follow_a_failure_transitively_and_name_the_culprit():
    plan = diamond()
    plan.step("s1").advance("failed")
    blocked = blocked_steps(plan)
    assert [(s.id, culprits) for s, culprits in blocked] == [
        ("s2", ["s1"]), ("s3", ["s1"]), ("s4", ["s2", "s3"])]
    assert blocked_steps(plan, ignorable={"s1"}) == []


def test_condition_holds_reads_earlier_results_and_leaves_prose_to_the_model():
    plan = Plan(goal="g", steps=[
        Step(id="s1", description="look up"),
        Step(id="s2", description="act", depends_on=["s1"], condition="s1.status == 'ok'"),
        Step(id="s3", description="prose", depends_on=["s1"], condition="if it arrived"),
        Step(id="s4", description="plain", depends_on=["s1"]),
    ])
    plan.step("s1").advance("running")
    plan.step("s1").advance("completed")
    plan.step("s1").result = {"status": "ok"}
    assert condition_holds(plan, plan.step("s2")) is True
    plan.step("s1").result = {"status": "late"}
    assert condition_holds(plan, plan.step("s2")) is False
    assert condition_holds(plan, plan.step("s3")) is None
    assert condition_holds(plan, plan.step("s4")) is None


def test_an_expression_that_calls_a_function_cannot_be_evaluated():
    plan = Plan(goal="g", steps=[
        Step(id="s1", description="look up"),
        Step(id="s2", description="act", depends_on=["s1"], condition="s1.status.lower()"),
    ])
    with pytest.raises(ExpressionError):
        condition_holds(plan, plan.step("s2"))
