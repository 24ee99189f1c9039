"""The runs a :class:`core.runs.runner.Runner` executes in this process.

Their workflows run on this process's DBOS, lent what the Runner was given
(:mod:`core.runs.attachments`). DBOS's executor threads are joined when the interpreter
exits, and a run waiting for a person never ends its own: so the first run here has
``on_exit`` called before the interpreter joins them (``threading._register_atexit``, as
``concurrent.futures`` does for its own threads; ``atexit`` comes after the join), and
stopping these runs (:meth:`LocalRuns.suspend`, at a runner's close or the process's exit)
stops each workflow where it waits, unfinished in DBOS, for ``resume`` to continue from
its record.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from core.runs.attachments import Attached, attach, detach

__all__ = ["SUSPEND_WAIT_S", "LocalRuns"]

SUSPEND_WAIT_S = 10.0  # how long stopping waits for a run to reach a wait


class LocalRuns:
    """Run id → (workflow id, loan) of the workflows started here; ``on_exit`` is called
    once the interpreter starts to exit."""

    def __init__(self, on_exit: Callable[[], None]) -> None:
        self._on_exit = on_exit
        self._here: dict[str, tuple[str, Attached]] = {}
        self._lock = threading.Lock()
        self._watch = "unwatched"  # then "watching" from the first run, "stopped" once closed

    def execute(self, run_id: str, workflow_id: str, loan: Attached, *,
                take_over: bool = False) -> None:
        """Run the workflow on this process's DBOS, lending it ``loan`` (``take_over``:
        continue it from its record, through this process's own queue)."""
        import core.runs.durable as durable
        from core.runs.workflow import run_workflow

        with self._lock:
            self._here[run_id] = (workflow_id, loan)
            if self._watch == "unwatched":  # the first run: stop the runs at exit
                self._watch = "watching"
                threading._register_atexit(self._at_exit)  # type: ignore[attr-defined]
        attach(workflow_id, loan)
        try:
            if take_over:
                durable.take_over_here(workflow_id)
            else:
                durable.start_here(run_workflow, workflow_id, run_id, False)  # not queued
        except BaseException:
            detach(workflow_id)
            with self._lock:
                self._here.pop(run_id, None)
            raise

    def loan(self, run_id: str) -> Attached | None:
        """What the run was lent here; None for a run not started here."""
        with self._lock:
            here = self._here.get(run_id)
        return here[1] if here else None

    def nudge(self, run_id: str) -> None:
        """Have a run executing here read its mailbox before it starts another step."""
        loan = self.loan(run_id)
        if loan is not None:
            loan.mail.set()

    def unfinished(self) -> list[str]:
        """The runs started here whose workflow still runs here."""
        with self._lock:
            return [run_id for run_id, (_, loan) in self._here.items()
                    if not loan.ended.is_set()]

    def suspend(self, timeout: float) -> None:
        """Stop the workflows still running here where they wait, or after the step they
        are in; DBOS keeps them unfinished (cancelled). Waits up to ``timeout`` (at most
        :data:`SUSPEND_WAIT_S`) for their threads to end."""
        import core.runs.durable as durable
        from core.runs.workflow import SUSPEND

        with self._lock:
            here, self._here = dict(self._here), {}
        running = [(workflow_id, loan) for workflow_id, loan in here.values()
                   if not loan.ended.is_set()]
        for workflow_id, loan in running:
            loan.suspended.set()
            durable.send_control(workflow_id, SUSPEND)
        # each stops at its next mailbox read (after a step still in flight), records
        # itself paused and cancels its own workflow (core.runs.workflow._stopped_here)
        deadline = time.monotonic() + min(timeout, SUSPEND_WAIT_S)
        for workflow_id, loan in running:
            loan.ended.wait(max(0.0, deadline - time.monotonic()))
            detach(workflow_id)

    def stop_watching(self) -> None:
        """Do nothing at exit (the runner closed first)."""
        with self._lock:
            self._watch = "stopped"

    def _at_exit(self) -> None:
        with self._lock:
            watching = self._watch == "watching"
        if watching:
            self._on_exit()
