"""RunStore.finish_run records how a run stopped, unless the run has already ended another
way: a cancel recorded by someone who could not reach its executor stands."""

from __future__ import annotations

import pytest

from core.base.usage import Usage
from core.errors import RunNotFoundError
from core.plan.model import Plan, Step
from tests.support.pg import on_both_backends


def _plan() -> Plan:
    return Plan(goal="add up", steps=[
        Step(id="s1", description="add up", tool="calculate", args={"expression": "2+3"})])


def _finished(plan: Plan) -> Plan:
    done = plan.model_copy(deep=True)
    done.steps[0].advance("running")
    done.steps[0].advance("completed")
    return done


@on_both_backends
def test_finish_run_records_the_end_of_a_running_run(store):
    run_id = store.create_run("add up", {}, _plan())
    store.set_status(run_id, "running")

    assert store.finish_run(run_id, "completed", answer="5", usage=Usage(llm_calls=1),
                            plans=[_finished(_plan())]) is True

    record = store.get_run(run_id)
    assert (record.status, record.answer, record.usage.llm_calls) == ("completed", "5", 1)
    assert record.plan.step("s1").status == "completed" and record.finished_at is not None


@on_both_backends
def test_finish_run_keeps_a_cancel_recorded_elsewhere(store):
    run_id = store.create_run("add up", {}, _plan())
    store.set_status(run_id, "running")
    # its executor did not answer: cancelled as dispatch does it, its steps skipped
    store.cancel_unowned(run_id, reason="cancelled while running; its worker did not answer")
    cancelled = store.get_run(run_id)

    assert store.finish_run(run_id, "completed", answer="5", usage=Usage(llm_calls=1),
                            plans=[_finished(_plan())]) is False

    record = store.get_run(run_id)
    assert (record.status, record.answer, record.usage.llm_calls) == ("cancelled", None, 0)
    assert record.finished_at == cancelled.finished_at
    assert record.plan.step("s1").status == "skipped"  # the snapshot was not replaced


@on_both_backends
def test_finish_run_of_an_unknown_run_says_so(store):
    with pytest.raises(RunNotFoundError):
        store.finish_run("no-such-run", "completed", answer=None, usage=Usage(), plans=[])
