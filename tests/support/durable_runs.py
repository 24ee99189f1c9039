"""Shared by the tests of runs executed as DBOS workflows (a pytest plugin, see conftest):
the ``launched`` fixture, a refund plan, and waits for a run's status in the store or its
workflow's status in DBOS."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.plan.model import Plan, Step
from core.runs import durable
from core.store.run_store import RunStore
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until


@pytest.fixture(scope="module")
def dbos_of_the_module() -> Iterator[None]:
    """DBOS is shut down when the module that used it ends: no other file inherits it."""
    yield
    durable.shutdown()


@pytest.fixture
def launched(dbos_of_the_module, isolated_environment) -> durable.Launched:
    """DBOS running in this test's home (relaunched there: about a second), serving the
    runs queue with the run workflow registered."""
    import core.runs.workflow  # noqa: F401  registers the run workflow

    return durable.launch(durable.embedded_executor_id())


def refund_plan(*, tail: bool = False) -> Plan:
    """Look up order 88231, refund it, add up; ``tail``: one more step after that."""
    steps = [
        Step(id="s1", description="look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="refund order 88231", tool="apply_refund",
             args={"order_id": "88231", "reason": "broken"}, depends_on=["s1"]),
        Step(id="s3", description="add up", tool="calculate", args={"expression": "2+3"},
             depends_on=["s2"]),
    ]
    if tail:
        steps.append(Step(id="s4", description="multiply", tool="calculate",
                          args={"expression": "4*5"}, depends_on=["s3"]))
    return Plan(goal="refund order 88231", steps=steps)


def await_status(store: RunStore, run_id: str, wanted: set[str],
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
    """The run's status once it is one of ``wanted``; AssertionError naming the status it
    kept when ``timeout_s`` passes first."""
    seen: list[str] = []

    def reached() -> str | None:
        seen.append(store.get_run(run_id).status)
        return seen[-1] if seen[-1] in wanted else None

    try:
        return wait_until(reached, timeout_s, what=f"run {run_id} to be one of {sorted(wanted)}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}: it stayed {seen[-1]!r}") from None


def await_workflow(run_id: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
    """The workflow's DBOS status once it is no longer queued or running."""

    def ended() -> str | None:
        status = durable.workflow_status(run_id)
        return None if status in (None, "ENQUEUED", "PENDING") else status

    return wait_until(ended, timeout_s, what=f"workflow {run_id} to end")
