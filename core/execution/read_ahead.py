"""Read ahead: read-only steps started while the planner still writes the plan.

LLMCompiler dispatches a step as soon as the planner has written it; PlanBoard does the
same for the steps that cannot change anything, when a person switches it on (off by
default). A step is read ahead when its tool is registered and read-only (the tool's own
flag, :func:`core.plan.approval.has_side_effect`), it waits for no step, has no condition,
and its arguments are all written as values (no reference to another step's result): then
its call is known before the plan is finished, and making it early changes nothing.

The approval boundary is unchanged: nothing with a side effect starts before a person
approves, and a read ahead serves a step only when it makes the very same call
(:func:`core.plan.calls.call_key`) with a read-only tool: a step whose arguments a person
edited calls its tool again. So does a step whose call failed, and one whose read is older
than :data:`MAX_AGE_S` when the step runs (a plan reviewed at length, a run resumed or re-run
later, reads afresh), one of a later plan version (a replan, a checkpoint, a phase's
expansion), and every step once a side effect of the plan has started: a read from before
it may no longer hold. A call still under way at approval is waited for up to ``wait_s`` (the
command line, whose ``--yes`` approves the moment the plan is written, waits
:data:`APPROVAL_WAIT_S`: the run would spend that time calling again), and made again by the
run past it. The results travel with the run's options (:attr:`RunOptions.read_ahead`, each
with the time it was read), so a worker in another process uses them too.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, wait
from typing import Any

from core.base.copies import copied
from core.plan.approval import has_side_effect
from core.plan.calls import call_key
from core.plan.model import Step
from core.tools.registry import ToolRegistry

__all__ = ["APPROVAL_WAIT_S", "MAX_AGE_S", "ReadAhead", "can_read_ahead", "for_version",
           "read_result"]

logger = logging.getLogger(__name__)

MAX_PARALLEL = 4  # read-ahead calls at once: a plan's first reads, not a load test
MAX_AGE_S = 300.0  # a read older than this when its step runs is made again
APPROVAL_WAIT_S = 10.0  # the most an approval waits for reads still under way


def can_read_ahead(step: Step, registry: ToolRegistry) -> bool:
    """True when ``step``'s call is known and harmless before its plan is finished."""
    if step.tool is None or step.tool not in registry or has_side_effect(step, registry):
        return False
    if step.depends_on or step.condition or call_key(step, registry) is None:
        return False
    return "{{" not in json.dumps(step.args, ensure_ascii=False, default=str)


def for_version(reads: Mapping[str, dict[str, Any]], version: int) -> dict[str, Any]:
    """``reads`` (from :meth:`ReadAhead.results`) as they serve plan version ``version``, the
    first a run executes: a replan, a checkpoint or a phase's expansion reads afresh."""
    return {key: {**read, "version": version} for key, read in reads.items()}


def read_result(read_ahead: Mapping[str, Any], key: str | None, version: int
                ) -> tuple[bool, Any]:
    """``(True, result)`` when the call ``key`` was read ahead for plan version ``version``
    less than :data:`MAX_AGE_S` seconds ago, else ``(False, None)``."""
    read = read_ahead.get(key) if key is not None else None
    if not isinstance(read, dict) or read.get("version") != version:
        return False, None
    if time.time() - float(read.get("read_at", 0)) > MAX_AGE_S:
        return False, None
    return True, read.get("result")


class ReadAhead:
    """The read-ahead calls of one plan being written: :meth:`offer` each preview of its
    steps; :meth:`results` gives the calls that have answered; :meth:`close` at the end.

    Each call runs in a daemon thread (at most ``max_parallel`` at once): a read still under
    way when its plan is dropped, or when a command ends, holds nothing up.
    """

    def __init__(self, registry: ToolRegistry, *, max_parallel: int = MAX_PARALLEL) -> None:
        self._registry = registry
        self._slots = threading.BoundedSemaphore(max_parallel)
        self._lock = threading.Lock()
        self._calls: dict[str, Future[dict[str, Any]]] = {}
        self._closed = False

    def offer(self, steps: list[Step]) -> None:
        """Start the call of every step of ``steps`` that may be read ahead and was not yet
        (a step the planner is still writing is not among them: its JSON is not complete)."""
        for step in steps:
            if not can_read_ahead(step, self._registry):
                continue
            read = copied(step)  # the call made is the one keyed, whatever
            key = call_key(read, self._registry)  # becomes of the preview's step
            with self._lock:
                if self._closed or key in self._calls:
                    continue
                call: Future[dict[str, Any]] = Future()
                self._calls[key] = call
            threading.Thread(target=self._call, args=(call, read), daemon=True,
                             name="planboard-read-ahead").start()

    def _call(self, call: Future[dict[str, Any]], step: Step) -> None:
        with self._slots:
            if self._closed:
                call.cancel()  # never left pending: a wait on it ends
                return
            if not call.set_running_or_notify_cancel():
                return
            logger.info("reading ahead: %s", step.tool)
            try:
                result = self._registry.call(step.tool or "", step.args or {})
            except Exception as exc:  # the run calls again: the read serves nothing
                call.set_exception(exc)
            else:  # wall time: the read is used by whichever process runs the plan
                call.set_result({"result": result, "read_at": time.time()})

    def shown(self, steps: list[Step]) -> list[Step]:
        """Copies of ``steps`` for a preview, those read ahead shown running or completed
        (their result too), so that a person sees the reads start while the plan is
        written; a failed read shows as not started (the run calls it again)."""
        with self._lock:
            calls = dict(self._calls)
        shown = []
        for step in steps:
            copy = copied(step)
            call = calls.get(call_key(step, self._registry)) if can_read_ahead(
                step, self._registry) else None
            if call is not None and call.running():
                copy.advance("running")
            elif call is not None and call.done() and not call.cancelled() and (
                    call.exception() is None):
                copy.advance("running")
                copy.advance("completed")
                copy.result = call.result()["result"]
            shown.append(copy)
        return shown

    def results(self, *, wait_s: float = 0.0) -> dict[str, dict[str, Any]]:
        """Call key → ``{"result", "read_at"}`` for every call that has answered without an
        error, once those under way have answered or ``wait_s`` seconds have passed."""
        with self._lock:
            calls = dict(self._calls)
        if wait_s > 0 and calls:
            wait(calls.values(), timeout=wait_s)
        return {key: call.result() for key, call in calls.items()
                if call.done() and not call.cancelled() and call.exception() is None}

    def close(self) -> None:
        """Start no more calls (those waiting for a slot are cancelled); those under way end
        on their own."""
        with self._lock:
            self._closed = True
            waiting = list(self._calls.values())
        for call in waiting:
            call.cancel()  # only a call not yet running is cancelled
