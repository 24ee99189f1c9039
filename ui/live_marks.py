"""Step marks pushed to the page as a run records them, without a rerun.

The run page follows a run with a held tick (:mod:`ui.live_ticker`) that redraws the parts
that changed. Each redraw is a script run in the server and a render in every browser, so
with five viewers on two cores a step's ✓ took most of a second to show. The marks do not
wait for it: the server (``app.py``) streams each followed run's step statuses as
server-sent events (:data:`FEED_PATH`), and each card's head line is an inline component
that listens to that stream (one per page, shared by its cards) and changes its mark in
place; the plan graph paints the same marks on its nodes (:func:`graph_marks`). The rest
of the card follows with the tick. The run's one reader in the process
(:class:`core.runs.live_views.RunChanges`, shared with the pages' ticks) tells each followed
run's streams of a change once (N viewers cost one look every 40 ms); a stream sends only
when a mark changed,
ends when the run settles or the server stops, and is closed while the page is hidden (a
browser holds few connections per site); where it is missing or failing (the dashboard
served without ``app.py``, a server restarting) the tick alone draws the marks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any

import anyio
import streamlit as st
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from core.access.policy import access_for
from core.errors import PlanBoardError, RunNotFoundError
from core.plan.graph import STATUS_COLOURS
from core.plan.model import STATUS_ICONS, Step
from core.runs.live_views import followed_view, process_changes, process_store, step_marks
from core.runs.view import RunView
from ui.i18n import t
from ui.identity import request_actor

__all__ = ["FEED_PATH", "feed_lifespan", "feed_routes", "graph_marks", "step_head"]

FEED_PATH = "/api/runs/{run_id}/steps"
KEEP_ALIVE_S = 15.0  # an idle stream says it is alive this often (proxies drop silent ones)
STREAM_S = 60.0  # a stream ends after this long; the browser opens it again
STOP_CHECK_S = 0.25  # how often an idle stream looks whether the server is stopping
RETRY_MS = 250  # a browser whose stream broke opens it again this soon (its default: 3 s)

_log = logging.getLogger(__name__)
_stopping = threading.Event()  # the server is stopping: every stream ends

_JS = """
const feeds = (window.planboardStepFeeds ??= new Map());
const RETRY_MS = 10000;  // a stream that failed (no route, a server restarting) is tried again

if (!window.planboardStepFeedsWatch) {
  window.planboardStepFeedsWatch = true;
  document.addEventListener("visibilitychange", () => feeds.forEach(
    (feed) => (document.hidden ? feed.close() : feed.open())));
}

function follow(url) {
  let feed = feeds.get(url);
  if (feed) return feed;
  feed = { listeners: new Set(), last: null, source: null, done: false, retryAt: 0 };
  feed.close = () => { feed.source?.close(); feed.source = null; };
  feed.open = () => {
    if (feed.source || feed.done || !feed.listeners.size || document.hidden
        || Date.now() < feed.retryAt) return;
    const source = feed.source = new EventSource(url);
    source.onmessage = (event) => {
      const marks = JSON.parse(event.data);
      if (feed.last && marks.seq < feed.last.seq) return;
      feed.last = marks;
      feed.listeners.forEach((listener) => listener(marks));
      if (marks.settled) { feed.done = true; feed.close(); }
    };
    // The browser reopens a broken stream by itself, unless the server answered with an
    // error or not a stream (served without app.py): then the tick alone draws the marks
    // until a later drawing tries again.
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED || feed.source !== source) return;
      feed.source = null;
      feed.retryAt = Date.now() + RETRY_MS;
    };
  };
  feeds.set(url, feed);
  return feed;
}

function release(feed, listener) {
  feed.listeners.delete(listener);
  setTimeout(() => { if (!feed.listeners.size) feed.close(); }, 1000);
}

function build(parent) {
  // duration and usage, at the head line's right (they change only with a redraw)
  parent.appendChild(document.createElement("div")).className = "planboard-step-meta";
  const head = document.createElement("div");
  head.className = "planboard-step-head";
  head.innerHTML = '<strong><span class="mark"></span> <span class="id"></span></strong>'
    + ' <span class="status"></span><span class="tool"></span><br>'
    + '<span class="description"></span>';
  parent.appendChild(head);
  return head;
}

