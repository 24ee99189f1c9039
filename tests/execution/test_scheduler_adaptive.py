"""Checkpoint policies, success checks and failure classes wired into the scheduler."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from concurrent.futures import wait

import pytest

from core.errors import ToolExecutionError
from core.execution.control import ControlWake, RunControl
from core.execution.events import RunEvent
from core.execution.launcher import Finished, ThreadPoolLauncher, paced_work
from core.execution.scheduler import RunOptions, run_plan
from core.llm.engine import Engine
from core.plan.model import Plan
from core.tools.registry import ToolRegistry, make_tool
from tests.support.fakes import ScriptedChatModel, answer, lookup

SEED_000 = ("我家老人想要一台扫地机，预算 2000 以内，要好操作的。另外帮我看看订单 66001 到了没，"
            "到了的话帮我把那台坏的退掉。")


class Tools:
    """A lookup tool (failing on demand, optionally slow) and a side-effecting refund."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.errors: dict[str, str] = {}
        self.delays: dict[str, float] = {}
        self.windows: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        def lookup(key: str) -> dict:
            """Look something up.

            Args:
                key: what to look up.
            """
            start = time.monotonic()
            with self.lock:
                self.calls.append(key)
            time.sleep(self.delays.get(key, 0))
            self.windows[key] = (start, time.monotonic())
            if key in self.errors:
                raise ToolExecutionError(self.errors[key])
            return {"value": f"lookup:{key}", "items": [key] if key != "empty" else []}

        def refund(order_id: str) -> dict:
            """Refund an order.

            Args:
                order_id: the order.
            """
            with self.lock:
                self.calls.append(f"refund:{order_id}")
            return {"refund_id": "R1"}

        registry.add(make_tool(lookup, read_only=True))
        registry.add(make_tool(refund))
        return registry


@pytest.fixture
def timed_tools() -> Tools:
    return Tools()


def no_replan(plan, failure, engine):
    raise AssertionError(f"no replan expected: {failure}")


def recording_replanner(seen: list[str]):
    """Keeps the finished steps and replaces the pending ones by a fresh lookup + answer."""

    def replanner(old: Plan, failure: str, _engine: Engine) -> Plan:
        seen.append(failure)
        kept = [s.model_copy(deep=True) for s in old.steps if s.status == "completed"]
        number = int(old.next_step_id()[1:])
        return Plan(id=old.id, goal=old.goal, version=old.version + 1, steps=[
            *kept, lookup(f"s{number}", "good"),
            answer(f"s{number + 1}", *(s.id for s in kept), f"s{number}")])

    return replanner


def collect() -> tuple[list[RunEvent], object]:
    events: list[RunEvent] = []
    return events, events.append


def test_rigid_never_replans_and_the_answer_says_what_failed(timed_tools):
    timed_tools.errors["bad"] = "lookup broke on bad"
    engine = Engine(registry=timed_tools.registry(), model=None)
    plan = Plan(goal="g", steps=[lookup("s1", "bad"), lookup("s2", "next", "s1"),
                                 answer("s3", "s2")])
    outcome = run_plan(plan, engine, replanner=no_replan,
                       options=RunOptions(checkpoint="rigid", max_replans=2))
    assert outcome.status == "failed" and len(outcome.versions) == 1
    assert "lookup broke on bad" in outcome.answer
    assert plan.step("s2").status == "skipped" and "s1" in plan.step("s2").error


def test_rigid_records_a_missed_criterion_without_replanning(timed_tools):
    engine = Engine(registry=timed_tools.registry(), model=None)
    plan = Plan(goal="g", steps=[
        lookup("s1", "a", success_criteria="result.value == 'lookup:zzz'"),
        lookup("s2", "b", "s1"), answer("s3", "s1", "s2")])
    events, sink = collect()
    outcome = run_plan(plan, engine, replanner=no_replan, on_event=sink,
                       options=RunOptions(checkpoint="rigid"))
    assert outcome.status == "completed" and len(outcome.versions) == 1
    done = next(e for e in events if e.kind == "step_completed" and e.step_id == "s1")
    assert done.data["success"]["met"] is False and done.data["success"]["how"] == "structural"
    assert any("s1" in w and "success criteria" in w for w in outcome.warnings)


