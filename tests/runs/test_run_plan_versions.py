"""Plan versions of a run: stored while the run goes, never copied into the event log."""

from __future__ import annotations

import sqlalchemy as sa

from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.tools.toolsets import default_registry
from demo.offline import offline_plan
from tests.support.stored_runs import three_calcs
from tests.support.waiting import DEFAULT_TIMEOUT_S

REQUEST_66001 = "Check order 66001 and if it was delivered, refund it because it is broken"


def test_adaptive_checkpoint_versions_are_stored_as_the_run_goes(runner, store):
    engine = Engine(default_registry({}), None)
    plan = offline_plan(REQUEST_66001, engine.registry)
    assert any(s.tool == "apply_refund" for s in plan.steps)
    seen: list[tuple[str, int, int]] = []  # (event, its plan version, latest stored version)

    def listen(event: RunEvent) -> None:
        run_id = store.list_runs()[0].run_id  # the only run
        seen.append((event.kind, event.plan_version, store.get_run(run_id).plan.version))
        if event.kind == "replanned":
            runner.pause(run_id)  # stop right after the checkpoint

    run_id = runner.start(REQUEST_66001, plan, engine=engine, on_event=listen,
                          options=RunOptions(checkpoint="adaptive", max_attempts=1))
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "paused"
    assert record.plan.version == 2
    assert all(s.tool != "apply_refund" for s in record.plan.steps)
    after = seen[[k for k, _, _ in seen].index("replanned"):]
    assert all(stored == 2 for _, _, stored in after), seen
    v1 = store.plan_versions(run_id)[0].plan
    refund = next(s for s in v1.steps if s.tool == "apply_refund")
    assert refund.status == "skipped" and "version 2" in refund.error

    runner.resume(run_id, engine=engine)
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert record.plan.version == 2
    assert all(s.tool != "apply_refund" for s in record.plan.steps)
    assert record.plan.steps[-1].status == "completed"
    assert [v.version for v in store.plan_versions(run_id)] == [1, 2]
    with store.engine.connect() as conn:  # the plan object never reaches the events table
        sizes = conn.execute(sa.text("SELECT length(data) FROM events")).scalars().all()
    assert max(sizes) < 2000


def test_the_plan_an_event_carries_is_never_serialised():
    event = RunEvent(kind="replanned", plan_version=2, plan=three_calcs())
    assert "plan" not in event.model_dump() and '"plan":' not in event.model_dump_json()
    assert "plan=" not in repr(event)