export default function (component) {
  const { data, parentElement } = component;
  const head = parentElement.querySelector(".planboard-step-head") || build(parentElement);
  head.querySelector(".id").textContent = data.step;
  const tool = head.querySelector(".tool");
  tool.replaceChildren(" · ");
  if (data.tool) tool.appendChild(document.createElement("code")).textContent = data.tool;
  tool.append(data.tool ? data.after_tool : data.no_tool + data.after_tool);
  head.querySelector(".description").textContent = data.description;
  parentElement.querySelector(".planboard-step-meta").textContent = data.meta;
  const mark = head.querySelector(".mark");
  const status = head.querySelector(".status");
  const show = (marks) => {  // the mark and the word at once: they never disagree
    if (Object.hasOwn(marks.steps, data.step)) {
      mark.textContent = data.icons[marks.steps[data.step]] ?? "";
      status.textContent = data.words[marks.steps[data.step]] ?? "";
    }
  };
  const drawn = { seq: data.seq, steps: { [data.step]: data.status } };
  const previous = parentElement.planboardFeed;
  if (previous) release(previous.feed, previous.listener);
  parentElement.planboardFeed = null;
  if (!data.feed) { show(drawn); return; }
  const feed = follow(data.feed);
  // the newer picture of the run, never the drawing's over newer pushed marks (a redraw
  // from a read made before a step ended comes after the step's pushed ✓)
  show(feed.last && feed.last.seq > drawn.seq ? feed.last : drawn);
  if (feed.done && feed.last && drawn.seq > feed.last.seq) feed.done = false;  // resumed
  const listener = (marks) => { if (marks.seq >= drawn.seq) show(marks); };
  feed.listeners.add(listener);
  parentElement.planboardFeed = { feed, listener };
  feed.open();
  return () => {
    if (parentElement.planboardFeed?.listener === listener) parentElement.planboardFeed = null;
    release(feed, listener);
  };
}
"""

_CSS = """
.planboard-step-head { line-height: 1.6; }
.planboard-step-meta {
  float: right; margin-left: 1rem; font-size: 0.875rem; line-height: 1.6; opacity: 0.6;
}
.planboard-step-head .status { opacity: 0.7; }
.planboard-step-head code {
  font-family: "Source Code Pro", monospace; font-size: 0.8em; padding: 0.1em 0.3em;
  border-radius: 0.25rem; background: rgba(151, 166, 195, 0.15);
}
"""

_head = st.components.v2.component("planboard_step_head", js=_JS, css=_CSS,
                                   isolate_styles=False)


def step_head(step: Step, view: RunView, *, side_effect: bool, server: str | None,
              meta: str) -> None:
    """The card's head line: status mark, id and status word, tool (its MCP server, ⚠ for
    a side effect), description, and ``meta`` (duration, usage) at its right; mark and
    word follow the run's stream while the run is held (the word was the tick's, and
    lagged the mark by up to 2.4 s). One element, not a row of columns: every script run
    renders each element of the page again in every viewer's browser."""
    after_tool = (" · " + t("card_server", server=server) if server is not None else "")
    _head(key=f"step_head_{step.id}", data={
        "step": step.id, "status": step.status, "icons": STATUS_ICONS,
        "words": _status_words(),
        "tool": step.tool, "no_tool": t("no_tool"),
        "after_tool": after_tool + (" ⚠" if side_effect else ""),
        "description": step.description, "meta": meta, **_stream_of(view),
    })


def _status_words() -> dict[str, str]:
    """Each step status as a word in the session's language ("Completed"): its label
    without the mark the head line shows before the id."""
    return {status: t(f"status_{status}").removeprefix(icon).strip()
            for status, icon in STATUS_ICONS.items()}