def test_on_failure_replans_a_fatal_failure(timed_tools):
    timed_tools.errors["bad"] = "lookup broke on bad"
    engine = Engine(registry=timed_tools.registry(), model=ScriptedChatModel(replies=["done"]))
    plan = Plan(goal="g", steps=[lookup("s1", "a"), lookup("s2", "bad", "s1"),
                                 lookup("s3", "c", "s2"), answer("s4", "s1", "s3")])
    seen: list[str] = []
    events, sink = collect()
    outcome = run_plan(plan, engine, replanner=recording_replanner(seen), on_event=sink,
                       options=RunOptions(checkpoint="on_failure"))
    assert outcome.status == "completed" and outcome.answer == "done"
    assert [v.version for v in outcome.versions] == [1, 2]
    assert "s2" in seen[0] and "lookup broke on bad" in seen[0]
    failed = next(e for e in events if e.kind == "step_failed")
    assert failed.data["failure_class"] == "fatal"
    replanned = next(e for e in events if e.kind == "replanned")
    assert replanned.data["source"] == "failure"


@pytest.mark.parametrize("confirm", [False, True])
def test_adaptive_drops_the_refund_of_an_order_already_refunding(confirm):
    from core.tools.toolsets import default_registry
    from demo.offline import offline_plan
    from demo.shop import shop_db_path

    registry = default_registry()
    plan = offline_plan(SEED_000, registry)
    refund_ids = [s.id for s in plan.steps if s.tool == "apply_refund"]
    assert refund_ids, "the offline plan should contain a refund step"
    events, sink = collect()
    outcome = run_plan(plan, Engine(registry=registry, model=None), on_event=sink,
                       options=RunOptions(checkpoint="adaptive", confirm_side_effects=confirm))
    assert outcome.status == "completed"
    assert [v.version for v in outcome.versions] == [1, 2]
    assert "waiting_confirmation" not in [e.kind for e in events]  # never asked to refund
    assert not any(s.tool == "apply_refund" for s in outcome.plan.steps)
    assert outcome.versions[0].step(refund_ids[0]).error == "replaced by plan version 2"
    replanned = next(e for e in events if e.kind == "replanned")
    assert replanned.data["source"] == "checkpoint" and "66001" in replanned.data["reason"]
    assert replanned.data["from_version"] == 1 and replanned.data["to_version"] == 2
    assert not any(e.kind == "step_started" and e.step_id in refund_ids for e in events)
    with sqlite3.connect(shop_db_path()) as conn:
        refunds = conn.execute("SELECT refund_id FROM refunds WHERE order_id = '66001'"
                               ).fetchall()
    assert refunds == [("RF20260620001",)]  # the seeded one; no second refund
    assert "RF20260620001" in outcome.answer and "66001" in outcome.answer
    assert "退款" in outcome.answer and "处理中" in outcome.answer


def test_adaptive_llm_checkpoint_changes_only_pending_steps_and_counts_usage(timed_tools):
    decision = {"needs_replan": True, "reason": "b is no longer needed",
                "updated_pending_steps": [{"id": "s3", "description": "answer the user",
                                           "tool": None, "depends_on": ["s1"]}]}
    model = ScriptedChatModel(replies=[json.dumps(decision), "final"])
    engine = Engine(registry=timed_tools.registry(), model=model)
    plan = Plan(goal="find a then b", steps=[lookup("s1", "a"), lookup("s2", "b", "s1"),
                                             answer("s3", "s1", "s2")])
    outcome = run_plan(plan, engine, replanner=no_replan,
                       options=RunOptions(checkpoint="adaptive"))
    assert outcome.status == "completed" and outcome.answer.startswith("final")
    assert [v.version for v in outcome.versions] == [1, 2]
    assert outcome.plan.ids() == ["s1", "s3"] and timed_tools.calls == ["a"]
    assert outcome.plan.step("s1").result == plan.step("s1").result
    assert outcome.usage.llm_calls == 2  # the checkpoint and the synthesis


