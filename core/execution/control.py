"""Pause, resume, cancel, per-step confirmation and version approval of a run, thread-safe."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future

from core.base.copies import copied
from core.plan.model import Plan

__all__ = ["ControlWake", "RunControl"]

logger = logging.getLogger(__name__)

Listener = Callable[[], None]


class RunControl:
    """Signals from a person (or the runner) to a run in progress.

    Every change calls the listeners added with :meth:`add_listener` (the coordinator's
    wake-up); nobody blocks waiting for a decision, the coordinator reads it on its next
    turn. Subclasses may override the ``is_*`` checks (for example to read requests from a
    store); the coordinator also re-reads them at a bounded interval.

    It also keeps the boundary of the run: the plan version a person approved
    (:attr:`approved`), and the decisions on later versions that widen it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
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

    def forget(self, step_id: str) -> None:
        """Drop the decision on ``step_id``: the step asks again (its call is in doubt)."""
        self._change(lambda: self._decisions.pop(step_id, None))

    def approve_version(self, version: int) -> None:
        """Approve plan version ``version``: its side-effecting steps may run."""
        self._change(lambda: self._versions.__setitem__(version, True))

    def reject_version(self, version: int) -> None:
        """Refuse what plan version ``version`` added: its widening steps end skipped."""
        self._change(lambda: self._versions.__setitem__(version, False))

    def apply(self, action: str) -> None:
        """Apply one action as sent between processes: pause, resume, cancel, confirm:sN,
        reject:sN, approve_version:N or reject_version:N (anything else is ignored)."""
        verb, _, target = action.partition(":")
        if verb == "pause":
            self.pause()
        elif verb == "resume":
            self.resume()
        elif verb == "cancel":
            self.cancel()
        elif verb == "confirm":
            self.confirm(target)
        elif verb == "reject":
            self.reject(target)
        elif verb == "approve_version" and target.isdigit():
            self.approve_version(int(target))
        elif verb == "reject_version" and target.isdigit():
            self.reject_version(int(target))

    # ---- the approved plan ------------------------------------------------------------

    @property
    def approved(self) -> Plan | None:
        """The plan version a person approved (None until one is set): the control's own copy,
        for reading (``set_approved`` is the only way to change it)."""
        with self._lock:
            return self._approved

    def set_approved(self, plan: Plan, *, only_if_unset: bool = False) -> None:
        """Make (a copy of) ``plan`` the approved boundary of the run."""
        with self._lock:
            if not (only_if_unset and self._approved is not None):
                self._approved = copied(plan)

    # ---- state --------------------------------------------------------------------------

    def is_paused(self) -> bool:
        """True while a pause is requested."""
        with self._lock:
            return self._paused

    def is_cancelled(self) -> bool:
        """True once the run was cancelled (it cannot be undone)."""
        return self.cancel_event.is_set()

    def decision(self, step_id: str) -> bool | None:
        """True when confirmed, False when rejected, None when nobody has decided yet."""
        with self._lock:
            return self._decisions.get(step_id)

    def version_decision(self, version: int) -> bool | None:
        """True when version ``version`` was approved, False when refused, else None."""
        with self._lock:
            return self._versions.get(version)

    def pace(self, seconds: float) -> None:
        """Wait ``seconds`` (the demo pace of a step that has started) unless the run is
        cancelled first; a pause waits for the step's end, as for any running step."""
        self.cancel_event.wait(seconds)

    # ---- listeners ----------------------------------------------------------------------

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener()`` after every change (from the thread that made the change)."""
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener`` (no error when it was not added)."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def _change(self, action: Callable[[], object]) -> None:
        with self._lock:
            action()
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:  # a broken listener must not break pause/cancel
                logger.exception("run control listener failed")


class ControlWake:
    """A future completed by a RunControl change, so that a launcher's wait returns.

    Add :meth:`fire` as a listener, hand it to ``StepLauncher.next_done`` (which waits on
    :attr:`future` along with the steps), and call :meth:`rearm` after every wait, before
    the control is read again (a fired future is replaced by a fresh one).
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