def _feed_path() -> str:
    """:data:`FEED_PATH` under the server's ``server.baseUrlPath``, where the dashboard is
    (behind a proxy that forwards only ``/planboard/``, the marks are at
    ``/planboard/api/…``)."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{FEED_PATH}" if base else FEED_PATH


def _stream_of(view: RunView) -> dict[str, Any]:
    """When the drawn view was read (``seq``, as the stream counts it: the newer of a
    drawing and a pushed mark wins) and the stream to follow (``feed``, None once the run
    has settled)."""
    marks = step_marks(view)
    feed = None if marks["settled"] else _feed_path().format(run_id=view.record.run_id)
    return {"seq": marks["seq"], "feed": feed}


def graph_marks(view: RunView) -> dict[str, Any] | None:
    """What the plan graph (ui.graph_view) needs to paint the run's pushed marks on its
    nodes (the stream, when the drawn view was read, each status's mark and fill), or
    None once the run has settled."""
    stream = _stream_of(view)
    return {**stream, "icons": STATUS_ICONS, "fills": STATUS_COLOURS} if stream["feed"] else None


def feed_routes() -> list[Route]:
    """The server's routes for the marks (mounted by app.py, under the base path)."""
    return [Route(_feed_path(), _feed)]


@contextlib.asynccontextmanager
async def feed_lifespan(_app: object) -> AsyncIterator[None]:
    """While the server runs: a stop signal (Ctrl+C, SIGTERM) ends every open stream at
    once, since the server waits for open responses before it stops (and a stream of a
    run waiting for a person would otherwise hold it up to :data:`STREAM_S`)."""
    for number in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(number)
        if callable(previous):
            signal.signal(number, partial(_stop_streams, previous))
    yield


def _stop_streams(previous: Callable[..., object], number: int, frame: object) -> None:
    _stopping.set()
    previous(number, frame)


async def _feed(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    person = request_actor(request)
    if person is None:  # sign-in is configured and this request holds no session
        return PlainTextResponse("sign in first", status_code=401)
    try:
        view = await anyio.to_thread.run_sync(followed_view, run_id)
        allowed = await anyio.to_thread.run_sync(
            lambda: access_for(person, process_store()).allows("read", view.record))
    except RunNotFoundError:
        return PlainTextResponse(f"no run {run_id}", status_code=404)
    except PlanBoardError as exc:  # the store cannot be read now: the page asks again later
        _log.warning("step marks of run %s: %s", run_id, exc)  # the details stay here
        return PlainTextResponse("the run store cannot be read now", status_code=503)
    if not allowed:  # a run this person may not see is, to them, no run
        return PlainTextResponse(f"no run {run_id}", status_code=404)
    return StreamingResponse(_marks(run_id, view), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


class _Watched:
    """One followed run in the server: its reader tells it of each change once
    (:meth:`heard`, in the reader's thread), for every open stream of it."""

    def __init__(self, marks: dict[str, Any], loop: asyncio.AbstractEventLoop) -> None:
        self.marks = marks
        self.gone = False  # the run was deleted while followed
        self.streams = 0
        self.changed = asyncio.Event()  # set, and replaced, at every change
        self.loop = loop
        self.stop_listening: Callable[[], None] = lambda: None

    def heard(self, view: RunView | None) -> None:
        """A new view of the run (None: deleted): published in the server's event loop
        when a mark changed."""
        marks = None if view is None else step_marks(view)
        if marks is None or (marks["steps"], marks["settled"]) != (self.marks["steps"],
                                                                   self.marks["settled"]):
            self.loop.call_soon_threadsafe(self.publish, marks)

    def publish(self, marks: dict[str, Any] | None) -> None:
        if marks is not None:
            self.marks = marks
        else:
            self.gone = True
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


_watched: dict[str, _Watched] = {}  # by run id; touched only in the server's event loop


def _watch(run_id: str, view: RunView) -> _Watched:
    """The run's shared watch (started by its first stream), counted for one more stream."""
    watched = _watched.get(run_id)
    loop = asyncio.get_running_loop()
    if watched is None or watched.loop is not loop:
        watched = _watched[run_id] = _Watched(step_marks(view), loop)
        watched.stop_listening = process_changes().listen(process_store(), run_id,
                                                          watched.heard)
    elif (marks := step_marks(view))["seq"] > watched.marks["seq"]:
        watched.publish(marks)
    watched.streams += 1
    return watched


def _unwatch(run_id: str, watched: _Watched) -> None:
    """One stream fewer; the last one stops listening to the run."""
    watched.streams -= 1
    if watched.streams == 0:
        watched.stop_listening()
        if _watched.get(run_id) is watched:
            del _watched[run_id]


async def _marks(run_id: str, view: RunView) -> AsyncIterator[str]:
    """The run's marks whenever they change, until the run settles, the server stops or
    :data:`STREAM_S` passed."""
    watched = _watch(run_id, view)
    sent = None
    started = spoke = time.monotonic()
    try:
        yield f"retry: {RETRY_MS}\n\n"
        while not watched.gone:
            marks = watched.marks
            if marks is not sent:
                yield f"data: {json.dumps(marks)}\n\n"
                sent, spoke = marks, time.monotonic()
            elif time.monotonic() - spoke > KEEP_ALIVE_S:
                yield ": alive\n\n"
                spoke = time.monotonic()
            if marks["settled"] or time.monotonic() - started > STREAM_S or _stopping.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(watched.changed.wait(), STOP_CHECK_S)
    finally:
        _unwatch(run_id, watched)
