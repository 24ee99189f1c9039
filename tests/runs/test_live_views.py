"""Run views kept current once for every follower, and each followed run's one reader that
wakes them at its changes (core.runs.live_views)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from bench.live import LiveSample, latencies
from core.errors import RunNotFoundError
from core.execution.events import RunEvent
from core.plan.model import Plan, Step
from core.runs.live_views import RunChanges, RunViews, step_marks
from core.runs.view import load_run_view


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


def _followed_then_started(store) -> tuple[Plan, str, RunViews]:
    """A running run, its view read once (every later call looks at the store), then its
    s1 started."""
    plan = _plan()
    run_id = store.create_run("add up", {}, plan, status="running")
    views = RunViews(fresh_s=0.0)
    views.current(store, run_id)
    plan.steps[0].advance("running")
    store.record_step(run_id, RunEvent(kind="step_started", step_id="s1"), plan)
    return plan, run_id, views


def test_a_view_read_as_a_step_ends_is_older_than_the_next_one_whatever_its_log_holds(
        store, monkeypatch):
    """A card drawn ✓ then ○ again (CI, pace 0): a view's record was read before s1 ended
    and its event log after, so it counted as many events as the next view, which shows s1
    ended; a page drawing it after the stream pushed the next one's marks took it for as
    new. Of two views of a run, the one read later is the newer, whatever the log says."""
    plan, run_id, views = _followed_then_started(store)
    read_events = store.events

    def events_once_s1_ended(run_id: str, *, after: int = 0) -> list:
        monkeypatch.setattr(store, "events", read_events)
        plan.steps[0].advance("completed")
        store.record_step(run_id, RunEvent(kind="step_completed", step_id="s1"), plan)
        return read_events(run_id, after=after)

    monkeypatch.setattr(store, "events", events_once_s1_ended)
    before = views.current(store, run_id)  # its record: s1 running; its log: s1 ended
    after = views.current(store, run_id)
    assert [e.kind for e in before.events] == [e.kind for e in after.events] == [
        "step_started", "step_completed"]
    assert (before.plan.step("s1").status, after.plan.step("s1").status) == (
        "running", "completed")
    assert step_marks(after)["seq"] > step_marks(before)["seq"]


def test_a_kept_view_equals_a_view_read_afresh_after_a_replan_and_the_end(store):
    plan, run_id, views = _followed_then_started(store)
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


def _readers_of(run_id: str) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate()
            if thread.name == f"planboard-run-reader-{run_id}"]


def test_ten_waiting_viewers_and_a_listener_cost_one_reader_and_one_refresh_per_change(store):
    """The run page's ticks and the stream of marks: however many follow a run, one thread
    reads it and each change is read from the store once, then handed to every follower."""
    plan = _plan()
    run_id = store.create_run("add up", {}, plan, status="running")
    views = RunViews(fresh_s=0.0)
    changes = RunChanges(views, read_s=0.005)
    first = views.current(store, run_id)
    heard: list[object] = []
    stop = changes.listen(store, run_id, heard.append)
    woken: list[object] = []
    waiters = [threading.Thread(target=lambda: woken.append(
        changes.wait(store, run_id, first, timeout_s=30))) for _ in range(10)]
    for waiter in waiters:
        waiter.start()
    assert len(_readers_of(run_id)) == 1
    plan.steps[0].advance("running")
    store.record_step(run_id, RunEvent(kind="step_started", step_id="s1"), plan)
    for waiter in waiters:
        waiter.join(30)
    new = views.current(store, run_id)
    assert new is not first and woken == [new] * 10
    assert views.rebuilds == 2  # the first view and the change: not one per follower
    assert heard[-1] is new and heard.count(new) == 1
    assert len(_readers_of(run_id)) == 1
    stop()


def test_a_wait_ends_at_a_change_at_a_persons_action_at_its_timeout_or_with_the_run(
        store):
    run_id = store.create_run("add up", {}, _plan(), status="running")
    views = RunViews(fresh_s=0.0)
    changes = RunChanges(views, read_s=0.005, linger_s=0.0)
    first = views.current(store, run_id)
    assert changes.wait(store, run_id, None, timeout_s=30) is first  # newer than nothing
    asked: list[bool] = []

    def acted() -> bool:
        asked.append(True)
        return True

    assert changes.wait(store, run_id, first, timeout_s=30, interrupted=acted) is None
    assert asked == [True]  # a person's action ends the wait at its first look, not later
    assert changes.wait(store, run_id, first, timeout_s=0.05) is None
    assert changes.wait(store, "nope", None, timeout_s=30) is None  # no such run: no wait


def test_a_reader_nobody_follows_stops(store):
    run_id = store.create_run("add up", {}, _plan(), status="running")
    changes = RunChanges(RunViews(fresh_s=0.0), read_s=0.005, linger_s=0.0)
    changes.listen(store, run_id, lambda view: None)()  # listened, then stopped at once
    [reader] = _readers_of(run_id)
    reader.join(30)
    assert not reader.is_alive()


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
