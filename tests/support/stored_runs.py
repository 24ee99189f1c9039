"""Runs stored for tests: a calculator engine, a three-step plan and stopped runs."""

from __future__ import annotations

from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.store.run_store import RunStore
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry


def calc_engine() -> Engine:
    registry = ToolRegistry()
    register_builtin_tools(registry)
    return Engine(registry=registry, model=None)


def three_calcs() -> Plan:
    return Plan(goal="sums", steps=[
        Step(id="s1", description="one", tool="calculate", args={"expression": "1+1"}),
        Step(id="s2", description="two", tool="calculate", args={"expression": "2+2"},
             depends_on=["s1"]),
        Step(id="s3", description="three", tool="calculate", args={"expression": "3+3"},
             depends_on=["s2"]),
    ])


def stopped_run(store: RunStore, status: str, *, running_step: bool = False,
                workflow_id: str | None = None) -> str:
    """A run nobody executes: s1 completed, the rest pending (s2 running if asked), under
    ``workflow_id`` (None: never started as a workflow)."""
    plan = three_calcs()
    plan.steps[0].advance("running")
    plan.steps[0].advance("completed")
    plan.steps[0].result = {"value": 2}
    if running_step:
        plan.steps[1].advance("running")
    return store.create_run("sums", {"offline": True}, plan, status=status,
                            workflow_id=workflow_id)