class TogetherLauncher(ThreadPoolLauncher):
    """Hands finished steps back once every running step has finished: steps that run side
    by side finish together whatever the machine's timing (a busy one can otherwise hand
    back s1 before s2 has returned)."""

    def next_done(self, timeout: float, wake: ControlWake) -> list[Finished]:
        wait(list(self._running), timeout=timeout)
        return super().next_done(timeout, wake)


def test_steps_that_finish_together_share_one_checkpoint(timed_tools):
    keep = {"needs_replan": False, "reason": "the plan still holds"}
    model = ScriptedChatModel(replies=[json.dumps(keep), "final"])
    engine = Engine(registry=timed_tools.registry(), model=model)
    plan = Plan(goal="find a and b, then c", steps=[
        lookup("s1", "a"), lookup("s2", "b"), lookup("s3", "c", "s1", "s2"),
        answer("s4", "s1", "s2", "s3")])
    control = RunControl()
    with TogetherLauncher(paced_work(engine, control, 0), max_parallel=2) as launcher:
        outcome = run_plan(plan, engine, replanner=no_replan, control=control,
                           launcher=launcher,
                           options=RunOptions(checkpoint="adaptive", max_parallel=2))
    assert outcome.status == "completed" and outcome.answer.startswith("final")
    checkpoint, synthesis = model.requests
    asked = checkpoint["messages"][1]["content"]
    assert "Steps that just finished together:\n- s1: " in asked and "\n- s2: " in asked
    assert "lookup:a" in asked and "lookup:b" in asked and '"id": "s3"' in asked
    assert synthesis["role"] != "planner" and outcome.usage.llm_calls == 2


def test_every_step_replans_after_each_step(timed_tools):
    engine = Engine(registry=timed_tools.registry(), model=ScriptedChatModel(replies=["final"]))
    plan = Plan(goal="g", steps=[lookup("s1", "a"), lookup("s2", "b", "s1"),
                                 lookup("s3", "c", "s2"), answer("s4", "s1", "s2", "s3")])
    reasons: list[str] = []

    def replanner(old: Plan, reason: str, _engine: Engine) -> Plan:
        reasons.append(reason)
        assert not any(s.status == "running" for s in old.steps)
        return old.model_copy(deep=True, update={"version": old.version + 1})

    events, sink = collect()
    outcome = run_plan(plan, engine, replanner=replanner, on_event=sink,
                       options=RunOptions(checkpoint="every_step"))
    assert outcome.status == "completed" and outcome.answer == "final"
    # after s1 and s2; after s3 only the synthesis is left, so nothing to replan
    assert [v.version for v in outcome.versions] == [1, 2, 3]
    assert len(reasons) == 2 and "s1" in reasons[0] and "s2" in reasons[1]
    assert [e.data["source"] for e in events if e.kind == "replanned"] == ["checkpoint"] * 2
    assert timed_tools.calls == ["a", "b", "c"]
    assert outcome.versions[0].step("s2").status == "skipped"  # retired in version 1


def test_a_missed_success_criterion_triggers_a_replan(timed_tools):
    engine = Engine(registry=timed_tools.registry(), model=ScriptedChatModel(replies=["done"]))
    plan = Plan(goal="g", steps=[
        lookup("s1", "empty", success_criteria="returns at least one item"),
        lookup("s2", "then", "s1"), answer("s3", "s1", "s2")])
    seen: list[str] = []
    events, sink = collect()
    outcome = run_plan(plan, engine, replanner=recording_replanner(seen), on_event=sink)
    assert outcome.status == "completed"
    assert [v.version for v in outcome.versions] == [1, 2]
    assert "s1" in seen[0] and "returns at least one item" in seen[0]
    assert outcome.plan.step("s1").status == "completed"  # status only moves forward
    assert "then" not in timed_tools.calls  # s2 waited for the replan and was replaced
    done = next(e for e in events if e.kind == "step_completed" and e.step_id == "s1")
    assert done.data["success"] == {"met": False, "reason": "the result holds 0 item(s)",
                                    "how": "structural", "message": {
                                        "code": "check.result_size", "params": {"size": 0}}}
    assert not any("success criteria" in w for w in outcome.warnings)


