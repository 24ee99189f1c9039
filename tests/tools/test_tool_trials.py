"""A tool tried by hand is recorded as a one-step run, with the idempotency key of a side effect."""

from __future__ import annotations

import pytest

from core.errors import ToolArgumentError, UnknownToolError
from core.runs.tool_trials import TRIAL_MODE, try_tool
from core.store.run_store import RunStore
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, current_idempotency_key, make_tool


@pytest.fixture
def refunds() -> list[str | None]:
    return []


@pytest.fixture
def refund_registry(refunds: list[str | None]) -> ToolRegistry:
    made = ToolRegistry()
    register_builtin_tools(made)

    def refund(order_id: str) -> dict:
        """Refund an order (a side effect that notes its idempotency key).

        Args:
            order_id: the order.
        """
        refunds.append(current_idempotency_key())
        if order_id == "broken":
            raise RuntimeError("the payment service refused")
        return {"refunded": order_id}

    made.add(make_tool(refund))
    return made


def kinds(store: RunStore, run_id: str) -> list[str]:
    return [event.kind for event in store.events(run_id)]


def test_a_read_only_tool_is_recorded_as_a_finished_one_step_run(store, refund_registry):
    trial = try_tool("calculate", {"expression": "1999 + 1"}, registry=refund_registry, store=store)
    assert trial.ok and trial.result["value"] == 2000 and trial.idempotency_key is None
    record = store.get_run(trial.run_id)
    assert record.status == "completed" and record.options["mode"] == TRIAL_MODE
    # run in the asking process, not as a workflow: nothing is left to continue
    assert record.workflow_id is None and record.finished_at is not None
    [step] = record.plan.steps
    assert (step.tool, step.status, step.attempts) == ("calculate", "completed", 1)
    assert step.started_at is not None and step.finished_at is not None
    assert step.result["value"] == 2000
    assert kinds(store, trial.run_id) == [
        "run_started", "step_started", "step_completed", "run_finished"]


def test_a_side_effect_carries_an_idempotency_key_named_after_its_run(
        store, refund_registry, refunds):
    trial = try_tool("refund", {"order_id": "88231"},
                     registry=refund_registry, store=store)
    assert trial.ok and trial.result == {"refunded": "88231"}
    assert refunds == [trial.idempotency_key] == [f"{trial.run_id}:s1:v1"]
    started = [e for e in store.events(trial.run_id) if e.kind == "step_started"]
    assert started[0].data["idempotency_key"] == trial.idempotency_key


def test_a_failing_call_is_a_failed_run_with_a_one_line_error(store, refund_registry):
    trial = try_tool("refund", {"order_id": "broken"}, registry=refund_registry, store=store)
    assert not trial.ok and trial.result is None
    assert "refused" in trial.error and "\n" not in trial.error
    record = store.get_run(trial.run_id)
    assert record.status == "failed" and record.plan.steps[0].status == "failed"
    assert kinds(store, trial.run_id)[-2:] == ["step_failed", "run_finished"]


@pytest.mark.parametrize(("name", "args", "error"), [
    ("no_such_tool", {}, UnknownToolError),
    ("calculate", {"formula": "1+1"}, ToolArgumentError),
])
def test_a_call_that_cannot_be_made_raises_and_records_nothing(
        store, refund_registry, refunds, name, args, error):
    with pytest.raises(error):
        try_tool(name, args, registry=refund_registry, store=store)
    assert store.list_runs() == [] and refunds == []
