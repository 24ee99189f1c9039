"""Fault trials on real processes (tests/faults/): ``python -m core`` killed, racing, cut off
from its database or robbed of its files, then asked again.

Each trial runs the demo's refund request offline with ``--pace`` in a home of its own, and
looks at what the processes left behind through read-only connections (the run store, the
engine's ``dbos.sqlite``, the shop's refunds), never through PlanBoard's code: what a
person would see afterwards. ``FAULT_TRIALS`` (default 1) is how many trials each finding
runs; ``FAULT_TRIALS=10 python -m pytest -m faults tests/faults`` runs the full count.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from tests.support.core_processes import CoreProcess, CoreProcesses
from tests.support.waiting import DEFAULT_TIMEOUT_S

__all__ = ["REFUND_REQUEST", "TRIALS", "TRIAL_TIMEOUT_S", "WAIT_S", "Trial", "tracebacks"]

TRIALS = int(os.environ.get("FAULT_TRIALS", "1"))
# A trial starts several Python processes one after another: on a loaded 2-core machine
# each takes seconds to start. The waits are long since they are reached only when
# something is wrong; a trial's own limit (pytest-timeout) is longer still.
WAIT_S = 3 * DEFAULT_TIMEOUT_S
TRIAL_TIMEOUT_S = 10 * DEFAULT_TIMEOUT_S
REFUND_REQUEST = "Check whether order 88231 has arrived, and if it has, refund the broken one."
TRACEBACK = "Traceback (most recent call last)"


def tracebacks(text: str) -> int:
    """How many tracebacks ``text`` holds."""
    return text.count(TRACEBACK)


@dataclass
class Ended:
    """How a one-shot command ended: its exit code, what it printed, and its JSON."""

    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return json.loads(self.out)


class Trial:
    """One trial's home, its ``python -m core`` children, and read-only looks at its files.

    ``db_url``: the run store's PostgreSQL (``PLANBOARD_DB_URL``); else the home's SQLite.
    """

    def __init__(self, folder: Path, *, db_url: str | None = None) -> None:
        self.home = folder / "home"
        env = {**os.environ, "PLANBOARD_HOME": str(self.home)}
        env.pop("PLANBOARD_DB_URL", None)
        if db_url:
            env["PLANBOARD_DB_URL"] = db_url
        self.db_url = db_url
        self.processes = CoreProcesses(folder / "processes", env)

    # ---- commands -------------------------------------------------------------------------

    def start(self, label: str, *args: str) -> CoreProcess:
        return self.processes.start(label, *args)

    def start_refund(self, pace: float = 0.3, *more: str) -> CoreProcess:
        """``run`` of the refund request, approved beforehand, printing JSON."""
        return self.start("run", "run", REFUND_REQUEST, "--offline", "--yes", "--pace",
                          f"{pace:g}", "--json", *more)

    def finish(self, child: CoreProcess, timeout: float = WAIT_S) -> Ended:
        """Wait for ``child`` to end; AssertionError with every output when it does not."""
        try:
            code = child.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            raise AssertionError(f"{child.label} did not end in {timeout:.0f} s\n"
                                 + self.report()) from None
        return Ended(code, child.output(), child.stderr.read_text(errors="replace"))

    def command(self, label: str, *args: str, timeout: float = WAIT_S) -> Ended:
        """Run ``python -m core ARGS`` to its end."""
        return self.finish(self.start(label, *args), timeout)

    def report(self) -> str:
        return self.processes.report()

    def kill_all(self) -> None:
        self.processes.kill_all()

    # ---- what the processes left ----------------------------------------------------------

    def runs(self) -> dict[str, str]:
        """Run id -> status, as the run store holds them."""
        rows = self._store_query("SELECT id, status FROM runs")
        return dict(rows)

    def events(self, run_id: str) -> list[tuple[str, str | None]]:
        """The run's events, (kind, step id) in order."""
        mark = "%s" if self.db_url else "?"
        return self._store_query(
            f"SELECT kind, step_id FROM events WHERE run_id = {mark} ORDER BY seq", (run_id,))

    def reached(self, moment: str) -> bool:
        """True once the store shows ``moment`` of the trial's one run: "recorded", or a
        step's event such as "s1 started" or "s2 completed"."""
        runs = self.runs()
        if not runs or moment == "recorded":
            return bool(runs)
        step, kind = moment.split()
        return (f"step_{kind}", step) in self.events(next(iter(runs)))

    def refunds(self) -> int:
        """How many refunds the demo shop holds for order 88231 (the request's)."""
        path = self.home / "shop.db"
        if not path.exists():
            return 0
        with _read_only(path) as conn:
            return conn.execute(
                "SELECT count(*) FROM refunds WHERE order_id = '88231'").fetchone()[0]

    def workflow_recorded(self, workflow_id: str) -> bool:
        """True when the engine's SQLite holds the workflow."""
        path = self.home / "dbos.sqlite"
        if not path.exists():
            return False
        with _read_only(path) as conn:
            try:
                return conn.execute("SELECT 1 FROM workflow_status WHERE workflow_uuid = ?",
                                    (workflow_id,)).fetchone() is not None
            except sqlite3.OperationalError:  # not made yet
                return False

    def _store_query(self, sql: str, args: tuple = ()) -> list[tuple]:
        if self.db_url:
            with psycopg.connect(self.db_url, autocommit=True) as conn:
                try:
                    return [tuple(row) for row in conn.execute(sql, args).fetchall()]
                except psycopg.errors.UndefinedTable:
                    return []
        path = self.home / "planboard.db"
        if not path.exists():
            return []
        with _read_only(path) as conn:
            try:
                return conn.execute(sql, args).fetchall()
            except sqlite3.OperationalError:  # no table yet
                return []

    # ---- faults ---------------------------------------------------------------------------

    def stop_when(self, child: CoreProcess, moment: Callable[[], bool], delay_s: float = 0,
                  timeout: float = WAIT_S) -> None:
        """SIGSTOP ``child`` ``delay_s`` after ``moment()`` holds (polled about every
        millisecond), freezing it where it is; AssertionError when it ends or ``timeout``
        passes first."""
        deadline = time.monotonic() + timeout
        while not moment():
            if not child.alive() or time.monotonic() > deadline:
                raise AssertionError("the moment to stop at never came\n" + self.report())
            time.sleep(0.001)
        time.sleep(delay_s)
        child.popen.send_signal(signal.SIGSTOP)

    def only_run(self) -> str:
        """The id of the trial's one run."""
        found = list(self.runs())
        assert len(found) == 1, (found, self.report())
        return found[0]


def _read_only(path: Path) -> closing[sqlite3.Connection]:
    """A read-only connection to a SQLite file that other processes write, closed after
    its ``with`` block."""
    return closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30))
