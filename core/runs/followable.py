"""Which runs a follow-up may extend: a finished run with a plan."""

from __future__ import annotations

from core.base.messages import msg
from core.errors import StoreError
from core.lifecycle import statuses_allowing
from core.store.run_store import RunRecord

__all__ = ["require_followable"]

_FOLLOWABLE = statuses_allowing("follow_up")


def require_followable(record: RunRecord) -> None:
    """StoreError (one line) unless a follow-up may extend the run."""
    if record.status not in _FOLLOWABLE or record.plan is None:
        raise StoreError(msg("run.followup_unfinished", run_id=record.run_id,
                             status=msg(f"run_status.{record.status}")))
