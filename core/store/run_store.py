"""The run store: runs, every plan version, an append-only event log and lessons, in SQL.

Built on SQLAlchemy 2 Core (tables in :mod:`core.store.schema`) over SQLite (the default, a
file in the PlanBoard home) or PostgreSQL (``PLANBOARD_DB_URL``; see
:mod:`core.store.database`). Every write is one transaction. Writes that read before they
write (event numbering, plan versions) start by updating the run's row, which takes the
write lock first (SQLite's database lock, PostgreSQL's row lock), so concurrent writers in
threads or processes queue instead of colliding.
Settings and options pass through :func:`core.store.schema.scrub_settings` (options through
``scrub_options``, which keeps the tool results read while planning as results): anything
that looks like a secret is dropped before it reaches the database. Claims, cancels and crash
records live in :mod:`core.store.claims` (mixed into :class:`RunStore`).
A run is executed by a DBOS workflow, which it names (``workflow_id``); its code replays
from the top after a crash, so the events it writes carry a replay key and are written once.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa

from core.base.messages import msg
from core.base.usage import Usage
from core.errors import RunExistsError, RunNotFoundError, StoreError
from core.execution.events import RunEvent
from core.lifecycle import (
    RUN_STATUSES,
    RUN_TRANSITIONS,
    TERMINAL_STATUSES,
    UNFINISHED_STATUSES,
    RunStatus,
    run_may_become,
)
from core.plan.model import Plan
from core.store.claims import CANCELLED_STEP, RunClaims
from core.store.database import (
    default_db_url,
    guard_public_methods,
    make_engine,
    store_failure,
)
from core.store.migrations import migrate
from core.store.schema import (
    PlanVersion,
    RunRecord,
    StoredEvent,
    VersionSource,
    as_utc,
    events,
    insert_event,
    plan_versions,
    record_from_row,
    replayed_seq,
    runs,
    scrub_options,
    scrub_settings,
    source_of_event,
    stored_plan,
    stored_plans,
    update_run,
    upsert_plan,
    upsert_step,
    utc_now,
)

__all__ = [
    "CANCELLED_STEP",
    "PlanVersion",
    "RunRecord",
    "RunStore",
    "StoredEvent",
    "VersionSource",
    "default_db_url",
    "scrub_settings",
    "store_failure",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")


@guard_public_methods
class RunStore(RunClaims):
    """Persistence of runs; safe to share between threads and processes over one database.

    Every public method reports a database failure as a one-line :class:`StoreError`.
    Claims, cancels and crash records come from :class:`core.store.claims.RunClaims`.
    """

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_db_url()
        self.engine = make_engine(self.url)
        try:
            migrate(self.engine)
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(store_failure(self.engine.url, exc)) from exc

    def close(self) -> None:
        """Release the database connections."""
        self.engine.dispose()

    def transaction(self, work: Callable[[sa.Connection], T]) -> T:
        """``work(conn)`` in one transaction, kept like every method here: a database blip
        is ridden out (``work`` runs again whole: nothing of a failed try stays) and any
        other database failure is a one-line StoreError. For writers that read a run before
        they write it (core.review), under the run's write lock they take first."""
        with self.engine.begin() as conn:
            return work(conn)

    # ---- runs -----------------------------------------------------------------------

    def create_run(
        self,
        request: str,
        settings: dict[str, Any] | None = None,
        plan: Plan | None = None,
        *,
        options: dict[str, Any] | None = None,
        run_id: str | None = None,
        status: RunStatus = "planned",
        usage: Usage | None = None,
        workflow_id: str | None = None,
    ) -> str:
        """Record a new run (and its plan as version ``plan.version``); return its id.

        ``workflow_id``: the DBOS workflow that executes the run (see :meth:`set_workflow`).
        A ``run_id`` that a run has already: RunExistsError, and nothing is recorded (the
        database's key decides, so of two processes recording one id, one is told).
        """
        run_id = run_id or uuid.uuid4().hex[:12]
        at = utc_now()
        try:
            with self.engine.begin() as conn:
                conn.execute(runs.insert().values(
                    id=run_id, request=request, settings=scrub_settings(settings or {}),
                    options=scrub_options(options or {}), status=status, answer=None,
                    usage=(usage or Usage()).model_dump(),
                    created_at=at, updated_at=at, event_seq=0, workflow_id=workflow_id,
                ))
                if plan is not None:
                    upsert_plan(conn, run_id, plan, "initial plan", at, "draft")
        except sa.exc.IntegrityError:
            if not self._exists(run_id):
                raise
            raise RunExistsError(msg("run.exists", run_id=run_id), run_id) from None
        return run_id

    def _exists(self, run_id: str) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)
                                ).first() is not None

    def get_run(self, run_id: str) -> RunRecord:
        """The run with its latest plan; RunNotFoundError when there is none."""
        with self.engine.connect() as conn:
            row = conn.execute(runs.select().where(runs.c.id == run_id)).mappings().first()
            if row is None:
                raise RunNotFoundError(msg("run.not_found", run_id=repr(run_id)))
            latest = stored_plan(conn, run_id)
            count = conn.execute(
                sa.select(sa.func.count()).select_from(plan_versions)
                .where(plan_versions.c.run_id == run_id)
            ).scalar_one()
        return record_from_row(row, Plan.model_validate(latest) if latest else None, count)

    def status(self, run_id: str) -> str:
        """The run's status alone (one small query, for followers waiting on it);
        RunNotFoundError when there is no such run."""
        with self.engine.connect() as conn:
            return self._status(conn, run_id)

    def run_marker(self, run_id: str) -> tuple[int, Any] | None:
        """What changes whenever the run is written: its event count and ``updated_at``
        (None when there is no such run). One small query, for followers that re-read a
        run only when it changed."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(runs.c.event_seq, runs.c.updated_at)
                               .where(runs.c.id == run_id)).first()
        return None if row is None else (int(row[0]), row[1])

    def list_runs(self, status: str | None = None, limit: int = 100) -> list[RunRecord]:
        """Runs newest first (without their plans), optionally only those in ``status``."""
        query = runs.select().order_by(runs.c.created_at.desc(), runs.c.id).limit(limit)
        if status is not None:
            query = query.where(runs.c.status == status)
        with self.engine.connect() as conn:
            return [record_from_row(row, None, 0) for row in conn.execute(query).mappings()]

    def set_status(
        self, run_id: str, status: RunStatus, *, event: RunEvent | None = None,
        reopen: bool = False,
    ) -> None:
        """Change the status (and append ``event`` in the same transaction).

        The status moves only as :mod:`core.lifecycle` allows, and a finished run (completed,
        failed, cancelled) keeps its status (StoreError either way) unless
        ``reopen=True``; runs are restarted through :meth:`claim_run` instead.
        """
        if status not in RUN_STATUSES:
            raise StoreError(f"unknown run status {status!r}; use one of {sorted(RUN_STATUSES)}")
        # from a finished run only claim_run moves on (a follow-up), never set_status
        sources = sorted({status} | {old for old in UNFINISHED_STATUSES
                                     if run_may_become(old, status)})
        at = utc_now()
        values: dict[str, Any] = {"status": status, "updated_at": at}
        values["finished_at"] = at if status in TERMINAL_STATUSES else None
        with self.engine.begin() as conn:
            query = runs.update().where(runs.c.id == run_id)
            if not reopen:
                query = query.where(runs.c.status.in_(sources))
            if not conn.execute(query.values(**values)).rowcount:
                current = self._status(conn, run_id)
                hint = ("ask a follow-up or start a new run" if current in TERMINAL_STATUSES
                        else "from there it can become "
                        + ", ".join(sorted(RUN_TRANSITIONS[current])))
                raise StoreError(f"run {run_id} is already {current} and cannot become {status}; "
                                 + hint)
            if event is not None:
                insert_event(conn, run_id, event)

    def finish_run(self, run_id: str, status: RunStatus, *, answer: str | None, usage: Usage,
                   plans: list[Plan]) -> bool:
        """Record how a run stopped: plan snapshots, answer, usage, status, in one transaction.

        A run that has already
        ended (cancelled by someone who could not reach its executor, say) keeps that end:
        nothing is written and False is returned.
        """
        at = utc_now()
        with self.engine.begin() as conn:
            written = conn.execute(runs.update().where(
                (runs.c.id == run_id) & runs.c.status.not_in(sorted(TERMINAL_STATUSES))
            ).values(status=status, answer=answer, usage=usage.model_dump(), updated_at=at,
                     finished_at=at if status in TERMINAL_STATUSES else None)).rowcount
            if not written:
                ended = self._status(conn, run_id)  # RunNotFoundError when there is no run
                logger.warning("run %s ended %s elsewhere; its end as %s is not recorded",
                               run_id, ended, status)
                return False
            for plan in plans:
                upsert_plan(conn, run_id, plan, None, at)
        return True

    def set_answer(self, run_id: str, answer: str | None) -> None:
        """Record the final answer."""
        with self.engine.begin() as conn:
            update_run(conn, run_id, answer=answer, updated_at=utc_now())

    def set_usage(self, run_id: str, usage: Usage) -> None:
        """Record the run's total usage."""
        with self.engine.begin() as conn:
            update_run(conn, run_id, usage=usage.model_dump(), updated_at=utc_now())

    def set_options(self, run_id: str, options: dict[str, Any]) -> None:
        """Record the run options used (max_parallel, confirm_side_effects, ...), no secrets."""
        with self.engine.begin() as conn:
            update_run(conn, run_id, options=scrub_options(options), updated_at=utc_now())

    def set_workflow(self, run_id: str, workflow_id: str) -> None:
        """Record the DBOS workflow that executes the run from now on (a run created
        without one, by a test or a benchmark, that is then started as a workflow)."""
        with self.engine.begin() as conn:
            update_run(conn, run_id, workflow_id=workflow_id, updated_at=utc_now())

    # ---- plan versions --------------------------------------------------------------

    def save_plan_version(self, run_id: str, plan: Plan, reason: str | None = None, *,
                          source: VersionSource = "manual") -> int:
        """Store ``plan`` as version ``plan.version`` (replacing that version's snapshot).

        ``source`` (what made the version) is recorded when the version is new; a
        snapshot of a stored version keeps the source it has.
        """
        with self.engine.begin() as conn:
            update_run(conn, run_id, updated_at=utc_now())
            exists = conn.execute(sa.select(plan_versions.c.version).where(
                (plan_versions.c.run_id == run_id) & (plan_versions.c.version == plan.version)
            )).first()
            upsert_plan(conn, run_id, plan, reason, utc_now(), None if exists else source)
        return plan.version

    def latest_plan(self, run_id: str) -> Plan | None:
        """The newest plan version of the run, if it has one."""
        return self.get_run(run_id).plan

    def plan_versions(self, run_id: str) -> list[PlanVersion]:
        """Every plan version of the run, oldest first."""
        with self.engine.connect() as conn:
            rows = stored_plans(conn, run_id)
        return [
            PlanVersion(version=r["version"], plan=Plan.model_validate(plan),
                        source=r["source"], reason=r["reason"], created_at=as_utc(r["created_at"]))
            for r, plan in rows
        ]

    # ---- events ---------------------------------------------------------------------

    def append_event(self, run_id: str, event: RunEvent, *,
                     replay_key: str | None = None) -> int:
        """Append ``event`` to the run's log; return its sequence number (1, 2, 3, ...).

        ``replay_key``: unique per run; when an event is already recorded under it (workflow
        code replaying), nothing is written and that event's seq is returned.
        """
        with self.engine.begin() as conn:
            recorded = replayed_seq(conn, run_id, replay_key)
            if recorded is not None:
                return recorded
            return insert_event(conn, run_id, event, replay_key)

    def record_step(self, run_id: str, event: RunEvent, plan: Plan, *,
                    reason: str | None = None, previous: Plan | None = None,
                    source: VersionSource | None = None, replay_key: str | None = None,
                    only_step: str | None = None) -> int:
        """Append ``event`` and store the plan snapshot (with ``reason``) in one transaction.

        ``previous``: the version ``plan`` replaced, stored too (its retired steps skipped).
        ``source``: what made ``plan`` when it is a new version (by default, the source a
        ``replanned`` event names). ``replay_key``: unique per run; when an event is already
        recorded under it (a replay racing a live write), nothing at all is written (no
        event, snapshot nor version) and that event's seq is returned. ``only_step``: only
        that step of ``plan`` changed since its version's stored snapshot (the caller
        knows): its state is stored instead of the whole plan, so an event costs the same
        in a plan of 10 steps and of 1,000.
        """
        at = utc_now()
        with self.engine.begin() as conn:
            recorded = replayed_seq(conn, run_id, replay_key)
            if recorded is not None:
                return recorded
            seq = insert_event(conn, run_id, event, replay_key)
            if only_step is not None and previous is None:
                upsert_step(conn, run_id, plan.version, plan.step(only_step), at)
                return seq
            if previous is not None:
                upsert_plan(conn, run_id, previous, None, at)
            upsert_plan(conn, run_id, plan, reason, at, source or source_of_event(event))
        return seq

    def event_recorded(self, run_id: str, replay_key: str) -> bool:
        """True when the run has an event recorded under ``replay_key``."""
        with self.engine.connect() as conn:
            return conn.execute(sa.select(events.c.seq).where(
                events.c.run_id == run_id, events.c.replay_key == replay_key)).first() is not None

    def events(self, run_id: str, *, after: int = 0) -> list[StoredEvent]:
        """The run's events in order (those with ``seq > after``)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                events.select().where(events.c.run_id == run_id, events.c.seq > after)
                .order_by(events.c.seq)
            ).mappings().all()
        return [
            StoredEvent(run_id=r["run_id"], seq=r["seq"], kind=r["kind"], step_id=r["step_id"],
                        plan_version=r["plan_version"], data=r["data"] or {},
                        at=as_utc(r["at"]), replay_key=r["replay_key"])
            for r in rows
        ]
