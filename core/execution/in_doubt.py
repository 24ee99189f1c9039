"""Side effects in doubt: a call that began before its process died is not repeated unasked.

A step's work is *at least once*: a run resumed after a crash runs the step that was in
flight again. For a side effect that is idempotent (it says so, and honours the call's
idempotency key) that is harmless. For any other side effect the earlier call may
already have happened (a branch created, a message sent), so the engine asks first: the
executor notes each such call in a :class:`CallLedger` just before making it, under the
call's idempotency key, and a step whose key the ledger already holds does not call the
tool again; its outcome says ``in_doubt``, and the coordinator puts the step back to
pending and asks a person whether to run it again (whatever the run's confirmation
setting). Confirmed, the step runs under a new key (``…:r1``, ``…:r2``), so that a crash
during the repeat is caught the same way; rejected, it ends skipped.

The ledger must outlive the process: a run executed as a DBOS workflow keeps it in the
workflow's events (:mod:`core.runs.call_ledger`). A run without one (a test's thread pool)
has nothing to resume, and no ledger.
"""

from __future__ import annotations

from typing import Protocol

from core.tools.registry import Tool

__all__ = ["CallLedger", "in_doubt_if_repeated", "repeat_key"]


class CallLedger(Protocol):
    """Where the calls a run began are noted, so that a resumed run can tell."""

    def begin(self, key: str) -> bool:
        """Note that the call with idempotency key ``key`` is about to be made; False when
        it was noted before (an earlier attempt began it: it may have happened)."""
        ...


def in_doubt_if_repeated(tool: Tool) -> bool:
    """True for a tool whose repeated call may do its effect twice: a side effect that does
    not say it is idempotent."""
    return tool.side_effect and not tool.idempotent


def repeat_key(key: str, repeats: int) -> str:
    """The idempotency key of a step run again ``repeats`` times after a person said so."""
    return f"{key}:r{repeats}" if repeats else key
