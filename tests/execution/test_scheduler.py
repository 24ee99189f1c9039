"""The scheduler: parallelism, replanning, failures, pause/resume/cancel, confirmation."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from core.base.usage import Usage
from core.execution.control import RunControl
from core.execution.events import RunEvent
from core.execution.scheduler import RunOptions, run_plan
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.registry import make_tool
from tests.support.fakes import ScriptedChatModel, answer, lookup, tool_reply
from tests.support.steered_tools import Tools


@pytest.fixture
def tools() -> Tools:
    return Tools()


def _events() -> tuple[list[RunEvent], object]:
    events: list[RunEvent] = []
    return events, events.append


def _finished(plan: Plan) -> bool:
    return all(s.status in {"completed", "failed", "skipped"} for s in plan.steps)


def _overlaps(intervals: list[tuple[float, float]]) -> bool:
    ordered = sorted(intervals)
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(ordered))


def _four_thoughts(reply) -> tuple[ScriptedChatModel, Plan]:
    model = ScriptedChatModel(replies=[reply] * 4 + ["final"])
    steps = [Step(id=f"s{i}", description=f"think {i}") for i in range(1, 5)]
    return model, Plan(goal="think four times",
                       steps=[*steps, answer("s5", "s1", "s2", "s3", "s4")])


def test_four_llm_bound_steps_are_in_flight_together_with_max_parallel_4(tools):
    # each call waits until all four are in flight: a run that serialised them would break
    # the barrier (after its timeout) instead of passing it
    barrier = threading.Barrier(4, timeout=20)

    def meet(_request):
        barrier.wait()
        return "thought"

    model, plan = _four_thoughts(meet)
    engine = Engine(registry=tools.registry(), model=model)
    outcome = run_plan(plan, engine, options=RunOptions(max_parallel=4), replanner=_no_replan)
    assert outcome.status == "completed" and outcome.answer == "final"
    assert [s.status for s in outcome.plan.steps] == ["completed"] * 5
    thinking_done = max(r["finished"] for r in model.requests[:4])
    assert model.requests[4]["started"] >= thinking_done  # synthesis comes last
    assert outcome.usage.llm_calls == 5


def test_llm_calls_never_overlap_with_max_parallel_1(tools):
    lock, in_flight, peak = threading.Lock(), [0], [0]

    def track(_request):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.02)  # give a second call the chance to start, if it could
        with lock:
            in_flight[0] -= 1
        return "thought"

    model, plan = _four_thoughts(track)
    engine = Engine(registry=tools.registry(), model=model)
    outcome = run_plan(plan, engine, options=RunOptions(max_parallel=1), replanner=_no_replan)
    assert outcome.status == "completed" and outcome.answer == "final"
    assert peak[0] == 1
    intervals = [(r["started"], r["finished"]) for r in model.requests]
    assert not _overlaps(intervals)


def _no_replan(plan, failure, engine):
    raise AssertionError(f"no replan expected: {failure}")


def test_failure_replans_to_version_two_keeping_completed_results(tools):
    tools.fail.add("bad")
    engine = Engine(registry=tools.registry(), model=ScriptedChatModel(replies=["done"]))
    plan = Plan(goal="g", steps=[lookup("s1", "a"), lookup("s2", "bad", "s1"),
                                 answer("s3", "s1", "s2")])
    seen: list[str] = []

    def replanner(old: Plan, failure: str, _engine: Engine) -> Plan:
        seen.append(failure)
        kept = [s.model_copy(deep=True) for s in old.steps if s.status == "completed"]
        return Plan(id=old.id, goal=old.goal, version=old.version + 1, steps=[
            *kept, lookup("s4", "good", "s1"), answer("s5", "s1", "s4")])

    events, sink = _events()
    outcome = run_plan(plan, engine, on_event=sink, replanner=replanner)
    assert outcome.status == "completed" and outcome.answer == "done"
    assert [v.version for v in outcome.versions] == [1, 2]
    assert outcome.plan.version == 2
    assert outcome.plan.step("s1").result == {"value": "lookup:a"}
    assert "s2" in seen[0] and "could not find bad" in seen[0]
    assert [c[1]["key"] for c in tools.calls].count("a") == 1  # s1 not re-run
    replanned = [e for e in events if e.kind == "replanned"]
    assert replanned[0].data["from_version"] == 1 and replanned[0].data["to_version"] == 2
    assert _finished(outcome.versions[0]) and _finished(outcome.plan)
    assert outcome.versions[0].step("s3").error == "replaced by plan version 2"


def test_independent_step_is_not_blocked_and_dependents_are_skipped(tools):
    tools.fail.add("bad")
    engine = Engine(registry=tools.registry(), model=None)
    plan = Plan(goal="do two things", steps=[
        lookup("s1", "bad"), lookup("s2", "fine"), lookup("s3", "later", "s1"),
        answer("s4", "s2", "s3")])
    outcome = run_plan(plan, engine, options=RunOptions(max_replans=0))
    assert outcome.status == "failed"
    assert plan.step("s2").status == "completed"
    assert plan.step("s3").status == "skipped" and "s1" in plan.step("s3").error
    assert plan.step("s4").status == "skipped"
    assert "s1" in outcome.answer and "could not find bad" in outcome.answer
    assert "lookup:fine" in outcome.answer
    assert _finished(plan)


def test_a_failing_replanner_finishes_the_run_with_a_warning(tools):
    tools.fail.add("bad")
    engine = Engine(registry=tools.registry(), model=None)
    plan = Plan(goal="g", steps=[lookup("s1", "bad"), answer("s2", "s1")])

    def broken(*_args):
        raise RuntimeError("planner offline")

    outcome = run_plan(plan, engine, replanner=broken)
    assert outcome.status == "failed" and len(outcome.versions) == 1
    assert any("planner offline" in w for w in outcome.warnings)
    assert _finished(plan)


def test_replans_stop_at_the_limit(tools):
    tools.fail.add("bad")
    engine = Engine(registry=tools.registry(), model=None)
    plan = Plan(goal="g", steps=[lookup("s1", "bad"), answer("s2", "s1")])

    def same_again(old: Plan, _failure: str, _engine: Engine) -> Plan:
        number = int(old.next_step_id()[1:])
        return Plan(goal=old.goal, version=old.version + 1, steps=[
            lookup(f"s{number}", "bad"), answer(f"s{number + 1}", f"s{number}")])

    outcome = run_plan(plan, engine, options=RunOptions(max_replans=2), replanner=same_again)
    assert outcome.status == "failed" and len(outcome.versions) == 3
    assert [c[1]["key"] for c in tools.calls] == ["bad"] * 3


def test_failed_synthesis_falls_back_to_the_results_and_fails_the_run(tools):
    model = ScriptedChatModel(replies=[RuntimeError("timeout")])
    engine = Engine(registry=tools.registry(), model=model)
    plan = Plan(goal="g", steps=[lookup("s1", "a"), answer("s2", "s1")])
    outcome = run_plan(plan, engine, replanner=_no_replan)
    assert outcome.status == "failed"  # the answer step did not succeed
    assert "lookup:a" in outcome.answer and "s2" in outcome.answer
    assert any("synthesis" in w for w in outcome.warnings)


def test_usage_totals_and_event_order(tools):
    model = ScriptedChatModel(replies=[tool_reply("lookup", {"key": "x"}), "all done"])
    engine = Engine(registry=tools.registry(), model=model)
    plan = Plan(goal="g", steps=[
        Step(id="s1", description="look up x", tool="lookup"), answer("s2", "s1")])
    events, sink = _events()
    outcome = run_plan(plan, engine, on_event=sink, options=RunOptions(run_id="r1"))
    assert outcome.usage == Usage(llm_calls=2, prompt_tokens=150, completion_tokens=30)
    assert plan.step("s1").llm_calls == 1 and plan.step("s2").llm_calls == 1
    kinds = [(e.kind, e.step_id) for e in events]
    assert kinds == [("run_started", None), ("step_started", "s1"), ("step_completed", "s1"),
                     ("step_started", "s2"), ("step_completed", "s2"), ("run_finished", None)]
    assert events[2].data["mode"] == "forced_tool"
    assert events[2].data["resolved_args"] == {"key": "x"}
    assert events[-1].data == {"status": "completed", "answer": "all done"}


def test_pause_then_resume_does_not_rerun_finished_steps(tools):
    control = RunControl()
    tools.on_call["a"] = control.pause
    engine = Engine(registry=tools.registry(), model=None)
    plan = Plan(goal="g", steps=[lookup("s1", "a"), lookup("s2", "b", "s1"),
                                 answer("s3", "s1", "s2")])
    events, sink = _events()
    outcome = run_plan(plan, engine, control=control, on_event=sink)
    assert outcome.status == "paused" and outcome.answer is None
    assert plan.step("s1").status == "completed" and plan.step("s2").status == "pending"
    assert "paused" in [e.kind for e in events]
    control.resume()
    outcome = run_plan(plan, engine, control=control)
    assert outcome.status == "completed"
    assert [c[1]["key"] for c in tools.calls] == ["a", "b"]


def test_cancel_skips_pending_steps_and_tells_running_ones(tools):
    control = RunControl()
    tools.on_call["a"] = control.cancel
    engine = Engine(registry=tools.registry(), model=None)
    plan = Plan(goal="g", steps=[lookup("s1", "a"), lookup("s2", "b", "s1"),
                                 answer("s3", "s2")])
    events, sink = _events()
    outcome = run_plan(plan, engine, control=control, on_event=sink)
    assert outcome.status == "cancelled"
    assert control.cancel_event.is_set()
    assert plan.step("s2").status == "skipped" and "cancelled" in plan.step("s2").error
    assert _finished(plan)
    assert [e.kind for e in events].count("cancelled") == 1
    assert [c[1]["key"] for c in tools.calls] == ["a"]


def _refund_plan() -> Plan:
    return Plan(goal="g", steps=[
        lookup("s1", "a"),
        Step(id="s2", description="refund", tool="refund", args={"order_id": "9"},
             depends_on=["s1"]),
        answer("s3", "s1", "s2")])


@pytest.mark.parametrize("decide", ["confirm", "reject"])
def test_side_effects_wait_for_a_person(tools, decide):
    control = RunControl()
    engine = Engine(registry=tools.registry(), model=None)
    events: list[RunEvent] = []

    def sink(event: RunEvent) -> None:
        events.append(event)
        if event.kind == "waiting_confirmation":
            # a person answers from another thread a little later
            threading.Timer(0.05, getattr(control, decide), args=(event.step_id,)).start()

    plan = _refund_plan()
    outcome = run_plan(plan, engine, control=control, on_event=sink,
                       options=RunOptions(confirm_side_effects=True, run_id="run7"))
    kinds = [e.kind for e in events]
    assert kinds.index("waiting_confirmation") < kinds.index(
        "confirmed" if decide == "confirm" else "rejected")
    assert outcome.status == "completed"
    if decide == "confirm":
        assert ("refund", {"order_id": "9"}, "run7:s2:v1") in tools.calls
    else:
        assert plan.step("s2").status == "skipped"
        assert plan.step("s2").error == "rejected by a person"
        assert all(c[0] != "refund" for c in tools.calls)


def test_no_confirmation_needed_by_default_and_condition_skips_early(tools):
    engine = Engine(registry=tools.registry(), model=None)
    plan = _refund_plan()
    plan.step("s2").condition = "s1.value == 'lookup:zzz'"
    events, sink = _events()
    outcome = run_plan(plan, engine, on_event=sink,
                       options=RunOptions(confirm_side_effects=True))
    assert outcome.status == "completed"
    assert plan.step("s2").status == "skipped" and "condition" in plan.step("s2").error
    assert "waiting_confirmation" not in [e.kind for e in events]
    assert ("step_started", "s2") not in [(e.kind, e.step_id) for e in events]


def test_pause_while_waiting_for_confirmation_keeps_the_step_pending(tools):
    control = RunControl()
    engine = Engine(registry=tools.registry(), model=None)

    def sink(event: RunEvent) -> None:
        if event.kind == "waiting_confirmation":
            threading.Timer(0.05, control.pause).start()

    plan = _refund_plan()
    options = RunOptions(confirm_side_effects=True)
    outcome = run_plan(plan, engine, control=control, on_event=sink, options=options)
    assert outcome.status == "paused" and plan.step("s2").status == "pending"
    control.resume()
    control.confirm("s2")
    outcome = run_plan(plan, engine, control=control, options=options)
    assert outcome.status == "completed" and plan.step("s2").status == "completed"


def test_a_raising_tool_ends_its_step_not_the_run(tools):
    registry = tools.registry()

    def explode() -> dict:
        """Explodes."""
        raise ZeroDivisionError("nope")

    registry.add(make_tool(explode, read_only=True))
    engine = Engine(registry=registry, model=None)
    plan = Plan(goal="g", steps=[Step(id="s1", description="x", tool="explode", args={}),
                                 lookup("s2", "b"), answer("s3", "s2")])
    outcome = run_plan(plan, engine, options=RunOptions(max_replans=0))
    assert plan.step("s1").status == "failed" and "nope" in plan.step("s1").error
    assert plan.step("s2").status == "completed" and plan.step("s3").status == "completed"
    assert outcome.status == "failed"


def test_a_step_left_running_by_a_crash_is_reset_and_run(tools):
    engine = Engine(registry=tools.registry(), model=None)
    plan = Plan(goal="g", steps=[lookup("s1", "a", status="running"), answer("s2", "s1")])
    events, sink = _events()
    outcome = run_plan(plan, engine, on_event=sink)
    assert outcome.status == "completed" and plan.step("s1").status == "completed"
    assert ("step_reset", "s1") in [(e.kind, e.step_id) for e in events]


def test_run_control_keeps_decisions_and_tells_its_listeners():
    control = RunControl()
    woken: list[str] = []
    control.add_listener(lambda: woken.append("x"))
    person = threading.Thread(target=control.confirm, args=("s4",))  # from another thread
    person.start()
    person.join()
    control.reject("s5")
    control.cancel()
    assert control.decision("s4") is True and control.decision("s5") is False
    assert control.decision("s6") is None
    assert control.is_cancelled() and control.cancel_event.is_set()
    assert woken == ["x", "x", "x"]
