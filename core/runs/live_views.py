"""Run views kept current for every follower of a run, at the cost of one.

A page that follows a run asks :meth:`RunViews.current` many times a second, from as many
sessions as people watch. Building a :class:`core.runs.view.RunView` reads the run, every
plan version and the whole event log; doing that per viewer per poll made five viewers
five times as slow. Here each followed run keeps its view, its event log and its plan
versions: a call within ``fresh_s`` of the last check returns the view as it is; later,
one small query (:meth:`core.store.run_store.RunStore.run_marker`) says whether the run was
written since; only then are the new events read (never the old ones again), the plan
versions re-read when a version was added or the run's status changed, and the view
rebuilt once for every follower. It works the same whichever process writes the run (this
one, a CLI, a worker), since it follows the store. A held run that nothing wrote for
:data:`QUIET_S` has its process looked at (at most that often): one that ended, killed
before or while it ran, is recorded interrupted (:func:`core.runs.recovery.cut_off`), so
the page shows it so within seconds.

One :class:`RunViews` serves a whole process (:func:`process_views`): it is thread-safe
(a lock for the table of runs, one per run for its refresh), and the views it returns are
shared, so callers only read them. The dashboard's pages use it with their runner's
store; :func:`followed_view` reads it for a caller without a store of its own (the
server's feed of step marks, which runs outside every page's session), and both find the
same view of a run. :func:`step_marks` is what that feed sends.

Each view it builds is numbered in the order it was read (:attr:`RunView.read`), so that a
page and the feed can tell which of two pictures of a run is the newer: the length of the
event log cannot, since a view's record and its events are read one after the other (a
step that ends between the two reads is in the log but not yet in the record), and some
writes change steps without an event. The numbers are microseconds of the clock, kept
rising, so a restarted server's views are newer than the ones a page kept from before.

Who follows a run is told of its changes by :class:`RunChanges`: one reader per followed
run per process (a thread, alive while anyone follows the run) looks at its view every
:data:`READ_S` and, when it changed, wakes every page waiting on it and calls every
listener (the server's feed of step marks) once. So ten viewers cost the store the reads
of one, and a page that waits for a change sleeps instead of asking again and again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import PlanBoardError, RunNotFoundError
from core.lifecycle import HELD_STATUSES
from core.runs.view import RunView, build_run_view
from core.store.database import default_db_url
from core.store.run_store import PlanVersion, RunStore, StoredEvent

__all__ = ["RunChanges", "RunViews", "followed_view", "process_changes", "process_store",
           "process_views", "step_marks"]

FRESH_S = 0.025  # a view checked this recently is current enough for any follower
KEEP_RUNS = 64  # runs followed at once; the least recently asked is dropped first
QUIET_S = 2.0  # a held run unwritten this long has its process looked at
READ_S = 0.04  # how often a followed run's reader looks at it
LINGER_S = 2.0  # a reader nobody follows any more stops after this long
CHECK_S = 0.1  # how often a waiting page looks whether its person acted

_log = logging.getLogger(__name__)


@dataclass
class _Followed:
    """What is known of one followed run."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    view: RunView | None = None
    marker: tuple[int, Any] | None = None
    checked: float = 0.0  # time.monotonic() of the last look at the store
    events: list[StoredEvent] = field(default_factory=list)
    versions: list[PlanVersion] = field(default_factory=list)
    seen_status: str | None = None  # the run's status at the last refresh
    quiet_since: float = 0.0  # time.monotonic() of the last change, or of the last look


