"""A run executed as a DBOS workflow on SQLite: steps, the mailbox, and a crash replayed.

Each test has its own home (shop data, store and DBOS database), so DBOS is relaunched
per test (about a second); the module shuts it down at its end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from dbos import DBOS

from core.execution.scheduler import RunOptions
from core.plan.model import Plan
from core.runs import durable
from core.runs.workflow import RUN_WORKFLOW
from core.store.run_store import RunStore
from tests.support import REPO
from tests.support.durable_runs import await_status, await_workflow, refund_plan
from tests.support.shop import refunds_for
from tests.support.waiting import wait_until


def submit(store: RunStore, plan: Plan, **options) -> str:
    """Record an offline run of ``plan`` (approved as it is) and put it on the queue."""
    chosen = RunOptions(**{"confirm_side_effects": False, **options}).model_dump(mode="json")
    run_id = store.create_run(plan.goal, {"offline": True}, plan,
                              options={**chosen, "approved_version": plan.version})
    store.set_workflow(run_id, run_id)
    durable.enqueue(RUN_WORKFLOW, run_id, run_id)
    return run_id






def step_names(run_id: str) -> list[str]:
    return [step["function_name"] for step in DBOS.list_workflow_steps(run_id)]


def events(store: RunStore, run_id: str) -> list[tuple[str, str | None]]:
    return [(event.kind, event.step_id) for event in store.events(run_id)]


def test_a_run_executes_as_a_workflow_and_names_its_worker(launched, store):
    durable.launch(durable.worker_executor_id("worker-a"))  # an embedded process is none
    run_id = submit(store, refund_plan())

    assert await_workflow(run_id) == "SUCCESS"
    record = store.get_run(run_id)
    assert record.status == "completed"
    assert [s.status for s in record.plan.steps] == ["completed"] * 3
    assert len(refunds_for("88231")) == 1
    names = step_names(run_id)
    assert names[0] == "load"
    assert [n for n in names if n.startswith("step:")] == ["step:s1:v1", "step:s2:v1",
                                                           "step:s3:v1"]
    finished = [e for e in store.events(run_id) if e.kind == "step_completed"]
    assert {e.data["worker"] for e in finished} == {"worker-a"}


def test_a_confirmation_arrives_by_mail_and_the_wait_records_nothing(launched, store):
    run_id = submit(store, refund_plan(), confirm_side_effects=True)

    assert await_status(store, run_id, {"waiting_confirmation"}) == "waiting_confirmation"
    time.sleep(0.3)  # the workflow is now blocked in its mailbox
    recorded = len(step_names(run_id))
    time.sleep(1.5)
    assert len(step_names(run_id)) <= recorded + 1  # no polling while a person decides
    assert refunds_for("88231") == []

    durable.send_control(run_id, "confirm:s2")
    assert await_workflow(run_id) == "SUCCESS"
    assert store.get_run(run_id).status == "completed"
    assert len(refunds_for("88231")) == 1
    assert ("confirmed", "s2") in events(store, run_id)


def test_pause_and_resume_by_mail(launched, store):
    run_id = submit(store, refund_plan(), step_delay_s=0.6)
    assert await_status(store, run_id, {"running"}) == "running"

    durable.send_control(run_id, "pause")
    assert await_status(store, run_id, {"paused"}) == "paused"
    started = [e for e in events(store, run_id) if e[0] == "step_started"]
    time.sleep(1.0)
    assert [e for e in events(store, run_id) if e[0] == "step_started"] == started

    durable.send_control(run_id, "resume")
    assert await_workflow(run_id) == "SUCCESS"
    assert store.get_run(run_id).status == "completed"
    assert ("resumed", None) in events(store, run_id)


def test_cancel_by_mail_skips_what_is_left(launched, store):
    run_id = submit(store, refund_plan(), step_delay_s=2.0)  # the refund starts after 4 s
    assert await_status(store, run_id, {"running"}) == "running"

    durable.send_control(run_id, "cancel")
    assert await_workflow(run_id) == "SUCCESS"  # the workflow ended; the run was cancelled
    record = store.get_run(run_id)
    assert record.status == "cancelled"
    assert "pending" not in {s.status for s in record.plan.steps}
    assert refunds_for("88231") == []


CRASHING = r'''
import sys, time
from dbos import DBOS, SetWorkflowID
from core.runs import durable
from core.runs.workflow import run_workflow
run_id = sys.argv[1]
durable.launch("crashing-worker")
with SetWorkflowID(run_id):
    DBOS.start_workflow(run_workflow, run_id)
time.sleep(600)
'''


def test_a_run_killed_mid_way_is_replayed_without_repeating_its_steps(launched, store):
    plan = refund_plan()
    chosen = RunOptions(confirm_side_effects=False, step_delay_s=1.5).model_dump(mode="json")
    run_id = store.create_run(plan.goal, {"offline": True}, plan,
                              options={**chosen, "approved_version": 1})
    store.set_workflow(run_id, run_id)
    crashing = subprocess.Popen([sys.executable, "-c", CRASHING, run_id],
                                env={**os.environ, "PYTHONPATH": str(REPO)},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def s3_started() -> bool:
            assert crashing.poll() is None, crashing.stderr.read()
            return ("step_started", "s3") in events(store, run_id)

        wait_until(s3_started, what="the crashing worker to start s3")
    finally:
        crashing.send_signal(signal.SIGKILL)
        crashing.wait()
        crashing.stderr.close()
    assert store.get_run(run_id).plan.step("s3").status == "running"
    assert len(refunds_for("88231")) == 1

    DBOS.resume_workflow(run_id)  # this process takes over: the dead one's id is gone
    assert await_workflow(run_id) == "SUCCESS"
    record = store.get_run(run_id)
    assert record.status == "completed"
    assert len(refunds_for("88231")) == 1
    log = events(store, run_id)
    # the replay wrote no event twice: s1 and s2 started once; s3 ran again from its start
    assert log.count(("step_started", "s1")) == 1
    assert log.count(("step_started", "s2")) == 1
    assert log.count(("step_completed", "s2")) == 1
    assert log.count(("step_completed", "s3")) == 1
    assert [e.seq for e in store.events(run_id)] == list(range(1, len(log) + 1))


def test_a_run_this_process_cannot_execute_fails_with_the_reason(launched, store):
    plan = refund_plan()
    run_id = store.create_run(plan.goal, {"offline": False, "base_url": "http://127.0.0.1:9/v1"},
                              plan, options={"approved_version": 1})
    store.set_workflow(run_id, run_id)
    durable.enqueue(RUN_WORKFLOW, run_id, run_id)  # no OPENAI_API_KEY in this environment

    assert await_workflow(run_id) == "SUCCESS"
    record = store.get_run(run_id)
    assert record.status == "failed"
    finished = [e for e in store.events(run_id) if e.kind == "run_finished"]
    assert "OPENAI_API_KEY" in finished[-1].data["error"]
    assert refunds_for("88231") == []


def test_a_pause_sent_while_the_run_is_queued_holds_its_first_step(launched, store):
    durable.shutdown()  # nobody serves the queue: the pause is in the mailbox first
    run_id = submit(store, refund_plan())
    durable.send_control(run_id, "pause")
    durable.launch(durable.embedded_executor_id())

    assert await_status(store, run_id, {"paused"}) == "paused"
    assert [kind for kind, _ in events(store, run_id) if kind.startswith("step_")] == []
    durable.send_control(run_id, "resume")
    assert await_workflow(run_id) == "SUCCESS"
    assert store.get_run(run_id).status == "completed"
    assert len(refunds_for("88231")) == 1


def test_a_whole_run_replays_from_its_record_writing_and_doing_nothing_again(launched, store):
    """A fork from after the last recorded step replays every decision of the run from the
    record (a confirmation by mail, a pause and a resume included): any decision made
    differently would meet a recorded step of another name and fail the fork."""
    run_id = submit(store, refund_plan(), confirm_side_effects=True, step_delay_s=0.3)
    assert await_status(store, run_id, {"waiting_confirmation"}) == "waiting_confirmation"
    durable.send_control(run_id, "pause")
    assert await_status(store, run_id, {"paused"}) == "paused"
    durable.send_control(run_id, "resume")
    durable.send_control(run_id, "confirm:s2")
    assert await_workflow(run_id) == "SUCCESS"
    before = store.get_run(run_id)
    logged = [(e.seq, e.kind, e.step_id) for e in store.events(run_id)]
    recorded = step_names(run_id)
    assert before.status == "completed" and "DBOS.recv" in recorded

    # fork_workflow takes a step id: the fork starts after the highest one recorded
    last = max(step["function_id"] for step in DBOS.list_workflow_steps(run_id))
    fork = DBOS.fork_workflow(run_id, last + 1)
    assert await_workflow(fork.workflow_id) == "SUCCESS"
    assert fork.get_result() == "completed"
    assert step_names(fork.workflow_id) == recorded
    assert [(e.seq, e.kind, e.step_id) for e in store.events(run_id)] == logged
    after = store.get_run(run_id)
    assert (after.status, after.answer, after.usage) == (before.status, before.answer,
                                                          before.usage)
    assert len(refunds_for("88231")) == 1
