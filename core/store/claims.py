"""The store's side of who continues a run: atomic claims, holders, cancels, crash records.

DBOS decides which process executes a workflow, and continues it after a crash. What it
cannot do is change a run's own record atomically with that decision: of two people
resuming (or following up) one run, exactly one must write the new status, version and
events, and the other be told who won. :class:`RunClaims` does that with single conditional
updates (on PostgreSQL the loser's update waits for the winner's row lock, then finds the
run taken) that record the winner as the run's holder (:data:`HOLDER`). Nor can DBOS show
a workflow before it starts: until it does, the holder the store names is who starts it
(:mod:`core.runs.recovery` records the run ``interrupted`` once that process has ended).
It also records a run whose process died as ``interrupted``, once, and cancels a run that
no process executes.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from core.base.messages import msg
from core.errors import RunNotFoundError, StoreError
from core.execution.events import RunEvent
from core.lifecycle import (
    ACTIVE_STATUSES,
    FINISHED_STEP_STATUSES,
    HELD_STATUSES,
    UNFINISHED_STATUSES,
    run_may_become,
)
from core.plan.model import Plan
from core.store.database import guard_public_methods
from core.store.schema import (
    RunRecord,
    VersionSource,
    insert_event,
    record_from_row,
    runs,
    scrub_options,
    source_of_event,
    stored_plan,
    update_run,
    upsert_plan,
    utc_now,
)

__all__ = ["CANCELLED_STEP", "HOLDER", "RunClaims"]

CANCELLED_STEP = msg("step.cancelled")  # what a cancelled step records, with its code
# The option naming the process that last recorded or claimed the run (its executor id): it
# holds the run until DBOS shows its workflow, and a refused claim names it.
HOLDER = "executor"


@guard_public_methods
class RunClaims:
    """Claims, cancels and crash records of stored runs.

    A mixin of :class:`core.store.run_store.RunStore`: it needs ``self.engine`` and
    ``self.get_run``.
    """

    engine: sa.Engine

    if TYPE_CHECKING:
        def get_run(self, run_id: str) -> RunRecord: ...

    def claim_run(
        self, run_id: str, allowed: Collection[str], *, workflow_id: str,
        holder: str | None = None,
        plan: Plan | None = None, reason: str | None = None,
        events: list[RunEvent] | tuple[RunEvent, ...] = (),
        options: dict[str, Any] | None = None, source: VersionSource | None = None,
    ) -> None:
        """Atomically set a run in ``allowed`` running under the DBOS workflow
        ``workflow_id`` (the one it has, continued, or a new one), held by the process
        ``holder`` (an executor id; None: the one the options name).

        Of two processes claiming at once, one wins and the other gets a StoreError
        (``run.busy``) naming the winner. ``plan`` (stored with ``reason`` and ``source``,
        by default the source the ``replanned`` event among ``events`` names), ``events``
        and ``options`` (scrubbed of secrets; by default the run's own) are written in the
        same transaction. Every status in ``allowed`` must be one a run may leave for
        running (:mod:`core.lifecycle`).
        """
        if stray := sorted(s for s in allowed if not run_may_become(s, "running")):
            raise StoreError(f"a run cannot go from {' or '.join(stray)} to running")
        record = self.get_run(run_id)
        at = utc_now()
        with self.engine.begin() as conn:
            self._take(conn, record, allowed, verb="run", values=dict(
                status="running", finished_at=None, workflow_id=workflow_id))
            if options is not None or holder is not None:
                held = dict(record.options if options is None else options)
                held.update({HOLDER: holder} if holder is not None else {})
                update_run(conn, run_id, options=scrub_options(held))
            if plan is not None:
                named = next(filter(None, map(source_of_event, events)), None)
                upsert_plan(conn, run_id, plan, reason, at, source or named)
            for event in events:
                insert_event(conn, run_id, event)

    def cancel_unowned(self, run_id: str, *, reason: str,
                       allowed: Collection[str] = UNFINISHED_STATUSES) -> RunRecord:
        """Cancel a run no process executes (its workflow is cancelled or gone): its
        unfinished steps end skipped, at once.

        The status, the plan snapshot (pending and orphaned running steps skipped as
        "cancelled by a person") and a ``cancelled`` event are one transaction; StoreError
        when the run has left ``allowed`` meanwhile (it ended, or someone resumed it: pass
        the status it was seen in, so that a cancel never lands on a run just resumed).
        """
        record = self.get_run(run_id)
        at = utc_now()
        with self.engine.begin() as conn:
            self._take(conn, record, allowed, verb="cancel",
                       values=dict(status="cancelled", finished_at=at))
            latest = stored_plan(conn, run_id)
            plan = Plan.model_validate(latest) if latest else None
            skipped = []
            for step in plan.steps if plan is not None else []:
                if step.status not in FINISHED_STEP_STATUSES:
                    step.advance("skipped")
                    step.error, step.error_message = str(CANCELLED_STEP), CANCELLED_STEP
                    skipped.append(step.id)
            if plan is not None:
                upsert_plan(conn, run_id, plan, None, at)
            insert_event(conn, run_id, RunEvent(
                kind="cancelled", plan_version=plan.version if plan else 1,
                data={"reason": reason, "skipped": skipped}))
        return self.get_run(run_id)

    def _take(self, conn: sa.Connection, record: RunRecord, allowed: Collection[str], *,
              verb: str, values: dict[str, Any]) -> None:
        """The conditional update behind claim_run / cancel_unowned (StoreError if
        refused): the run is still in ``allowed`` and under the workflow it was read with."""
        done = conn.execute(runs.update().where(
            runs.c.id == record.run_id, runs.c.status.in_(sorted(allowed)), _unmoved(record),
        ).values(**values, updated_at=utc_now()))
        if done.rowcount:
            return
        current = self._status(conn, record.run_id)
        if current in allowed or current in ACTIVE_STATUSES:
            options = conn.execute(sa.select(runs.c.options).where(
                runs.c.id == record.run_id)).scalar() or {}
            raise StoreError(msg("run.busy", run_id=record.run_id,
                                 holder=options.get(HOLDER) or msg("run.holder_unknown")))
        raise StoreError(f"cannot {verb} run {record.run_id}: it is already {current} "
                         f"(it must be {' or '.join(sorted(allowed))})")

    @staticmethod
    def _status(conn: sa.Connection, run_id: str) -> str:
        current = conn.execute(sa.select(runs.c.status).where(runs.c.id == run_id)).scalar()
        if current is None:
            raise RunNotFoundError(msg("run.not_found", run_id=repr(run_id)))
        return current

    def held_runs(self) -> list[RunRecord]:
        """Runs in a status a live process holds them in (without their plans)."""
        query = runs.select().where(runs.c.status.in_(sorted(HELD_STATUSES)))
        with self.engine.connect() as conn:
            return [record_from_row(r, None, 0) for r in conn.execute(query).mappings()]

    def mark_interrupted(self, record: RunRecord, plan: Plan | None,
                         reset_events: list[RunEvent], event: RunEvent) -> bool:
        """Store the reset plan, the step_reset events and the interrupted status at once.

        Returns False (and changes nothing) when the run has a new event since ``record``
        was read (another process recorded the crash, or recorded it and claimed the run,
        which is then running again under the same workflow), so that a crash is recorded
        once and never over a run another process took meanwhile.
        """
        at = utc_now()
        with self.engine.begin() as conn:
            changed = conn.execute(runs.update().where(
                runs.c.id == record.run_id, runs.c.status == record.status, _unmoved(record),
                runs.c.event_seq == record.event_seq,
            ).values(status="interrupted", updated_at=at))
            if not changed.rowcount:
                return False
            for reset in reset_events:
                insert_event(conn, record.run_id, reset)
            if plan is not None:
                upsert_plan(conn, record.run_id, plan, None, at)
            insert_event(conn, record.run_id, event)
        return True


def _unmoved(record: RunRecord) -> sa.ColumnElement[bool]:
    """The run is still under the workflow it was read with (nobody claimed it since)."""
    if record.workflow_id is None:
        return runs.c.workflow_id.is_(None)
    return runs.c.workflow_id == record.workflow_id
