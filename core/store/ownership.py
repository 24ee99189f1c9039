"""Who executes a run: owner pid/host, heartbeats, atomic claims, control requests, crashes.

:class:`RunOwnership` is the part of :class:`core.store.run_store.RunStore` that decides
which process runs a run. A run is owned by a process (pid + host); on this host an owner
is alive while its pid exists, elsewhere while its heartbeat is fresh. Claims and cancels are single
conditional updates, so of two processes racing for a run exactly one wins (on PostgreSQL the
loser's update waits for the winner's row lock, then finds the run taken).
A run executed as a DBOS workflow (``workflow_id`` set) is recovered by DBOS: nothing here
marks it interrupted or takes it over because its owner looks dead.
"""

from __future__ import annotations

import logging
import os
import re
import socket
from collections.abc import Collection
from datetime import timedelta
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
    plan_versions,
    record_from_row,
    runs,
    scrub_settings,
    source_of_event,
    update_run,
    upsert_plan,
    utc_now,
)

__all__ = [
    "CANCELLED_STEP",
    "CONTROL_ACTIONS",
    "HELD_STATUSES",
    "RunOwnership",
    "owner_alive",
    "pid_alive",
]

logger = logging.getLogger(__name__)

CONTROL_ACTIONS = re.compile(
    r"^(pause|resume|cancel|(confirm|reject):s\d+|(approve|reject)_version:\d+)$")
CANCELLED_STEP = "cancelled by a person"
_HELD = sorted(HELD_STATUSES)  # statuses in which an owner holds a run


