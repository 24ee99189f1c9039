"""The one way tests wait: for a condition, with one default timeout.

A test waits on what it expects (a status, an event, a line of output), never for a fixed
time. ``wait_until`` polls the condition and fails with what it was waiting for when the
timeout passes; the default is generous because it is only reached when something is wrong
(a busy 2-core machine must not fail a test that would pass a moment later), and it stays
below the suite's per-test limit (pytest-timeout, pyproject.toml) so the message comes out.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Sequence
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

__all__ = ["DEFAULT_TIMEOUT_S", "results_of", "wait_until"]

DEFAULT_TIMEOUT_S = 60.0
"""How long any test waits for a condition unless it says otherwise."""

POLL_S = 0.05
"""How often a condition is looked at unless a test says otherwise. A look costs CPU that the
other tests on the machine need (reading a run from the store takes ~2 ms: at 20 ms apart a
test that waits held a tenth of a core), and no state a test waits for lasts less."""

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float = DEFAULT_TIMEOUT_S, *,
               what: str = "the condition", poll_s: float = POLL_S) -> T:
    """``predicate()``'s first true value, polled every ``poll_s`` seconds; AssertionError
    naming ``what`` when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}, in vain")
        time.sleep(poll_s)


def results_of(processes: Sequence[BaseProcess], results: Any,
               timeout: float = DEFAULT_TIMEOUT_S) -> list[Any]:
    """One item per process from the multiprocessing queue ``results``, in the order they
    came; AssertionError as soon as a process ended without putting its own (its traceback
    is on stderr), rather than waiting out the timeout for an item that cannot come."""
    got: list[Any] = []

    def all_in() -> bool:
        try:
            while len(got) < len(processes):
                got.append(results.get(timeout=POLL_S))
        except queue.Empty:
            failed = [p.exitcode for p in processes if p.exitcode not in (None, 0)]
            assert not failed, f"a process ended with exit code {failed[0]} before its result"
        return len(got) == len(processes)

    wait_until(all_in, timeout, what=f"the results of {len(processes)} processes")
    return got
