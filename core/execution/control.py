"""Pause, resume, cancel, per-step confirmation and version approval of a run, thread-safe."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future

from core.plan.model import Plan, Step

__all__ = ["ControlWake", "RunControl"]

logger = logging.getLogger(__name__)

Listener = Callable[[], None]


class RunControl:
    """Signals from a person (or the runner) to a run in progress.

    Every change wakes whoever waits: threads blocked in :meth:`wait_for_confirmation`
    and the listeners added with :meth:`add_listener` (the scheduler's wake-up). Subclasses
    may override the ``is_*`` checks (for example to read requests from a store); the
    scheduler also re-reads them at a bounded interval.

    It also keeps the boundary of the run: the plan version a person approved
    (:attr:`approved`), and the decisions on later versions that widen it.
    """

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._paused = False
        self._decisions: dict[str, bool] = {}
        self._versions: dict[int, bool] = {}
        self._approved: Plan | None = None
        self._listeners: list[Listener] = []
        self.cancel_event = threading.Event()

    # ---- requests -----------------------------------------------------------------------

    def pause(self) -> None:
        """Start no new steps; running ones finish; the run then stops as "paused"."""
        self._change(lambda: setattr(self, "_paused", True))

    def resume(self) -> None:
        """Allow new steps again (call run_plan with the paused plan to continue)."""
        self._change(lambda: setattr(self, "_paused", False))

    def cancel(self) -> None:
        """Start no new steps and tell running ones to stop; pending steps end skipped."""
        self._change(self.cancel_event.set)

    def confirm(self, step_id: str) -> None:
        """Allow the side-effecting step ``step_id`` to run."""
        self._change(lambda: self._decisions.__setitem__(step_id, True))

    def reject(self, step_id: str) -> None:
        """Refuse the side-effecting step ``step_id``; it ends skipped."""
        self._change(lambda: self._decisions.__setitem__(step_id, False))

    def approve_version(self, version: int) -> None:
        """Approve plan version ``version``: its side-effecting steps may run."""
        self._change(lambda: self._versions.__setitem__(version, True))

    def reject_version(self, version: int) -> None:
        """Refuse what plan version ``version`` added: its widening steps end skipped."""
        self._change(lambda: self._versions.__setitem__(version, False))

    # ---- the approved plan ------------------------------------------------------------

    @property
    def approved(self) -> Plan | None:
        """A copy of the plan version a person approved (None until one is set)."""
        with self._condition:
            return self._approved

    def set_approved(self, plan: Plan, *, only_if_unset: bool = False) -> None:
        """Make (a copy of) ``plan`` the approved boundary of the run."""
        with self._condition:
            if not (only_if_unset and self._approved is not None):
                self._approved = plan.model_copy(deep=True)

    # ---- state --------------------------------------------------------------------------

    def is_paused(self) -> bool:
        """True while a pause is requested."""
        with self._condition:
            return self._paused

    def is_cancelled(self) -> bool:
        """True once the run was cancelled (it cannot be undone)."""
        return self.cancel_event.is_set()

    def decision(self, step_id: str) -> bool | None:
        """True when confirmed, False when rejected, None when nobody has decided yet."""
        with self._condition:
            return self._decisions.get(step_id)

    def version_decision(self, version: int) -> bool | None:
        """True when version ``version`` was approved, False when refused, else None."""
        with self._condition:
            return self._versions.get(version)

    def wait_for_version(self, version: int, timeout: float | None = None) -> bool | None:
        """Block until version ``version`` is decided, the run paused or cancelled, or
        ``timeout`` (seconds) passed; return the decision (None: not decided)."""
        with self._condition:
            self._condition.wait_for(
                lambda: version in self._versions or self._paused or self.cancel_event.is_set(),
                timeout=timeout,
            )
            return None if self.cancel_event.is_set() else self._versions.get(version)

    def pace(self, seconds: float) -> None:
        """Wait ``seconds`` (the demo pace of a step that has started) unless the run is
        cancelled first; a pause waits for the step's end, as for any running step."""
        self.cancel_event.wait(seconds)

    def wait_for_confirmation(self, step: Step, timeout: float | None = None) -> bool:
        """Block until ``step`` is confirmed or rejected, the run is cancelled or paused.

        Returns True only when the step was confirmed. After False, :meth:`decision` tells a
        rejection (False) from a pause or cancellation (None). ``timeout`` (seconds) bounds
        the wait; None waits as long as it takes.
        """
        with self._condition:
            self._condition.wait_for(
                lambda: step.id in self._decisions or self._paused or self.cancel_event.is_set(),
                timeout=timeout,
            )
            if self.cancel_event.is_set():
                return False
            return self._decisions.get(step.id) is True

    # ---- listeners ----------------------------------------------------------------------

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener()`` after every change (from the thread that made the change)."""
        with self._condition:
            self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener`` (no error when it was not added)."""
        with self._condition:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def _change(self, action: Callable[[], object]) -> None:
        with self._condition:
            action()
            self._condition.notify_all()
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:  # a broken listener must not break pause/cancel
                logger.exception("run control listener failed")


class ControlWake:
    """A future completed by a RunControl change, so a ``concurrent.futures.wait`` returns.

    Add :meth:`fire` as a listener, wait on :attr:`future` along with the step futures,
    and call :meth:`rearm` after every wait (a fired future is replaced by a fresh one).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.future: Future[None] = Future()

    def fire(self) -> None:
        """Complete the current future (no effect when it already is)."""
        with self._lock:
            if not self.future.done():
                self.future.set_result(None)

    def rearm(self) -> None:
        """Replace the future by a fresh one if it has fired."""
        with self._lock:
            if self.future.done():
                self.future = Future()