def test_an_ignorable_failure_does_not_block_the_run(timed_tools):
    timed_tools.errors["slow"] = "no results for 'slow'"  # found nothing (a timeout is fatal)
    engine = Engine(registry=timed_tools.registry(), model=None)
    plan = Plan(goal="g", steps=[lookup("s1", "slow"), lookup("s2", "fine"),
                                 answer("s3", "s1", "s2")])
    events, sink = collect()
    outcome = run_plan(plan, engine, replanner=no_replan, on_event=sink)
    assert outcome.status == "completed" and len(outcome.versions) == 1
    assert plan.step("s1").status == "failed" and plan.step("s3").status == "completed"
    failed = next(e for e in events if e.kind == "step_failed")
    assert failed.data["failure_class"] == "ignorable"
    assert any("s1" in w and "no results" in w for w in outcome.warnings)
    assert "lookup:fine" in outcome.answer


def test_the_same_failure_is_fatal_under_rigid(timed_tools):
    timed_tools.errors["slow"] = "search timed out"
    engine = Engine(registry=timed_tools.registry(), model=None)
    plan = Plan(goal="g", steps=[lookup("s1", "slow"), lookup("s2", "fine"),
                                 answer("s3", "s1", "s2")])
    outcome = run_plan(plan, engine, options=RunOptions(checkpoint="rigid"))
    assert outcome.status == "failed" and "search timed out" in outcome.answer


def test_a_checkpoint_waits_until_no_step_runs_and_keeps_parallel_results(timed_tools):
    timed_tools.delays.update(fast=0.15, slow=0.4)
    engine = Engine(registry=timed_tools.registry(), model=ScriptedChatModel(replies=["final"]))
    plan = Plan(goal="g", steps=[lookup("s1", "fast"), lookup("s2", "slow"),
                                 lookup("s3", "next", "s1"), answer("s4", "s2", "s3")])
    states: list[dict[str, str]] = []

    def replanner(old: Plan, _reason: str, _engine: Engine) -> Plan:
        states.append({s.id: s.status for s in old.steps})
        return old.model_copy(deep=True, update={"version": old.version + 1})

    outcome = run_plan(plan, engine, replanner=replanner,
                       options=RunOptions(checkpoint="every_step"))
    assert outcome.status == "completed"
    assert all("running" not in state.values() for state in states)
    fast, slow = timed_tools.windows["fast"], timed_tools.windows["slow"]
    assert fast[0] < slow[1] and slow[0] < fast[1]  # s1 and s2 still overlapped
    assert timed_tools.windows["next"][0] >= slow[1]  # s3 waited for the checkpoint
    assert outcome.plan.step("s2").result == {"value": "lookup:slow", "items": ["slow"]}


def test_an_outcome_finishing_after_a_version_change_lands_in_the_new_version(timed_tools):
    from core.execution.control import RunControl
    from core.execution.coordinator import Coordinator, RunBook
    from core.execution.executor import StepOutcome
    from core.execution.launcher import ThreadPoolLauncher

    old = Plan(goal="g", steps=[lookup("s1", "a"), answer("s2", "s1")])
    old.step("s1").advance("running")
    events, sink = collect()
    unused = ThreadPoolLauncher(lambda *_: StepOutcome(status="skipped"), 1)  # starts nothing
    coordinator = Coordinator(old, Engine(registry=timed_tools.registry()), RunOptions(),
                              RunControl(), lambda kind, plan, step_id=None, **data: sink(
                                  RunEvent(kind=kind, step_id=step_id, data=data,
                                           plan_version=plan.version)), RunBook(versions=[old]),
                              launcher=unused)
    coordinator.plan = old.model_copy(deep=True, update={"version": 2})  # s1 copied running
    coordinator._apply(old.step("s1"), StepOutcome(status="completed", result={"value": 1}))
    assert coordinator.plan.step("s1").status == "completed"
    assert coordinator.plan.step("s1").result == {"value": 1}
    assert old.step("s1").status == "completed"  # the old version does not stay running
    assert [(e.kind, e.plan_version) for e in events] == [("step_completed", 2)]
