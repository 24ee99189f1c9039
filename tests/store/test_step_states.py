"""An event about one step writes that step, not the whole plan; readers see the sum."""

from __future__ import annotations

import sqlalchemy as sa

from core.execution.events import RunEvent
from core.execution.options import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.live_run import LiveRun
from core.store.run_store import RunStore
from core.store.schema import plan_versions, step_states


def chain(count: int, version: int = 1) -> Plan:
    return Plan(id="plan1", goal="g", version=version, steps=[
        Step(id=f"s{n}", description=f"add {n}", tool="calculate",
             args={"expression": f"{n} + 1"}, depends_on=[f"s{n - 1}"] if n > 1 else [])
        for n in range(1, count + 1)])


def rows(store: RunStore) -> list[tuple[int, str]]:
    with store.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(
            sa.select(step_states.c.version, step_states.c.step_id)
            .order_by(step_states.c.step_id))]


def snapshot(store: RunStore, run_id: str) -> dict:
    with store.engine.connect() as conn:
        return conn.execute(sa.select(plan_versions.c.plan).where(
            plan_versions.c.run_id == run_id)).scalar_one()


def test_a_step_written_alone_is_read_back_over_its_versions_snapshot(store):
    plan = chain(3)
    run_id = store.create_run("g", {}, plan)
    before = snapshot(store, run_id)
    plan.step("s2").advance("running")
    store.record_step(run_id, RunEvent(kind="step_started", step_id="s2"), plan,
                      only_step="s2")
    assert snapshot(store, run_id) == before  # the snapshot was not rewritten
    assert rows(store) == [(1, "s2")]
    assert [s.status for s in store.get_run(run_id).plan.steps] == [
        "pending", "running", "pending"]
    [version] = store.plan_versions(run_id)
    assert version.plan.step("s2").status == "running"
    assert store.get_run(run_id).plan.step("s2").started_at == plan.step("s2").started_at


def test_a_whole_snapshot_of_the_version_clears_its_step_rows(store):
    plan = chain(2)
    run_id = store.create_run("g", {}, plan)
    plan.step("s1").advance("running")
    store.record_step(run_id, RunEvent(kind="step_started", step_id="s1"), plan,
                      only_step="s1")
    plan.step("s1").advance("completed")
    store.record_step(run_id, RunEvent(kind="paused"), plan)
    assert rows(store) == []
    assert store.get_run(run_id).plan.step("s1").status == "completed"


def test_step_rows_belong_to_their_version(store):
    run_id = store.create_run("g", {}, chain(2))
    second = chain(2, version=2)
    store.record_step(run_id, RunEvent(kind="replanned", plan_version=2,
                                       data={"source": "failure"}), second, previous=chain(2))
    second.step("s1").advance("running")
    store.record_step(run_id, RunEvent(kind="step_started", step_id="s1", plan_version=2),
                      second, only_step="s1")
    first, latest = store.plan_versions(run_id)
    assert first.plan.step("s1").status == "pending"
    assert latest.plan.step("s1").status == "running"


def test_a_cancel_of_a_run_nobody_executes_sees_the_steps_written_alone(store):
    plan = chain(2)
    run_id = store.create_run("g", {}, plan, status="running")
    plan.step("s1").advance("running")
    plan.step("s1").advance("completed")
    store.record_step(run_id, RunEvent(kind="step_completed", step_id="s1"), plan,
                      only_step="s1")
    record = store.cancel_unowned(run_id, reason="test")
    assert [s.status for s in record.plan.steps] == ["completed", "skipped"]


class _Recorded(LiveRun):
    def _run_until_settled(self):  # pragma: no cover - recording only
        raise NotImplementedError


def test_a_live_run_writes_one_step_per_step_event_once_its_plan_is_stored(store, registry):
    plan = chain(3)
    run_id = store.create_run("g", {}, plan)
    live = _Recorded(store=store, run_id=run_id, engine=Engine(registry=registry, model=None),
                     options=RunOptions(), plan=plan)
    plan.step("s1").advance("running")
    live.record(RunEvent(kind="step_started", step_id="s1", plan=plan))
    assert rows(store) == []  # the first write of a process stores the whole plan
    plan.step("s1").advance("completed")
    live.record(RunEvent(kind="step_completed", step_id="s1", plan=plan))
    plan.step("s2").advance("running")
    live.record(RunEvent(kind="step_started", step_id="s2", plan=plan))
    assert rows(store) == [(1, "s1"), (1, "s2")]
    newer = chain(3, version=2)
    live.record(RunEvent(kind="replanned", plan_version=2, plan=newer,
                         data={"source": "failure", "reason": "r"}))
    newer.step("s1").advance("running")
    live.record(RunEvent(kind="step_started", step_id="s1", plan=newer))
    assert rows(store) == [(2, "s1")]
    assert [v.version for v in store.plan_versions(run_id)] == [1, 2]
    assert store.get_run(run_id).plan.step("s1").status == "running"


def test_a_step_added_to_the_plan_since_its_snapshot_is_stored_with_the_plan(store, registry):
    plan = chain(1)
    run_id = store.create_run("g", {}, plan)
    live = _Recorded(store=store, run_id=run_id, engine=Engine(registry=registry, model=None),
                     options=RunOptions(), plan=plan)
    live.record(RunEvent(kind="run_started", plan=plan))
    plan.steps.append(Step(id="s2", description="a call an answer made", tool="calculate"))
    plan.step("s2").advance("running")
    live.record(RunEvent(kind="step_started", step_id="s2", plan=plan))  # new: whole plan
    assert rows(store) == []
    plan.step("s2").advance("completed")
    live.record(RunEvent(kind="step_completed", step_id="s2", plan=plan))
    assert rows(store) == [(1, "s2")]
    assert [(s.id, s.status) for s in store.get_run(run_id).plan.steps] == [
        ("s1", "pending"), ("s2", "completed")]
