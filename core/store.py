"""The run store: runs, every plan version, an append-only event log and lessons, in SQL.

Built on SQLAlchemy 2 Core (tables in :mod:`core.store_schema`), so ``PLANBOARD_DB_URL`` may
point at PostgreSQL; the default is a SQLite file ``planboard_home()/planboard.db`` in WAL
mode with a busy timeout. Every write is one transaction. Writes that read before they
write (event numbering, plan versions) start by updating the run's row, which takes the
write lock first, so concurrent writers in threads or processes queue instead of colliding.
Settings pass through :func:`core.store_schema.scrub_settings`: anything that looks like a
secret is dropped before it reaches the database.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import socket
import uuid
from collections.abc import Callable, Collection
from datetime import timedelta
from typing import Any, TypeVar

import sqlalchemy as sa

from core.errors import RunNotFoundError, StoreError
from core.events import RunEvent
from core.plan import Plan
from core.store_schema import (
    ACTIVE_STATUSES,
    STATUSES,
    TERMINAL_STATUSES,
    PlanVersion,
    RunRecord,
    RunStatus,
    StoredEvent,
    as_utc,
    events,
    insert_event,
    migrate,
    plan_versions,
    record_from_row,
    runs,
    scrub_settings,
    update_run,
    upsert_plan,
    utc_now,
)
from core.usage import Usage

__all__ = [
    "ACTIVE_STATUSES",
    "TERMINAL_STATUSES",
    "PlanVersion",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "StoredEvent",
    "default_db_url",
    "owner_alive",
    "pid_alive",
    "scrub_settings",
    "store_failure",
]

logger = logging.getLogger(__name__)

CONTROL_ACTIONS = re.compile(r"^(pause|resume|cancel|(confirm|reject):s\d+)$")
CANCELLED_STEP = "cancelled by a person"
_HELD = sorted(ACTIVE_STATUSES | {"paused"})  # statuses in which an owner may hold the run
_Cls = TypeVar("_Cls", bound=type)


def default_db_url() -> str:
    """PLANBOARD_DB_URL, or a SQLite file in the PlanBoard home directory."""
    url = os.environ.get("PLANBOARD_DB_URL", "").strip()
    if url:
        return url
    from core.home import planboard_home

    return f"sqlite:///{planboard_home() / 'planboard.db'}"


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


def store_failure(url: sa.URL | str, exc: BaseException) -> str:
    """The one-line StoreError message for a database failure (never with the URL's password)."""
    safe = sa.make_url(url) if isinstance(url, str) else url
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    text = reason[0] if reason else type(exc).__name__
    if safe.password:
        text = text.replace(str(safe.password), "***")
    return (f"the run store at {safe.render_as_string(hide_password=True)} failed: {text}; "
            "check PLANBOARD_DB_URL, disk space and that no other program locks the database")


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: RunStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(store_failure(self.engine.url, exc)) from exc
    return wrapper


def _guard_public_methods(cls: _Cls) -> _Cls:
    """Turn SQLAlchemy errors of every public method into a one-line StoreError."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and callable(member):
            setattr(cls, name, _guarded(member))
    return cls


@_guard_public_methods
class RunStore:
    """Persistence of runs; safe to share between threads and processes over one database.

    Every public method reports a database failure as a one-line :class:`StoreError`.
    """

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_db_url()
        self.engine = _make_engine(self.url)
        try:
            migrate(self.engine)
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(store_failure(self.engine.url, exc)) from exc

    def close(self) -> None:
        """Release the database connections."""
        self.engine.dispose()

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
    ) -> str:
        """Record a new run (and its plan as version ``plan.version``); return its id."""
        run_id = run_id or uuid.uuid4().hex[:12]
        at = utc_now()
        with self.engine.begin() as conn:
            conn.execute(runs.insert().values(
                id=run_id, request=request, settings=scrub_settings(settings or {}),
                options=options or {}, status=status, answer=None,
                usage=(usage or Usage()).model_dump(),
                created_at=at, updated_at=at, owner_pid=os.getpid(),
                owner_host=socket.gethostname(), heartbeat_at=at, event_seq=0,
            ))
            if plan is not None:
                upsert_plan(conn, run_id, plan, "initial plan", at)
        return run_id

    def get_run(self, run_id: str) -> RunRecord:
        """The run with its latest plan; RunNotFoundError when there is none."""
        with self.engine.connect() as conn:
            row = conn.execute(runs.select().where(runs.c.id == run_id)).mappings().first()
            if row is None:
                raise RunNotFoundError(
                    f"no run {run_id!r}; list the runs with: python -m core runs"
                )
            latest = conn.execute(
                sa.select(plan_versions.c.plan).where(plan_versions.c.run_id == run_id)
                .order_by(plan_versions.c.version.desc()).limit(1)
            ).scalar()
            count = conn.execute(
                sa.select(sa.func.count()).select_from(plan_versions)
                .where(plan_versions.c.run_id == run_id)
            ).scalar_one()
        return record_from_row(row, Plan.model_validate(latest) if latest else None, count)

    def list_runs(self, status: str | None = None, limit: int = 100) -> list[RunRecord]:
        """Runs newest first (without their plans), optionally only those in ``status``."""
        query = runs.select().order_by(runs.c.created_at.desc(), runs.c.id).limit(limit)
        if status is not None:
            query = query.where(runs.c.status == status)
        with self.engine.connect() as conn:
            return [record_from_row(row, None, 0) for row in conn.execute(query).mappings()]

    def set_status(
        self, run_id: str, status: RunStatus, *, event: RunEvent | None = None,
        owner: bool | None = None, reopen: bool = False,
    ) -> None:
        """Change the status (and append ``event`` in the same transaction).

        ``owner=True`` records this process as the owner, ``owner=False`` clears it. A
        finished run (completed, failed, cancelled) keeps its status (StoreError) unless
        ``reopen=True``; runs are restarted through :meth:`claim_run` instead.
        """
        if status not in STATUSES:
            raise StoreError(f"unknown run status {status!r}; use one of {sorted(STATUSES)}")
        at = utc_now()
        values: dict[str, Any] = {"status": status, "updated_at": at}
        values["finished_at"] = at if status in TERMINAL_STATUSES else None
        if owner is True:
            values.update(owner_pid=os.getpid(), owner_host=socket.gethostname(), heartbeat_at=at)
        elif owner is False:
            values.update(owner_pid=None, owner_host=None)
        with self.engine.begin() as conn:
            query = runs.update().where(runs.c.id == run_id)
            if not reopen:
                query = query.where(runs.c.status.not_in(sorted(TERMINAL_STATUSES - {status})))
            if not conn.execute(query.values(**values)).rowcount:
                current = self._status(conn, run_id)
                raise StoreError(f"run {run_id} is already {current} and cannot become {status}; "
                                 "ask a follow-up or start a new run")
            if event is not None:
                insert_event(conn, run_id, event)

    def finish_run(self, run_id: str, status: RunStatus, *, answer: str | None, usage: Usage,
                   plans: list[Plan]) -> None:
        """Record how a run stopped: plan snapshots, answer, usage, status, in one transaction.

        The owner is cleared: nobody executes the run any more.
        """
        at = utc_now()
        with self.engine.begin() as conn:
            update_run(conn, run_id, status=status, answer=answer, usage=usage.model_dump(),
                       updated_at=at, owner_pid=None, owner_host=None,
                       finished_at=at if status in TERMINAL_STATUSES else None)
            for plan in plans:
                upsert_plan(conn, run_id, plan, None, at)

    def set_answer(self, run_id: str, answer: str | None) -> None:
        """Record the final answer."""
        with self.engine.begin() as conn:
            update_run(conn, run_id, answer=answer, updated_at=utc_now())

    def set_usage(self, run_id: str, usage: Usage) -> None:
        """Record the run's total usage."""
        with self.engine.begin() as conn:
            update_run(conn, run_id, usage=usage.model_dump(), updated_at=utc_now())

    def set_options(self, run_id: str, options: dict[str, Any]) -> None:
        """Record the run options used (max_parallel, confirm_side_effects, ...)."""
        with self.engine.begin() as conn:
            update_run(conn, run_id, options=options, updated_at=utc_now())

    # ---- plan versions --------------------------------------------------------------

    def save_plan_version(self, run_id: str, plan: Plan, reason: str | None = None) -> int:
        """Store ``plan`` as version ``plan.version`` (replacing that version's snapshot)."""
        with self.engine.begin() as conn:
            update_run(conn, run_id, updated_at=utc_now())
            upsert_plan(conn, run_id, plan, reason, utc_now())
        return plan.version

    def latest_plan(self, run_id: str) -> Plan | None:
        """The newest plan version of the run, if it has one."""
        return self.get_run(run_id).plan

    def plan_versions(self, run_id: str) -> list[PlanVersion]:
        """Every plan version of the run, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                plan_versions.select().where(plan_versions.c.run_id == run_id)
                .order_by(plan_versions.c.version)
            ).mappings().all()
        return [
            PlanVersion(version=r["version"], plan=Plan.model_validate(r["plan"]),
                        reason=r["reason"], created_at=as_utc(r["created_at"]))
            for r in rows
        ]

    # ---- events ---------------------------------------------------------------------

    def append_event(self, run_id: str, event: RunEvent) -> int:
        """Append ``event`` to the run's log; return its sequence number (1, 2, 3, ...)."""
        with self.engine.begin() as conn:
            return insert_event(conn, run_id, event)

    def record_step(self, run_id: str, event: RunEvent, plan: Plan, *,
                    reason: str | None = None, previous: Plan | None = None) -> int:
        """Append ``event`` and store the plan snapshot (with ``reason``) in one transaction.

        ``previous``: the version ``plan`` replaced, stored too (its retired steps skipped).
        """
        at = utc_now()
        with self.engine.begin() as conn:
            seq = insert_event(conn, run_id, event)
            if previous is not None:
                upsert_plan(conn, run_id, previous, None, at)
            upsert_plan(conn, run_id, plan, reason, at)
        return seq

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
                        at=as_utc(r["at"]))
            for r in rows
        ]

    # ---- control, ownership, crash detection ----------------------------------------

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
        options: dict[str, Any] | None = None,
    ) -> None:
        """Atomically make this process the owner of a run in ``allowed`` and set it running.

        The run must have no owner, be owned by this process, or have an owner that is gone
        (dead pid here, stale heartbeat elsewhere); of two processes claiming at once, one
        wins and the other gets a StoreError. Control requests meant for an earlier owner
        are dropped. ``plan`` (stored with ``reason``), ``events`` and ``options`` are
        written in the same transaction.
        """
        record = self.get_run(run_id)
        at = utc_now()
        with self.engine.begin() as conn:
            self._take(conn, record, allowed, stale_after_s, verb="run", values=dict(
                status="running", owner_pid=os.getpid(), owner_host=socket.gethostname(),
                heartbeat_at=at, finished_at=None))
            if options is not None:
                update_run(conn, run_id, options=options)
            if plan is not None:
                upsert_plan(conn, run_id, plan, reason, at)
            for event in events:
                insert_event(conn, run_id, event)

    def cancel_unowned(self, run_id: str, *, reason: str,
                       stale_after_s: float = 30.0) -> RunRecord:
        """Cancel a run no process executes: its unfinished steps end skipped, at once.

        The status, the plan snapshot (pending and orphaned running steps skipped as
        "cancelled by a person") and a ``cancelled`` event are one transaction, taken with
        the same conditions as :meth:`claim_run` (StoreError when a live process owns it).
        """
        record = self.get_run(run_id)
        at = utc_now()
        with self.engine.begin() as conn:
            self._take(conn, record, set(STATUSES) - TERMINAL_STATUSES, stale_after_s,
                       verb="cancel", values=dict(status="cancelled", owner_pid=None,
                                                  owner_host=None, finished_at=at))
            latest = conn.execute(
                sa.select(plan_versions.c.plan).where(plan_versions.c.run_id == run_id)
                .order_by(plan_versions.c.version.desc()).limit(1)).scalar()
            plan = Plan.model_validate(latest) if latest else None
            skipped = []
            for step in plan.steps if plan is not None else []:
                if step.status in {"pending", "running"}:
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
              stale_after_s: float, *, verb: str, values: dict[str, Any]) -> None:
        """The conditional update behind claim_run / cancel_unowned (StoreError if refused)."""
        free = [runs.c.owner_pid.is_(None),
                (runs.c.owner_pid == os.getpid()) & (runs.c.owner_host == socket.gethostname())]
        if record.owner_pid is not None and not owner_alive(record, stale_after_s):
            # the owner seen gone: succeed only if nobody took the run over since
            free.append((runs.c.owner_pid == record.owner_pid)
                        & (runs.c.owner_host == record.owner_host))
        done = conn.execute(runs.update().where(
            runs.c.id == record.run_id, runs.c.status.in_(sorted(allowed)), sa.or_(*free),
        ).values(**values, updated_at=utc_now(), control_request=None, control_at=None))
        if done.rowcount:
            return
        current = self._status(conn, record.run_id)
        if current in allowed or current in ACTIVE_STATUSES:
            raise StoreError(f"run {record.run_id} is already being run by another process; "
                             "wait for it, or steer it with pause/cancel")
        raise StoreError(f"cannot {verb} run {record.run_id}: it is {current} "
                         f"(it must be {' or '.join(sorted(allowed))})")

    @staticmethod
    def _status(conn: sa.Connection, run_id: str) -> str:
        current = conn.execute(sa.select(runs.c.status).where(runs.c.id == run_id)).scalar()
        if current is None:
            raise RunNotFoundError(f"no run {run_id!r}; list the runs with: python -m core runs")
        return current

    def find_stale_running(
        self, stale_after_s: float = 30.0, *, live_here: set[str] | None = None
    ) -> list[RunRecord]:
        """Active runs whose owner is gone: pid dead on this host, or heartbeat too old.

        With ``live_here`` (the runs this process is executing), runs owned by this very
        process but not in the set also count as gone.
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
        so two processes recovering at the same time record the crash only once.
        """
        at = utc_now()
        with self.engine.begin() as conn:
            changed = conn.execute(runs.update().where(
                runs.c.id == record.run_id, runs.c.status == record.status,
                runs.c.owner_pid == record.owner_pid,
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
        query = runs.select().where(runs.c.status.in_(_HELD))
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [record_from_row(r, None, 0) for r in rows if r["owner_pid"] is not None]


# ---- opening the database ----------------------------------------------------------------

def _make_engine(url: str) -> sa.Engine:
    try:
        engine = sa.create_engine(url)
    except (sa.exc.ArgumentError, ImportError) as exc:
        raise StoreError(f"bad database URL in PLANBOARD_DB_URL: {exc}; fix or unset it") from exc
    if engine.dialect.name == "sqlite":
        sa.event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout = 30000")
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()
