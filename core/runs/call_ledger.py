"""The ledger of a run's side-effect calls, kept in its DBOS workflow's events.

:class:`WorkflowCallLedger` is the :class:`core.execution.in_doubt.CallLedger` of a run
executed as a workflow. A plan step's work runs inside a DBOS step, so the note cannot be a
step of its own; it is a workflow event (``call:<idempotency key>``), which DBOS writes
durably from inside a step and keeps with the workflow: a resume (same workflow id, in this
process or another) finds the notes its earlier attempt left. Reading and writing an event
inside a step records nothing in the workflow's sequence of steps, so a replay is
unchanged.
"""

from __future__ import annotations

from dbos import DBOS

from core.runs.durable_launcher import engine_call

__all__ = ["CALL_EVENT", "WorkflowCallLedger"]

CALL_EVENT = "call:"


class WorkflowCallLedger:
    """Notes calls in the running workflow's events (used inside its plan steps only)."""

    def begin(self, key: str) -> bool:
        """Note the call ``key``; False when the workflow noted it before."""
        workflow_id = DBOS.workflow_id
        if workflow_id is None:  # not inside a workflow: nothing could resume it
            return True
        name = CALL_EVENT + key
        if engine_call(DBOS.get_event, workflow_id, name, timeout_seconds=0) is not None:
            return False
        engine_call(DBOS.set_event, name, True)
        return True