class RunViews:
    """The current :class:`RunView` of each followed run, refreshed only when it changed."""

    def __init__(self, *, fresh_s: float = FRESH_S, keep: int = KEEP_RUNS) -> None:
        self.fresh_s = fresh_s
        self.keep = keep
        self._runs: OrderedDict[tuple[str, str], _Followed] = OrderedDict()
        self._lock = threading.Lock()
        self._last_read = 0  # the read number of the latest view built
        self.rebuilds = 0  # how many views were built (for tests and the benchmark)

    def current(self, store: RunStore, run_id: str) -> RunView:
        """The run's view as the store holds it now (RunNotFoundError when there is none)."""
        followed = self._followed(store.url, run_id)
        with followed.lock:
            now = time.monotonic()
            if followed.view is not None and now - followed.checked < self.fresh_s:
                return followed.view
            marker = store.run_marker(run_id)
            if marker is None:
                with self._lock:  # an unknown id keeps no place among the followed runs
                    self._runs.pop((store.url, run_id), None)
                store.get_run(run_id)  # raises the store's RunNotFoundError
            followed.checked = now
            self._keep_recent()
            if followed.view is not None and marker == followed.marker:
                marker = self._look_at_holder(store, run_id, followed, now) or marker
            if followed.view is None or marker != followed.marker:
                self._refresh(store, run_id, followed)
                followed.marker = marker
                followed.quiet_since = now
            assert followed.view is not None
            return followed.view

    @staticmethod
    def _look_at_holder(store: RunStore, run_id: str, followed: _Followed,
                        now: float) -> tuple[int, Any] | None:
        """For a held run quiet for QUIET_S: record it interrupted when its process has
        ended, and return its new marker (None when nothing changed)."""
        assert followed.view is not None
        if followed.view.settled or now - followed.quiet_since < QUIET_S:
            return None
        from core.runs.recovery import cut_off, recover_run

        followed.quiet_since = now
        record = store.get_run(run_id)
        if record.status in HELD_STATUSES and cut_off(record) and recover_run(store, record):
            return store.run_marker(run_id)
        return None

    def _refresh(self, store: RunStore, run_id: str, followed: _Followed) -> None:
        """Read what was written since the last refresh and build the view once."""
        read = self._next_read()  # before the reads: a later number reads a later run
        record = store.get_run(run_id)
        after = followed.events[-1].seq if followed.events else 0
        new = store.events(run_id, after=after)
        followed.events = [*followed.events, *new]
        if (record.versions != len(followed.versions) or record.status != followed.seen_status
                or any(e.kind == "replanned" for e in new)):
            followed.versions = store.plan_versions(run_id)
        elif followed.versions and record.plan is not None:
            # the run's current version is its latest snapshot: the record holds it
            latest = followed.versions[-1]
            if latest.version == record.plan.version:
                followed.versions = [*followed.versions[:-1],
                                     latest.model_copy(update={"plan": record.plan})]
        followed.seen_status = record.status
        followed.view = build_run_view(record, followed.versions, followed.events, read=read)
        self.rebuilds += 1

    def _next_read(self) -> int:
        """A number larger than every view's this far, from the clock in microseconds (so
        also larger than those of a process that ran before)."""
        with self._lock:
            self._last_read = max(self._last_read + 1, time.time_ns() // 1000)
            return self._last_read

    def _keep_recent(self) -> None:
        """Forget the least recently asked runs past :attr:`keep` (once a run is known to
        exist, so that unknown ids push no followed run out)."""
        with self._lock:
            while len(self._runs) > self.keep:
                self._runs.popitem(last=False)

    def _followed(self, url: str, run_id: str) -> _Followed:
        key = (url, run_id)
        with self._lock:
            followed = self._runs.get(key)
            if followed is None:
                followed = self._runs[key] = _Followed()
            else:
                self._runs.move_to_end(key)
            return followed


Listener = Callable[["RunView | None"], None]  # a new view, or None: the run was deleted


@dataclass
class _Reader:
    """The one reader of a followed run: its thread, the latest view it read, and who
    follows it."""

    store: RunStore
    run_id: str
    changed: threading.Condition = field(default_factory=threading.Condition)
    view: RunView | None = None
    gone: bool = False  # the run was deleted while followed
    waiting: int = 0  # pages waiting for a change now
    listeners: dict[int, Listener] = field(default_factory=dict)
    idle_since: float = 0.0  # time.monotonic() since when nobody follows it
    running: bool = False


class RunChanges:
    """Each followed run read once per process, its changes fanned out to every follower:
    pages that wait (:meth:`wait`) and listeners (:meth:`listen`)."""

    def __init__(self, views: RunViews, *, read_s: float = READ_S,
                 linger_s: float = LINGER_S) -> None:
        self.views = views
        self.read_s = read_s
        self.linger_s = linger_s
        self.reads = 0  # looks at a run by every reader (for tests and the benchmark)
        self._readers: dict[tuple[str, str], _Reader] = {}
        self._lock = threading.Lock()
        self._listeners = 0

    def wait(self, store: RunStore, run_id: str, seen: RunView | None, *, timeout_s: float,
             interrupted: Callable[[], bool] = lambda: False) -> RunView | None:
        """The run's view once it is another than ``seen`` (at once if it already is), or
        None when ``timeout_s`` passed, ``interrupted()`` (a person acted) or the run was
        deleted. ``interrupted`` is looked at every :data:`CHECK_S`."""
        reader = self._reader(store, run_id, _enter_waiting)
        deadline = time.monotonic() + timeout_s
        with reader.changed:
            try:
                while True:
                    if reader.gone:
                        return None
                    if reader.view is not None and reader.view is not seen:
                        return reader.view
                    left = deadline - time.monotonic()
                    if left <= 0 or interrupted():
                        return None
                    reader.changed.wait(min(left, CHECK_S))
            finally:
                reader.waiting -= 1
                reader.idle_since = time.monotonic()

    def listen(self, store: RunStore, run_id: str, on_change: Listener) -> Callable[[], None]:
        """Call ``on_change`` (in the reader's thread: it must return at once) with each new
        view of the run, and with None if it is deleted; returns what stops it."""
        with self._lock:
            self._listeners += 1
            number = self._listeners
        reader = self._reader(store, run_id,
                              lambda reader: reader.listeners.__setitem__(number, on_change))

        def stop() -> None:
            with reader.changed:
                reader.listeners.pop(number, None)
                reader.idle_since = time.monotonic()

        return stop

    def _reader(self, store: RunStore, run_id: str,
                enter: Callable[[_Reader], None]) -> _Reader:
        """The run's reader, started if it was not running, with ``enter`` (which counts
        one more follower) done before it can stop."""
        key = (store.url, run_id)
        with self._lock:
            reader = self._readers.get(key)
            if reader is None or not reader.running:
                reader = self._readers[key] = _Reader(store, run_id, running=True,
                                                      idle_since=time.monotonic())
                threading.Thread(target=self._read, args=(key, reader), daemon=True,
                                 name=f"planboard-run-reader-{run_id}").start()
            with reader.changed:
                enter(reader)
            return reader

    def _read(self, key: tuple[str, str], reader: _Reader) -> None:
        """Look at the run every :attr:`read_s` while anyone follows it; at a change, wake
        the waiting pages and call the listeners."""
        warned = False
        while True:
            with self._lock, reader.changed:  # no follower comes in meanwhile (_reader)
                if not (reader.waiting or reader.listeners) \
                        and time.monotonic() - reader.idle_since >= self.linger_s:
                    return self._forget(key, reader)
            try:
                self.reads += 1
                view: RunView | None = self.views.current(reader.store, reader.run_id)
            except RunNotFoundError:
                view = None
            except PlanBoardError as exc:  # the store busy for a moment: look again later
                if not warned:
                    _log.warning("run %s: %s", reader.run_id, exc)
                warned = True
                time.sleep(self.read_s)
                continue
            if view is None or view is not reader.view:
                self._tell(reader, view)
            if view is None:
                with self._lock:
                    return self._forget(key, reader)
            time.sleep(self.read_s)

    @staticmethod
    def _tell(reader: _Reader, view: RunView | None) -> None:
        with reader.changed:
            reader.view = view
            reader.gone = view is None
            listeners = list(reader.listeners.items())
            reader.changed.notify_all()
        for number, listener in listeners:
            try:
                listener(view)
            except RuntimeError:  # its event loop closed: it listens no more
                with reader.changed:
                    reader.listeners.pop(number, None)

    def _forget(self, key: tuple[str, str], reader: _Reader) -> None:
        """The reader stops (called with :attr:`_lock` held)."""
        reader.running = False
        if self._readers.get(key) is reader:
            del self._readers[key]


def _enter_waiting(reader: _Reader) -> None:
    reader.waiting += 1


_process_lock = threading.Lock()
_process_views = RunViews()
_process_changes = RunChanges(_process_views)
_process_store: RunStore | None = None


def process_changes() -> RunChanges:
    """This process's readers of followed runs, over :func:`process_views`: the pages and
    the server's stream of step marks wait on and listen to the same ones."""
    return _process_changes


def process_views() -> RunViews:
    """This process's run views: the dashboard's pages and the server's stream of step
    marks share them, so a change is read once for all of them."""
    return _process_views


def followed_view(run_id: str) -> RunView:
    """The run's current view in the default run store (PLANBOARD_DB_URL or the home's),
    opened on first use, from :func:`process_views` (RunNotFoundError when there is no
    such run)."""
    return _process_views.current(process_store(), run_id)


def process_store() -> RunStore:
    """The default run store of this process's followers, opened on first use."""
    global _process_store
    url = default_db_url()
    with _process_lock:
        if _process_store is None or _process_store.url != url:
            if _process_store is not None:
                _process_store.close()
            _process_store = RunStore(url)
        return _process_store


def step_marks(view: RunView) -> dict[str, Any]:
    """What a page's live step marks show: each step's status; ``seq``, when the view was
    read (:attr:`RunView.read`: of two pictures of one run, the larger wins, so a mark never
    goes back unless a later read says so: a reset, a new version, a re-run); ``settled``,
    nothing changes until a person acts."""
    steps = view.plan.steps if view.plan else []
    return {"seq": view.read, "steps": {step.id: step.status for step in steps},
            "settled": view.settled}
