"""Checkpoints in tests: a three-step refund plan, one step run as the scheduler runs it,
and a model reply that finishes early."""

from __future__ import annotations

from core.execution.executor import execute_step
from core.llm.engine import Engine
from core.plan.model import Plan, Step


def run_step(plan: Plan, step: Step, engine: Engine) -> None:
    """Execute one step and apply its outcome, as the scheduler does."""
    outcome = execute_step(plan, step, engine)
    step.advance("running")
    step.advance(outcome.status)
    step.result, step.error = outcome.result, outcome.error


def three_steps() -> Plan:
    return Plan(goal="Check order 88231 and refund it if delivered", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}, status="completed",
             result={"order_id": "88231", "status": "delivered", "refund": None}),
        Step(id="s2", description="Refund it", tool="apply_refund",
             args={"order_id": "88231"}, depends_on=["s1"],
             condition="s1.status == 'delivered'"),
        Step(id="s3", description="Tell the user", depends_on=["s1", "s2"]),
    ])


FINISH_EARLY = ('{"needs_replan": false, "can_finish_early": true, "reason": "The goal is '
                'already met and the pending steps can be dropped.", '
                '"updated_pending_steps": null}')
