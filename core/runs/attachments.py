"""What a process lends the runs it starts: their engine, listener and replanner.

A run's workflow builds its engine from the run's stored settings, since any process may
continue it after a crash. The process that starts or resumes a run may lend it more: the
engine it planned with (tests use tools of their own), a listener for its events, a
replanner. Those live here, by workflow id, for as long as the workflow runs in this
process, with the means to follow it (``changed``, ``ended``), to have its mailbox read
at once (``mail``: a person here steered it) and to stop it when the process closes
(``suspended``). A replay in another process finds nothing here and uses
the stored settings.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.execution.events import EventSink
    from core.llm.engine import Engine
    from core.runs.live_run import Replanner

__all__ = ["Attached", "RunSuspended", "attach", "attached", "detach"]


class RunSuspended(BaseException):
    """The process that executes the run is closing: the workflow stops where it waits,
    unfinished in DBOS, for another process to continue (a BaseException, so that no
    handler of the run takes it for the run's failure)."""


@dataclass
class Attached:
    """A run's loan from the process executing it, and its signals."""

    engine: Engine | None = None
    on_event: EventSink | None = None
    replanner: Replanner | None = None
    changed: threading.Condition = field(default_factory=threading.Condition)
    ended: threading.Event = field(default_factory=threading.Event)
    mail: threading.Event = field(default_factory=threading.Event)
    suspended: threading.Event = field(default_factory=threading.Event)

    def notify(self) -> None:
        """Wake whoever follows the run here."""
        with self.changed:
            self.changed.notify_all()


_lock = threading.Lock()
_by_workflow: dict[str, Attached] = {}


def attach(workflow_id: str, loan: Attached) -> None:
    """Lend ``loan`` to the workflow ``workflow_id`` when it runs in this process."""
    with _lock:
        _by_workflow[workflow_id] = loan


def attached(workflow_id: str) -> Attached | None:
    """What this process lends the workflow, if anything."""
    with _lock:
        return _by_workflow.get(workflow_id)


def detach(workflow_id: str) -> None:
    """Forget the loan (the workflow ended here, or was suspended)."""
    with _lock:
        _by_workflow.pop(workflow_id, None)