def pid_alive(pid: int) -> bool:
    """True when a process with ``pid`` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_alive(record: RunRecord, stale_after_s: float = 30.0) -> bool:
    """True while the process that owns the run is alive (by pid here, by heartbeat elsewhere)."""
    if record.owner_pid is None:
        return False
    if record.owner_host == socket.gethostname():
        return record.owner_pid == os.getpid() or pid_alive(record.owner_pid)
    limit = utc_now() - timedelta(seconds=stale_after_s)
    return record.heartbeat_at is not None and record.heartbeat_at >= limit


def _this_process() -> dict[str, Any]:
    return {"owner_pid": os.getpid(), "owner_host": socket.gethostname()}


@guard_public_methods
class RunOwnership:
    """Control requests, heartbeats, claims, cancels and crash detection of stored runs.

    A mixin of :class:`core.store.run_store.RunStore`: it needs ``self.engine`` and
    ``self.get_run``.
    """

    engine: sa.Engine

    if TYPE_CHECKING:
        def get_run(self, run_id: str) -> RunRecord: ...

    def request_control(self, run_id: str, action: str) -> None:
        """Ask the process running ``run_id`` to pause/resume/cancel or confirm:sN/reject:sN."""
        if not CONTROL_ACTIONS.match(action):
            raise StoreError(
                f"unknown control action {action!r}; use pause, resume, cancel, "
                "confirm:<step> or reject:<step>"
            )
        with self.engine.begin() as conn:
            update_run(conn, run_id, control_request=action, control_at=utc_now())

    def pending_control(self, run_id: str, *, clear: bool = True) -> str | None:
        """The control action waiting for the run (taken off the run unless ``clear=False``)."""
        with self.engine.begin() as conn:
            if clear:  # write first: takes the lock, so two readers never both take it
                taken = conn.execute(
                    runs.update().where(runs.c.id == run_id, runs.c.control_request.is_not(None))
                    .values(control_at=utc_now())
                )
                if not taken.rowcount:
                    return None
            action = conn.execute(
                sa.select(runs.c.control_request).where(runs.c.id == run_id)
            ).scalar()
            if clear and action is not None:
                conn.execute(runs.update().where(runs.c.id == run_id)
                             .values(control_request=None))
        return action

    def heartbeat(self, run_id: str) -> bool:
        """Record that this process still runs ``run_id``; False when it no longer owns it.

        Only the owner's beat counts, and only while the run is unfinished: a heartbeat never
        takes a run over nor brings a finished one back.
        """
        with self.engine.begin() as conn:
            done = conn.execute(runs.update().where(
                runs.c.id == run_id, runs.c.owner_pid == os.getpid(),
                runs.c.owner_host == socket.gethostname(), runs.c.status.in_(_HELD),
            ).values(heartbeat_at=utc_now()))
        return bool(done.rowcount)

    def claim_run(
        self, run_id: str, allowed: Collection[str], *, stale_after_s: float = 30.0,
        plan: Plan | None = None, reason: str | None = None,
        events: list[RunEvent] | tuple[RunEvent, ...] = (),
        options: dict[str, Any] | None = None, source: VersionSource | None = None,
    ) -> None:
        """Atomically make this process the owner of a run in ``allowed`` and set it running.

        The run must have no owner, be owned by this process, or have an owner that is gone
        (dead pid here, stale heartbeat elsewhere) and no DBOS workflow (DBOS recovers those);
        of two processes claiming at once, one wins and the other gets a StoreError. Control
        requests meant for an earlier owner are dropped. ``plan`` (stored with ``reason`` and
        ``source``, by default the source the ``replanned`` event among ``events`` names),
        ``events`` and ``options`` (scrubbed of secrets) are written in the same transaction.
        Every status in ``allowed`` must be one a run may leave for running
        (:mod:`core.lifecycle`).
        """
        if stray := sorted(s for s in allowed if not run_may_become(s, "running")):
            raise StoreError(f"a run cannot go from {' or '.join(stray)} to running")
        record = self.get_run(run_id)
        at = utc_now()
        with self.engine.begin() as conn:
            self._take(conn, record, allowed, stale_after_s, verb="run", values=dict(
                status="running", heartbeat_at=at, finished_at=None, **_this_process()))
            if options is not None:
                update_run(conn, run_id, options=scrub_settings(options))
            if plan is not None:
                named = next(filter(None, map(source_of_event, events)), None)
                upsert_plan(conn, run_id, plan, reason, at, source or named)
            for event in events:
                insert_event(conn, run_id, event)

    def cancel_unowned(self, run_id: str, *, reason: str, stale_after_s: float = 30.0,
                       workflow_stopped: bool = False) -> RunRecord:
        """Cancel a run no process executes: its unfinished steps end skipped, at once.

        The status, the plan snapshot (pending and orphaned running steps skipped as
        "cancelled by a person") and a ``cancelled`` event are one transaction, taken with
        the same conditions as :meth:`claim_run` (StoreError when a live process owns it, or
        when a DBOS workflow executes it and its owner looks dead: DBOS recovers it).
        ``workflow_stopped``: the caller cancelled the run's DBOS workflow, so only the
        run's status (still unfinished) is a condition.
        """
        record = self.get_run(run_id)
        at = utc_now()
        with self.engine.begin() as conn:
            self._take(conn, record, UNFINISHED_STATUSES, stale_after_s,
                       verb="cancel", values=dict(status="cancelled", owner_pid=None,
                                                  owner_host=None, finished_at=at),
                       anyone=workflow_stopped)
            latest = conn.execute(
                sa.select(plan_versions.c.plan).where(plan_versions.c.run_id == run_id)
                .order_by(plan_versions.c.version.desc()).limit(1)).scalar()
            plan = Plan.model_validate(latest) if latest else None
            skipped = []
            for step in plan.steps if plan is not None else []:
                if step.status not in FINISHED_STEP_STATUSES:
                    step.advance("skipped")
                    step.error = CANCELLED_STEP
                    skipped.append(step.id)
            if plan is not None:
                upsert_plan(conn, run_id, plan, None, at)
            insert_event(conn, run_id, RunEvent(
                kind="cancelled", plan_version=plan.version if plan else 1,
                data={"reason": reason, "skipped": skipped}))
        return self.get_run(run_id)

    def _take(self, conn: sa.Connection, record: RunRecord, allowed: Collection[str],
              stale_after_s: float, *, verb: str, values: dict[str, Any],
              anyone: bool = False) -> None:
        """The conditional update behind claim_run / cancel_unowned (StoreError if refused);
        ``anyone``: whoever owns the run, only its status is a condition."""
        free = [sa.true()] if anyone else [runs.c.owner_pid.is_(None),
                (runs.c.owner_pid == os.getpid()) & (runs.c.owner_host == socket.gethostname())]
        if (not anyone and record.owner_pid is not None and record.workflow_id is None
                and not owner_alive(record, stale_after_s)):
            # the owner seen gone: succeed only if nobody took the run over since (nor
            # handed it to a DBOS workflow, which DBOS recovers)
            free.append((runs.c.owner_pid == record.owner_pid)
                        & (runs.c.owner_host == record.owner_host)
                        & runs.c.workflow_id.is_(None))
        done = conn.execute(runs.update().where(
            runs.c.id == record.run_id, runs.c.status.in_(sorted(allowed)), sa.or_(*free),
        ).values(**values, updated_at=utc_now(), control_request=None, control_at=None))
        if done.rowcount:
            return
        current = self._status(conn, record.run_id)
        if current in allowed or current in ACTIVE_STATUSES:
            raise StoreError(f"run {record.run_id} is already being run by another process; "
                             "wait for it, or steer it with pause/cancel")
        raise StoreError(f"cannot {verb} run {record.run_id}: it is already {current} "
                         f"(it must be {' or '.join(sorted(allowed))})")

    @staticmethod
    def _status(conn: sa.Connection, run_id: str) -> str:
        current = conn.execute(sa.select(runs.c.status).where(runs.c.id == run_id)).scalar()
        if current is None:
            raise RunNotFoundError(msg("run.not_found", run_id=repr(run_id)))
        return current

    def find_stale_running(
        self, stale_after_s: float = 30.0, *, live_here: set[str] | None = None
    ) -> list[RunRecord]:
        """Active runs whose owner is gone: pid dead on this host, or heartbeat too old.

        Runs executed as a DBOS workflow are never stale: DBOS recovers them. With
        ``live_here`` (the runs this process is executing), runs owned by this very process
        but not in the set also count as gone.
        """
        stale = []
        for record in self._active_runs():
            mine = record.owner_pid == os.getpid() and record.owner_host == socket.gethostname()
            if mine and live_here is not None:
                if record.run_id not in live_here:
                    stale.append(record)
            elif not owner_alive(record, stale_after_s):
                stale.append(record)
        return stale

    def mark_interrupted(self, record: RunRecord, plan: Plan | None,
                         reset_events: list[RunEvent], event: RunEvent) -> bool:
        """Store the reset plan, the step_reset events and the interrupted status at once.

        Returns False (and changes nothing) when the run changed owner or status meanwhile,
        so two processes recovering at the same time record the crash only once, and for a
        run executed as a DBOS workflow (DBOS recovers it; it is never interrupted here).
        """
        at = utc_now()
        with self.engine.begin() as conn:
            changed = conn.execute(runs.update().where(
                runs.c.id == record.run_id, runs.c.status == record.status,
                runs.c.owner_pid == record.owner_pid, runs.c.workflow_id.is_(None),
            ).values(status="interrupted", updated_at=at, owner_pid=None, owner_host=None,
                     control_request=None))
            if not changed.rowcount:
                return False
            for reset in reset_events:
                insert_event(conn, record.run_id, reset)
            if plan is not None:
                upsert_plan(conn, record.run_id, plan, None, at)
            insert_event(conn, record.run_id, event)
        return True

    def _active_runs(self) -> list[RunRecord]:
        """Held runs with an owner, but none a DBOS workflow executes."""
        query = runs.select().where(runs.c.status.in_(_HELD), runs.c.workflow_id.is_(None))
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [record_from_row(r, None, 0) for r in rows if r["owner_pid"] is not None]
