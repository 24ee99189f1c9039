"""Read ahead: read-only steps start while the planner still writes the plan, and the approved
plan uses their results only for the very same call; nothing with a side effect starts early."""

from __future__ import annotations

import json
import threading
import time

import pytest

from core.execution.executor import execute_step
from core.execution.options import RunOptions
from core.execution.read_ahead import (
    MAX_AGE_S,
    ReadAhead,
    can_read_ahead,
    for_version,
    read_result,
)
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.calls import call_key
from core.plan.model import Plan, Step
from core.runs.drafting import Drafting
from core.tools.registry import ToolRegistry, make_tool
from tests.support.fake_openai import FakeOpenAI, Hold, streamed
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until


class Stock:
    """A warehouse with a read-only count (counted) and a side-effecting order."""

    def __init__(self, *, fail: bool = False, gate: threading.Event | None = None) -> None:
        self.counted: list[str] = []
        self.ordered: list[str] = []
        self.fail = fail
        self.gate = gate  # a count waits for it, when given
        self.lock = threading.Lock()

    def registry(self) -> ToolRegistry:
        def count_stock(sku: str) -> dict:
            """Count the units of a product in the warehouse.

            Args:
                sku: the product's code.
            """
            with self.lock:
                self.counted.append(sku)
            if self.gate is not None:
                self.gate.wait(DEFAULT_TIMEOUT_S)
            if self.fail:
                raise RuntimeError("the warehouse does not answer")
            return {"sku": sku, "units": 7}

        def order_stock(sku: str, units: int) -> dict:
            """Order more units of a product (a side effect).

            Args:
                sku: the product's code.
                units: how many.
            """
            self.ordered.append(sku)
            return {"ordered": units}

        registry = ToolRegistry()
        registry.add(make_tool(count_stock, read_only=True))
        registry.add(make_tool(order_stock))
        return registry


def count(step_id: str = "s1", sku: str = "A-1", **fields) -> Step:
    return Step(id=step_id, description=f"count {sku}", tool="count_stock",
                args={"sku": sku}, **fields)


def order(step_id: str = "s2", **fields) -> Step:
    return Step(id=step_id, description="order more", tool="order_stock",
                args={"sku": "A-1", "units": 3}, **fields)


def test_only_a_read_only_call_known_before_the_plan_is_finished_is_read_ahead():
    registry = Stock().registry()
    assert can_read_ahead(count(), registry)
    assert not can_read_ahead(order(depends_on=[]), registry)  # a side effect: never early
    assert not can_read_ahead(count(depends_on=["s0"]), registry)  # waits for another step
    assert not can_read_ahead(count(sku="{{s0.sku}}"), registry)  # reads another's result
    assert not can_read_ahead(count(condition="{{s0.units}} > 1"), registry)
    assert not can_read_ahead(Step(id="s1", description="count", tool="count_stock"), registry)
    assert not can_read_ahead(Step(id="s1", description="count", tool="nowhere",
                                   args={"sku": "A-1"}), registry)
    assert not can_read_ahead(Step(id="s1", description="think it over"), registry)


def test_each_call_is_made_once_however_often_the_preview_offers_it():
    stock = Stock()
    registry = stock.registry()
    read_ahead = ReadAhead(registry)
    before = time.time()
    try:
        for _ in range(3):
            read_ahead.offer([count(), order(), count("s3", sku="B-2", depends_on=["s1"])])
        wait_until(lambda: len(read_ahead.results()) == 1, what="the count to answer")
    finally:
        read_ahead.close()
    assert stock.counted == ["A-1"] and stock.ordered == []
    [(key, read)] = read_ahead.results().items()
    assert key == call_key(count(), registry) and read["result"] == {"sku": "A-1", "units": 7}
    assert before <= read["read_at"] <= time.time()


def test_the_preview_shows_a_read_running_then_done_with_its_result():
    gate = threading.Event()
    stock = Stock(gate=gate)
    read_ahead = ReadAhead(stock.registry())
    steps = [count("s1"), order("s2")]
    read_ahead.offer(steps)
    wait_until(lambda: stock.counted == ["A-1"], what="the count to start")
    assert [s.status for s in read_ahead.shown(steps)] == ["running", "pending"]
    gate.set()
    wait_until(lambda: read_ahead.shown(steps)[0].status == "completed", what="the count")
    assert read_ahead.shown(steps)[0].result == {"sku": "A-1", "units": 7}
    assert [s.status for s in steps] == ["pending", "pending"]  # the preview's own copies
    read_ahead.close()

    failing = Stock(fail=True)
    failed = ReadAhead(failing.registry())
    failed.offer(steps)
    failed.results(wait_s=DEFAULT_TIMEOUT_S)
    assert [s.status for s in failed.shown(steps)] == ["pending", "pending"]


