"""Run views kept current once for every follower (core.runs.live_views) and the held tick
that asks for them (ui.live_ticker.hold)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from bench.live import LiveSample, latencies
from core.errors import RunNotFoundError
from core.execution.events import RunEvent
from core.plan.model import Plan, Step
from core.runs.live_views import RunViews
from core.runs.view import load_run_view
from ui.live_ticker import hold


def _plan(version: int = 1) -> Plan:
    return Plan(goal="add up", version=version, steps=[
        Step(id="s1", description="add", tool="calculate", args={"expression": "1+1"}),
        Step(id="s2", description="answer", depends_on=["s1"]),
    ])


def test_many_followers_cost_one_refresh_until_the_run_is_written(store):
    plan = _plan()
    run_id = store.create_run("add up", {}, plan, status="running")
    views = RunViews(fresh_s=0.0)  # every call looks at the store's marker
    first = views.current(store, run_id)
    for _ in range(20):  # five followers, four looks each, nothing written
        assert views.current(store, run_id) is first
    assert views.rebuilds == 1

    plan.steps[0].advance("running")
    store.record_step(run_id, RunEvent(kind="step_started", step_id="s1"), plan)
    seen = views.current(store, run_id)
    assert views.rebuilds == 2 and seen is not first
    assert seen.plan.step("s1").status == "running"
    assert [e.kind for e in seen.events] == ["step_started"]


def test_a_kept_view_equals_a_view_read_afresh_after_a_replan_and_the_end(store):
    plan = _plan()
    run_id = store.create_run("add up", {}, plan, status="running")
    views = RunViews(fresh_s=0.0)
    views.current(store, run_id)
    plan.steps[0].advance("running")
    store.record_step(run_id, RunEvent(kind="step_started", step_id="s1"), plan)
    views.current(store, run_id)
    new = _plan(version=2)
    new.steps[0].advance("running")
    new.steps[0].advance("failed")
    store.record_step(run_id, RunEvent(kind="replanned", plan_version=2, plan=new,
                                       data={"reason": "s1 broke", "source": "failure"}),
                      new, reason="s1 broke", previous=plan)
    views.current(store, run_id)
    store.set_status(run_id, "failed", event=RunEvent(kind="run_finished",
                                                      data={"status": "failed"}))
    kept = views.current(store, run_id)
    fresh = load_run_view(store, run_id)
    assert kept.model_dump() == fresh.model_dump()
    assert [v.version for v in kept.versions] == [1, 2]
    assert kept.versions[1].reason == "s1 broke" and kept.finished


def test_a_view_checked_within_fresh_s_is_not_looked_up_again(store):
    run_id = store.create_run("add up", {}, _plan(), status="running")
    views = RunViews(fresh_s=60.0)
    first = views.current(store, run_id)
    store.append_event(run_id, RunEvent(kind="step_started", step_id="s1"))
    assert views.current(store, run_id) is first  # still fresh: the store is not asked


def test_an_unknown_run_is_the_stores_error(store):
    with pytest.raises(RunNotFoundError):
        RunViews().current(store, "nope")


def test_followers_in_threads_share_one_refresh_per_change(store):
    run_id = store.create_run("add up", {}, _plan(), status="running")
    views = RunViews(fresh_s=0.0)
    views.current(store, run_id)
    store.append_event(run_id, RunEvent(kind="step_started", step_id="s1"))
    seen: list[int] = []
    threads = [threading.Thread(target=lambda: seen.append(len(views.current(store, run_id)
                                                                .events)))
               for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [1] * 5 and views.rebuilds == 2


def test_a_hold_ends_at_a_change_at_a_persons_action_or_at_its_timeout():
    changes = iter([False, False, True])
    assert hold(lambda: next(changes), timeout_s=5, step_s=0.001,
                interrupted=lambda: False) is True
    started = time.monotonic()
    assert hold(lambda: False, timeout_s=5, step_s=0.001, interrupted=lambda: True) is False
    assert time.monotonic() - started < 1  # an action waiting ends the hold at once
    started = time.monotonic()
    assert hold(lambda: False, timeout_s=0.05, step_s=0.001,
                interrupted=lambda: False) is False
    assert time.monotonic() - started >= 0.05


def test_measured_latencies_compare_the_store_with_the_screen():
    """bench.live's arithmetic on made-up times: a card's first mark after the event
    counts, a change it never showed is missed."""
    at = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    events = [RunEvent(kind="step_started", step_id="s1", at=at),
              RunEvent(kind="step_completed", step_id="s1", at=at),
              RunEvent(kind="step_completed", step_id="s2", at=at)]
    base = at.timestamp() * 1000
    log = [{"id": "s1", "mark": "▶", "at": base + 50}, {"id": "s1", "mark": "✓", "at": base + 200},
           {"id": "s1", "mark": "✓", "at": base + 900}]
    sample = LiveSample(viewers=1, pace=1.0)
    latencies(events, [log], sample)
    assert sample.completed == [pytest.approx(0.2)] and sample.started == [pytest.approx(0.05)]
    assert sample.missed == ["viewer 1: s2 ✓"]
    assert sample.p50 == pytest.approx(0.125) and sample.worst == pytest.approx(0.2)


def test_an_unknown_run_takes_no_place_among_the_followed_ones(store):
    run_id = store.create_run("add up", {}, _plan(), status="running")
    views = RunViews(fresh_s=0.0, keep=1)
    first = views.current(store, run_id)
    for unknown in ("nope-1", "nope-2"):
        with pytest.raises(RunNotFoundError):
            views.current(store, unknown)
    assert views.current(store, run_id) is first and views.rebuilds == 1


def test_the_pages_and_the_stream_of_marks_share_one_view_of_a_run(store):
    from core.runs.live_views import followed_view, process_views

    run_id = store.create_run("add up", {}, _plan(), status="running")
    assert process_views().current(store, run_id) is followed_view(run_id)
