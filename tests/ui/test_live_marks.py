"""The stream of step marks the run page listens to (ui.live_marks): what it sends, when,
and when it ends. Served over HTTP, it is tested in tests/browser/test_browser_live.py."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import urllib.request
from collections.abc import AsyncIterator

from starlette.requests import Request
from streamlit import config as st_config

from core.execution.events import RunEvent
from core.plan.model import Plan, Step
from core.runs.live_views import followed_view, process_views, step_marks
from core.store.run_store import RunStore
from tests.support.app import open_app
from tests.support.browser import serve_app
from tests.support.shown import step_heads as shown_heads
from tests.support.waiting import DEFAULT_TIMEOUT_S
from ui import live_marks
from ui.live_ticker import page_switch_pending, request_pending


def _plan() -> Plan:
    return Plan(goal="add up", steps=[
        Step(id="s1", description="add", tool="calculate", args={"expression": "1+1"}),
        Step(id="s2", description="answer", depends_on=["s1"]),
    ])


def _next(stream: AsyncIterator[str], loop: asyncio.AbstractEventLoop) -> str | None:
    """The stream's next message (None once it ended), waiting at most DEFAULT_TIMEOUT_S
    (a bound for a loaded machine, not a speed check)."""
    try:
        return loop.run_until_complete(asyncio.wait_for(anext(stream), DEFAULT_TIMEOUT_S))
    except StopAsyncIteration:
        return None


def _data(message: str | None) -> dict:
    assert message is not None and message.startswith("data: "), message
    return json.loads(message.removeprefix("data: "))


def test_the_stream_sends_a_mark_when_it_changes_and_ends_when_the_run_settles(store):
    plan = _plan()
    run_id = store.create_run("add up", {}, plan, status="running")
    loop = asyncio.new_event_loop()
    stream = live_marks._marks(run_id, followed_view(run_id))
    try:
        assert _next(stream, loop) == f"retry: {live_marks.RETRY_MS}\n\n"
        first = _data(_next(stream, loop))
        assert first["steps"] == {"s1": "pending", "s2": "pending"} and not first["settled"]

        store.append_event(run_id, RunEvent(kind="reflected", data={"root_cause": "none"}))
        plan.steps[0].advance("running")
        store.record_step(run_id, RunEvent(kind="step_started", step_id="s1"), plan)
        running = _data(_next(stream, loop))  # the reflection alone sent nothing
        assert running["steps"]["s1"] == "running" and running["seq"] > first["seq"]

        plan.steps[0].advance("completed")
        store.record_step(run_id, RunEvent(kind="step_completed", step_id="s1"), plan)
        store.set_status(run_id, "completed", event=RunEvent(kind="run_finished",
                                                             data={"status": "completed"}))
        # the run's reader may look between the step's end and the run's: then s1's ✓
        # comes first, and the end in a message of its own
        ends = []
        while (message := _next(stream, loop)) is not None:
            ends.append(_data(message))
        assert [m["steps"]["s1"] for m in ends] == ["completed"] * len(ends)
        assert 1 <= len(ends) <= 2 and ends[-1]["settled"]
    finally:
        loop.run_until_complete(stream.aclose())
        loop.close()


def test_the_marks_are_each_steps_status_and_when_the_view_was_read(store, monkeypatch):
    # the step may be recorded within the process views' freshness window: look each time
    monkeypatch.setattr(process_views(), "fresh_s", 0.0)
    plan = _plan()
    run_id = store.create_run("add up", {}, plan, status="running")
    view = followed_view(run_id)
    plan.steps[0].advance("running")
    store.record_step(run_id, RunEvent(kind="step_started", step_id="s1"), plan)
    later = followed_view(run_id)
    assert step_marks(later) == {
        "seq": later.read, "steps": {"s1": "running", "s2": "pending"}, "settled": False}
    assert later.read > view.read > 0


def test_a_settled_run_is_sent_once_and_the_stream_ends(store):
    run_id = store.create_run("add up", {}, _plan(), status="completed")
    loop = asyncio.new_event_loop()
    stream = live_marks._marks(run_id, followed_view(run_id))
    try:
        messages = [_next(stream, loop) for _ in range(3)]
    finally:
        loop.close()
    assert messages[0].startswith("retry:") and _data(messages[1])["settled"]
    assert messages[2] is None


def _head_data(at) -> dict[str, dict]:
    return {data["step"]: data for data in (json.loads(element.proto.json)
                                            for element in at.get("bidi_component"))
            if "icons" in data}


def test_a_followed_runs_cards_listen_to_its_stream_and_a_settled_ones_do_not(runner):
    plan = _plan()
    plan.steps[0].advance("running")
    running = runner.store.create_run("add up", {}, plan, status="running")
    at = open_app("pages/run.py", query={"run": running})
    heads = _head_data(at)
    assert heads["s1"]["feed"] == f"/api/runs/{running}/steps"
    # the drawing is ordered with the stream's marks: when its view was read
    assert heads["s1"]["seq"] == step_marks(followed_view(running))["seq"] > 0
    assert (heads["s1"]["status"], heads["s2"]["status"]) == ("running", "pending")
    assert shown_heads(at)["s1"] == "▶ s1 Running · calculate\nadd"

    done = runner.store.create_run("add up", {}, _plan(), status="completed")
    at = open_app("pages/run.py", query={"run": done})
    assert _head_data(at)["s1"]["feed"] is None
    assert shown_heads(at)["s2"] == "○ s2 Pending · — none (reasoning) —\nanswer"


def test_stopping_the_server_ends_an_open_stream_at_once(tmp_path, monkeypatch):
    """A stream of a run that goes on (here: one no process moves) does not hold the server
    up when it is told to stop: it exits on SIGTERM, not killed after the wait."""
    home = tmp_path / "home"
    monkeypatch.setenv("PLANBOARD_HOME", str(home))
    store = RunStore()
    run_id = store.create_run("add up", {}, _plan(), status="running")
    store.close()
    exits: list[int] = []
    with serve_app(home, tmp_path / "streamlit.log", exits=exits) as url:
        reply = urllib.request.urlopen(f"{url}/api/runs/{run_id}/steps", timeout=30)
        lines = iter(reply)
        assert next(lines).startswith(b"retry:")
        next(lines)
        assert json.loads(next(lines).removeprefix(b"data: "))["steps"]["s1"] == "pending"
    assert exits == [-signal.SIGTERM], (tmp_path / "streamlit.log").read_text("utf-8")[-2000:]
    with reply:
        assert reply.read().strip() == b""  # the stream ended with the server


def test_behind_a_base_path_the_marks_are_served_and_followed_under_it(runner, tmp_path,
                                                                     isolated_environment):
    """Served with ``server.baseUrlPath`` (behind a proxy that forwards only its path), the
    stream is under that path, and the page follows it there."""
    run_id = runner.store.create_run("add up", {}, _plan(), status="running")
    with serve_app(isolated_environment, tmp_path / "streamlit.log",
                   base_path="planboard") as url:
        assert url.endswith("/planboard")
        with urllib.request.urlopen(f"{url}/api/runs/{run_id}/steps", timeout=30) as reply:
            assert reply.headers["Content-Type"].startswith("text/event-stream")
            assert next(iter(reply)).startswith(b"retry:")
    previous = st_config.get_option("server.baseUrlPath")
    st_config.set_option("server.baseUrlPath", "/planboard/")
    try:
        at = open_app("pages/run.py", query={"run": run_id})
        routes = [route.path for route in live_marks.feed_routes()]
    finally:
        st_config.set_option("server.baseUrlPath", previous)
    assert _head_data(at)["s1"]["feed"] == f"/planboard/api/runs/{run_id}/steps"
    assert routes == ["/planboard/api/runs/{run_id}/steps"]


def _answer(run_id: str):
    request = Request({"type": "http", "method": "GET", "path": f"/api/runs/{run_id}/steps",
                       "path_params": {"run_id": run_id}, "headers": []})
    return asyncio.run(live_marks._feed(request))


def test_an_unknown_run_is_not_found_and_an_unreadable_store_is_unavailable(store,
                                                                          monkeypatch):
    assert _answer("nope").status_code == 404
    monkeypatch.setenv("PLANBOARD_DB_URL", "postgresql://nobody@127.0.0.1:1/planboard")
    unavailable = _answer("nope")  # the page's stream tries again later; the tick draws
    assert unavailable.status_code == 503 and b"127.0.0.1" not in unavailable.body


def test_streams_of_one_run_share_one_look_at_the_store(store):
    plan = _plan()
    run_id = store.create_run("add up", {}, plan, status="running")
    loop = asyncio.new_event_loop()
    streams = [live_marks._marks(run_id, followed_view(run_id)) for _ in range(3)]
    try:
        for stream in streams:
            assert _next(stream, loop).startswith("retry:")
            assert not _data(_next(stream, loop))["settled"]
        watched = live_marks._watched[run_id]
        readers = [thread for thread in threading.enumerate()
                   if thread.name == f"planboard-run-reader-{run_id}"]
        assert watched.streams == 3 and len(readers) == 1  # one reader for three

        plan.steps[0].advance("running")
        store.record_step(run_id, RunEvent(kind="step_started", step_id="s1"), plan)
        assert {_data(_next(stream, loop))["steps"]["s1"] for stream in streams} == {"running"}
        for stream in streams:
            loop.run_until_complete(stream.aclose())
        assert watched.streams == 0 and run_id not in live_marks._watched
    finally:
        loop.close()


def _graph_live(at) -> list:
    return [json.loads(element.proto.json_args).get("live")
            for element in at.get("component_instance")
            if element.proto.component_name.endswith(".plan_graph")]


def test_the_presentation_graph_paints_the_stream_of_a_followed_run_only(runner):
    running = runner.store.create_run("add up", {}, _plan(), status="running")
    [live] = _graph_live(open_app("pages/run.py", query={"run": running, "present": "1"}))
    assert live["feed"] == f"/api/runs/{running}/steps"
    assert live["seq"] == step_marks(followed_view(running))["seq"]
    assert live["icons"]["completed"] == "✓" and set(live["fills"]) >= set(live["icons"])
    done = runner.store.create_run("add up", {}, _plan(), status="completed")
    assert _graph_live(open_app("pages/run.py", query={"run": done, "present": "1"})) == [None]


def test_a_tick_does_not_redraw_over_a_page_switch_the_person_asked_for(monkeypatch):
    """Streamlit folds a rerun asked for while another waits into one request with the
    newer one's page: the tick's redraw of the run page, after a click on the sidebar's Plan
    link, would keep the person on the run page. page_switch_pending tells the tick so, from
    Streamlit's own queue of requests (the real one here)."""
    from streamlit.runtime import scriptrunner
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests

    requests = ScriptRequests()
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx", lambda **_: type(
        "Ctx", (), {"script_requests": requests, "page_script_hash": "run"})())
    assert not page_switch_pending()
    requests.request_rerun(RerunData(page_script_hash="run"))  # a click on this page
    assert request_pending() and not page_switch_pending()
    requests.request_rerun(RerunData(page_script_hash="plan"))  # the sidebar's Plan link
    assert page_switch_pending()
    requests.request_rerun(RerunData(page_script_hash="run"))  # what the tick would ask
    assert requests.on_scriptrunner_yield().rerun_data.page_script_hash == "run"  # lost


def test_a_held_tick_gives_way_when_streamlit_holds_a_request_of_the_person(monkeypatch):
    """The run page's tick sleeps in its callback (ui.live_ticker) and looks whether the
    person acted (a key, a click) with request_pending, which reads Streamlit's own queue of
    script requests: here the real one, a rerun asked while the tick holds."""
    from streamlit.runtime import scriptrunner
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests

    requests = ScriptRequests()
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx",
                        lambda **_: type("Ctx", (), {"script_requests": requests})())
    assert not request_pending()
    requests.request_rerun(RerunData())
    assert request_pending()