def test_a_failed_read_serves_nothing():
    failing = Stock(fail=True)
    read_ahead = ReadAhead(failing.registry())
    read_ahead.offer([count()])
    assert read_ahead.results(wait_s=DEFAULT_TIMEOUT_S) == {}  # answered, with an error
    read_ahead.close()
    assert failing.counted == ["A-1"]


def test_a_read_serves_its_version_while_it_is_recent_only():
    key = "the call"
    recent = for_version({key: {"result": 7, "read_at": time.time() - MAX_AGE_S + 60}}, 1)
    stale = for_version({key: {"result": 7, "read_at": time.time() - MAX_AGE_S - 1}}, 1)
    assert read_result(recent, key, 1) == (True, 7)
    assert read_result(recent, key, 2) == (False, None)  # a replan's version reads afresh
    assert read_result(stale, key, 1) == (False, None)
    assert read_result(recent, "another call", 1) == (False, None)
    assert read_result(recent, None, 1) == (False, None)  # a call not determinate yet
    unstamped = {key: {"result": 7, "read_at": time.time()}}
    assert read_result(unstamped, key, 1) == (False, None)


def test_once_a_side_effect_has_started_no_step_is_served_from_a_read():
    stock = Stock()
    registry = stock.registry()
    plan = Plan(goal="order, then count", steps=[order("s1"), count("s2")])
    reads = for_version({call_key(plan.step("s2"), registry): {
        "result": {"sku": "A-1", "units": 0}, "read_at": time.time()}}, plan.version)
    served = execute_step(plan, plan.step("s2"), Engine(registry), read_ahead=reads)
    assert served.read_ahead and served.result["units"] == 0 and stock.counted == []
    plan.step("s1").advance("running")
    plan.step("s1").advance("completed")  # the order went through: the stock changed
    called = execute_step(plan, plan.step("s2"), Engine(registry), read_ahead=reads)
    assert not called.read_ahead and called.result["units"] == 7 and stock.counted == ["A-1"]


def _run(runner, registry: ToolRegistry, plan: Plan, read: dict) -> str:
    run_id = runner.start(plan.goal, plan, engine=Engine(registry),
                          options=RunOptions(confirm_side_effects=False, read_ahead=read),
                          settings_public={"offline": True})
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    return run_id


def test_the_run_takes_the_result_of_the_same_call_and_calls_again_for_an_edited_one(runner):
    stock = Stock()
    registry = stock.registry()
    read_ahead = ReadAhead(registry)
    read_ahead.offer([count("s1", sku="A-1"), count("s2", sku="B-2")])
    wait_until(lambda: len(read_ahead.results()) == 2, what="both counts to answer")
    read_ahead.close()
    assert stock.counted == ["A-1", "B-2"] or stock.counted == ["B-2", "A-1"]

    # a person changed s2's product before approving: its early read does not serve it
    plan = Plan(goal="count two products", steps=[count("s1", sku="A-1"),
                                                  count("s2", sku="C-3")])
    run_id = _run(runner, registry, plan, read_ahead.results())

    assert sorted(stock.counted) == ["A-1", "B-2", "C-3"]  # A-1 once, before approval
    record = runner.store.get_run(run_id)
    assert record.plan.step("s1").result == {"sku": "A-1", "units": 7}
    completed = {e.step_id: e.data for e in runner.store.events(run_id)
                 if e.kind == "step_completed"}
    assert completed["s1"].get("read_ahead") is True
    assert "read_ahead" not in completed["s2"]


def test_a_side_effect_is_never_served_from_a_read_ahead(runner):
    stock = Stock()
    registry = stock.registry()
    plan = Plan(goal="order more", steps=[order("s1")])
    forged = {call_key(plan.step("s1"), registry): {"result": {"ordered": 0},  # no read
                                                    "read_at": time.time()}}  # makes this
    run_id = _run(runner, registry, plan, forged)
    assert stock.ordered == ["A-1"]
    assert runner.store.get_run(run_id).plan.step("s1").result == {"ordered": 3}


