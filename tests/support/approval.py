"""Plans that widen their approval: an order lookup that fails fatally, and a replan to a refund."""

from __future__ import annotations

from core.plan.model import Plan, Step
from core.tools.toolsets import default_registry

REGISTRY = default_registry({})  # configured from no environment


def lookup(step_id: str, order: str, **extra) -> Step:
    return Step(id=step_id, description=f"Look up order {order}", tool="query_order",
                args={"order_id": order}, **extra)


def refund(step_id: str, order: str, **extra) -> Step:
    return Step(id=step_id, description=f"Refund order {order}", tool="apply_refund",
                args={"order_id": order, "reason": "broken"}, **extra)


def plan(*steps: Step, version: int = 1) -> Plan:
    return Plan(goal="Refund the broken order", steps=list(steps), version=version)


def replan_to_a_refund(old: Plan, failure: str, engine) -> Plan:
    """s1 failed; the new version refunds another order (the issue's scenario)."""
    return Plan(goal=old.goal, version=old.version + 1, steps=[
        refund("s4", "88231"), Step(id="s5", description="Summarise", depends_on=["s4"]),
    ])


def failing_plan() -> Plan:
    """s1 looks up an order that does not exist; the tracking step needs it (fatal)."""
    return plan(lookup("s1", "00000"),
                Step(id="s2", description="Track it", tool="query_logistics",
                     args={"tracking_no": "{{s1.tracking_no}}"}, depends_on=["s1"]),
                Step(id="s3", description="Summarise", depends_on=["s2"]))