REQUEST = "count A-1 and order more"
PLAN = json.dumps({"goal": REQUEST, "steps": [
    {"id": "s1", "description": "count A-1", "tool": "count_stock", "args": {"sku": "A-1"},
     "depends_on": []},
    {"id": "s2", "description": "order more", "tool": "order_stock",
     "args": {"sku": "A-1", "units": 3}, "depends_on": []},
    {"id": "s3", "description": "say how many there are", "tool": None,
     "depends_on": ["s1", "s2"]},
]}, indent=1)


@pytest.mark.parametrize("switched_on", [True, False])
def test_while_the_planner_writes_the_read_only_step_starts_and_the_side_effect_waits(
        monkeypatch, switched_on):
    monkeypatch.setenv("PLANBOARD_WEAK_MODEL_CHECKS", "off")  # one reply, no corrective turn
    stock = Stock()
    registry = stock.registry()
    hold = Hold(after=PLAN[:PLAN.index('"s3"')])  # s1 and s2 written, the rest withheld
    with FakeOpenAI(responder=lambda _body: PLAN) as server:
        server.script(streamed(PLAN, chunk_chars=16, hold=hold))
        with OpenAIChatModel(server.settings()) as model:
            read_ahead = ReadAhead(registry) if switched_on else None
            drafting = Drafting(REQUEST, allow_questions=False, read_ahead=read_ahead)
            drafting.start(Engine(registry=registry, model=model), None)
            try:
                assert hold.reached.wait(DEFAULT_TIMEOUT_S), "the planner never asked"
                wait_until(lambda: len(drafting.progress().steps) == 2,
                           what="the two written steps in the preview")
                if switched_on:
                    wait_until(lambda: stock.counted == ["A-1"],
                               what="the count to start while the plan is written")
                assert not drafting.progress().done
            finally:
                hold.release.set()
            wait_until(lambda: drafting.progress().done, what="the plan to be finished")
    assert drafting.result().plan is not None
    assert stock.counted == (["A-1"] if switched_on else [])
    assert stock.ordered == []  # nobody approved the order
    if read_ahead is not None:
        read_ahead.close()


def test_a_stale_read_is_called_again_and_a_rerun_calls_again(runner):
    from core.runs.rerun import prepare_rerun

    stock = Stock()
    registry = stock.registry()
    plan = Plan(goal="count A-1", steps=[count("s1")])
    key = call_key(plan.step("s1"), registry)
    stale = {key: {"result": {"units": 0}, "read_at": time.time() - MAX_AGE_S - 1}}
    run_id = _run(runner, registry, plan, stale)
    assert stock.counted == ["A-1"]
    assert runner.store.get_run(run_id).plan.step("s1").result == {"sku": "A-1", "units": 7}

    recent = {key: {"result": {"sku": "A-1", "units": 5}, "read_at": time.time()}}
    run_id = _run(runner, registry, plan, recent)
    assert stock.counted == ["A-1"]  # served: not called
    assert runner.store.get_run(run_id).plan.step("s1").result["units"] == 5
    # a person re-runs s1 at once: it is run again, not served from the read ahead
    prepared = prepare_rerun(runner.store.get_run(run_id), "s1", None, registry)
    runner.rerun(prepared, engine=Engine(registry))
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    assert stock.counted == ["A-1", "A-1"]
    assert runner.store.get_run(run_id).plan.step("s1").result["units"] == 7


def test_a_read_keeps_what_secret_looking_names_hold_when_stored(runner):
    """The store drops secret-looking settings; a read is a tool result and is kept whole,
    or it would stand for its call with less than the call gave."""
    stock = Stock()
    registry = stock.registry()
    plan = Plan(goal="reset my password", steps=[count("s1", sku="password-reset-kit")])
    result = {"sku": "password-reset-kit", "tokens": "3 in the drawer", "auth_key": "none"}
    reads = {call_key(plan.step("s1"), registry): {"result": result, "read_at": time.time()}}
    run_id = _run(runner, registry, plan, reads)
    assert stock.counted == []  # served
    assert runner.store.get_run(run_id).plan.step("s1").result == result
