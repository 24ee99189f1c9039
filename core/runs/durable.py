"""PlanBoard's one door to the DBOS engine: its configuration, launch and client side.

DBOS keeps workflows, their steps and their mailboxes in a system database: the PostgreSQL
of ``PLANBOARD_DB_URL`` (same database as the run store, schema ``dbos``), else the SQLite
file ``dbos.sqlite`` in the PlanBoard home. One DBOS runs per process (:func:`launch`);
the client helpers talk to the system database without launching it, as the dashboard and
``run --detach`` do in workers mode. docs/DBOS.md says why each setting is what it is.

Only the modules that run or steer workflows import this one: importing ``dbos`` costs
about 0.7 s.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, DBOSConfig, SetWorkflowID
from dbos import error as dbos_errors

from core.base.home import planboard_home
from core.base.messages import msg
from core.errors import ConfigError, RecordLostError
from core.runs.executors import (
    embedded_executor_id,
    executor_gone,
    worker_executor_id,
    worker_name,
)
from core.store.database import (
    database_away,
    default_db_url,
    engine_url,
    make_engine,
    ride_out,
    said_away,
    transient,
)

__all__ = [
    "APPLICATION_VERSION",
    "CONTROL_TOPIC",
    "LAUNCH_FAILURES",
    "RUNS_QUEUE",
    "RUN_SLOTS",
    "RUN_WORKFLOW",
    "Launched",
    "cancel_workflow",
    "check_record",
    "embedded_executor_id",
    "enqueue",
    "executor_gone",
    "failure_cause",
    "is_launched",
    "launch",
    "own_queue",
    "record_intact",
    "record_path",
    "resume_on_queue",
    "send_control",
    "shutdown",
    "start_afresh",
    "start_here",
    "system_database_url",
    "take_over_here",
    "unfinished_workflows",
    "worker_executor_id",
    "worker_name",
    "workflow_state",
    "workflow_status",
]

logger = logging.getLogger(__name__)

APP_NAME = "planboard"
# Recovery only takes workflows of the running version. Bump it only when the workflow's
# sequence of steps changes: every unfinished run of the old version is stranded.
# 3: a run may be a plan-less answer, its model and tool calls recorded (a process of
# version 2 would execute such a run as an empty plan); 4: plans with phases, whose
# expansions and done-definition checks are recorded steps (expand:pN:vM, phase_check:pN:vM)
APPLICATION_VERSION = "planboard-runs-4"
RUNS_QUEUE = "planboard_runs"
RUN_WORKFLOW = "planboard.run"  # the name core.runs.workflow registers the run workflow under
CONTROL_TOPIC = "control"
# Runs per process: generous, since a run waiting for a person holds its slot (the work
# itself is limited elsewhere). DBOS keeps one value per queue in the database.
RUN_SLOTS = 64
_QUEUE_POLL_S = 0.2
_SQLITE_LISTENER_POLL_S = 0.1  # the mailbox latency on SQLite (PostgreSQL is notified)


@dataclass(frozen=True)
class Launched:
    """The DBOS running in this process: its executor id and database (no password)."""

    executor_id: str
    database: str


@dataclass(frozen=True)
class _Running:
    launched: Launched
    url: str
    record: tuple[Path, int] | None  # the SQLite file launched on, and its inode


_lock = threading.Lock()
_running: _Running | None = None
_client_of: tuple[str, DBOSClient] | None = None
_blips_of = ""  # the system database whose blips DBOS's log reports
_lost_told = False  # this process said that its SQLite file was lost under it


# ---- configuration -----------------------------------------------------------------------

def system_database_url() -> str:
    """The PostgreSQL of PLANBOARD_DB_URL, read as the store reads it (``postgres://``
    too), else the SQLite file dbos.sqlite in the home. ConfigError for a URL of another
    database: workers could not share it with the store."""
    given = os.environ.get("PLANBOARD_DB_URL", "").strip()
    backend = engine_url(given).get_backend_name() if given else "sqlite"
    if backend == "postgresql":
        return engine_url(given).render_as_string(hide_password=False)
    if backend != "sqlite":
        raise ConfigError(msg("run.unsupported_database", backend=backend))
    return f"sqlite:///{planboard_home() / 'dbos.sqlite'}"


def _is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def _shown(url: str) -> str:
    return sa.make_url(url).render_as_string(hide_password=True)


def _config(url: str, executor_id: str) -> DBOSConfig:
    config: DBOSConfig = {
        "name": APP_NAME,
        "system_database_url": url,
        "application_version": APPLICATION_VERSION,
        "executor_id": executor_id,
        "log_level": "WARNING",  # launch otherwise logs a hosted-console URL
    }
    if _is_sqlite(url):
        config["notification_listener_polling_interval_sec"] = _SQLITE_LISTENER_POLL_S
    return config


def _use_wal(url: str) -> None:
    """WAL on the SQLite file (DBOS leaves the rollback journal, twice as slow per step);
    the setting stays with the file. A store connection switches it: it retries while
    another process writes the new file (SQLite refuses at once, without waiting)."""
    engine = make_engine(url)
    try:
        with engine.connect():
            pass
    finally:
        engine.dispose()


# ---- the engine's record: lost or damaged -------------------------------------------------

def _record_file(url: str) -> Path | None:
    """The SQLite file of the system database (None on PostgreSQL)."""
    return Path(sa.make_url(url).database or "") if _is_sqlite(url) else None


def check_record(url: str) -> None:
    """RecordLostError when the run store holds runs executed as workflows and the engine's
    SQLite file is missing or not one DBOS made: their record is lost (DBOS would make a new
    empty file over it, and every run would look unknown to it)."""
    path = _record_file(url)
    if path is None or not _store_has_workflows():
        return
    problem = msg("run.record_missing")
    if path.exists():
        try:
            with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)) as conn:
                conn.execute("SELECT 1 FROM workflow_status LIMIT 1").fetchall()
            return
        except sqlite3.Error as exc:
            if transient(exc):  # locked by a process writing it: there it is
                return
            problem = msg("run.record_damaged", error=str(exc))
    raise RecordLostError(msg("run.record_lost", path=str(path), problem=problem))


def _store_has_workflows() -> bool:
    """True when the SQLite run store (read-only) names a DBOS workflow for some run."""
    store = Path(engine_url(default_db_url()).database or "")
    if not store.is_file():
        return False
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)) as conn:
            return conn.execute("SELECT 1 FROM runs WHERE workflow_id IS NOT NULL "
                                "LIMIT 1").fetchone() is not None
    except sqlite3.Error:  # no runs table yet
        return False


def _file_identity(url: str) -> tuple[Path, int] | None:
    path = _record_file(url)
    return (path, path.stat().st_ino) if path is not None else None


def record_intact() -> bool:
    """False once the SQLite file this process's DBOS runs on was deleted or replaced
    (DBOS's open connections go on writing the lost file, new ones a new empty one)."""
    running = _running
    if running is None or running.record is None:
        return True
    path, inode = running.record
    try:
        return path.stat().st_ino == inode
    except OSError:
        return False


def record_path() -> str:
    """Where the engine keeps its record: the SQLite file, or the PostgreSQL database."""
    url = system_database_url()
    path = _record_file(url)
    return str(path) if path is not None else _shown(url)


def start_afresh() -> Path | None:
    """A new, empty engine record in place of a lost or damaged SQLite file; return where
    the damaged file was kept (None when it was missing: its leftovers are removed).
    RecordLostError's remedy; a record that is fine is left alone (None)."""
    url = system_database_url()
    path = _record_file(url)
    try:
        check_record(url)
        return None
    except RecordLostError:
        assert path is not None
    kept = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    damaged = path.exists()
    for suffix in ("", "-wal", "-shm"):  # a stale WAL would be read into the new file
        found = path.with_name(path.name + suffix)
        if found.exists() and damaged:
            found.rename(kept.with_name(kept.name + suffix))
        elif found.exists():
            found.unlink()
    _use_wal(url)
    DBOS.migrate(url)
    return kept if damaged else None


# ---- the engine in this process ----------------------------------------------------------

def launch(executor_id: str | None = None) -> Launched:
    """Launch DBOS in this process once and serve the runs queue; thread-safe. The
    workflows a worker of the same name left unfinished when it died go back on their
    queue (DBOS's recovery, at launch), for any live worker.

    Called again, it returns the running engine, unless the system database (another
    PLANBOARD_HOME or PLANBOARD_DB_URL) or the asked executor id changed: then DBOS is
    relaunched. ``executor_id`` None keeps the running id, else this process's embedded
    id.
    """
    global _running
    url = system_database_url()
    with _lock:
        current = _running
        wanted = executor_id
        if wanted is None:
            wanted = current.launched.executor_id if current else embedded_executor_id()
        if current and current.url == url and current.launched.executor_id == wanted:
            return current.launched
        if current:
            _destroy()
        check_record(url)
        if _is_sqlite(url):
            _use_wal(url)
        dbos_log = _quiet_dbos_log(url)
        DBOS(config=_config(url, wanted))
        # a failed launch logs its tracebacks: the caller says what failed in one line
        dbos_log.setLevel(logging.CRITICAL)
        try:
            # every process serves the shared queue; an embedded one also its own, where
            # the runs it takes over wait for it (a process not told which queues to serve
            # serves them all)
            DBOS.listen_queues([RUNS_QUEUE, *([] if worker_name(wanted) else [own_queue(wanted)])])
            # DBOS puts the workflows this executor left pending back on their queue
            DBOS.launch()
            # after launch: the queue's settings live in the system database. An embedded
            # process registers its own queue only when it takes a run over (one row each)
            _register(RUNS_QUEUE)
        except BaseException:
            # else the next DBOS(config=…) silently returns this half-launched one
            DBOS.destroy(destroy_registry=False)
            raise
        finally:
            dbos_log.setLevel(logging.WARNING)  # warnings, but not the console URL
        _running = _Running(Launched(wanted, _shown(url)), url, _file_identity(url))
        return _running.launched


def own_queue(executor_id: str) -> str:
    """The queue only ``executor_id`` serves: a run an embedded process takes over waits
    there for that process (whose caller lent it an engine and a listener)."""
    return f"{RUNS_QUEUE}@{executor_id}"


def _register(queue: str) -> None:
    DBOS.register_queue(queue, worker_concurrency=RUN_SLOTS,
                        polling_interval_sec=_QUEUE_POLL_S)


def take_over_here(workflow_id: str) -> None:
    """Continue an unfinished workflow in this (launched) process, after its last recorded
    step, through this process's own queue. Only for a workflow nobody executes (the
    caller has claimed its run)."""
    if _running is None:
        raise RuntimeError("DBOS is not launched in this process")
    own = own_queue(_running.launched.executor_id)
    _register(own)  # harmless when it is registered already
    _client("resume_workflow", workflow_id, queue_name=own)


LAUNCH_FAILURES = (sa.exc.SQLAlchemyError, sqlite3.Error, dbos_errors.DBOSException, OSError)
"""What :func:`launch` raises when the system database cannot be used."""


def failure_cause(error: BaseException) -> str:
    """The first line of what a database failure says (the driver's words, when wrapped)."""
    return (str(getattr(error, "orig", None) or error) or type(error).__name__).splitlines()[0]


_DELIBERATE_STOPS = {"DBOSWorkflowCancelledError", "DBOSAwaitedWorkflowCancelledError",
                     "RunSuspended"}


def _quiet_dbos_log(url: str) -> logging.Logger:
    """DBOS's logger, its records going where ours go, without what users need not read:
    tracebacks of workflows stopped on purpose, and DBOS's lines (and tracebacks) about its
    database being away, which become the store's two lines about an outage."""
    global _blips_of
    _blips_of = url
    dbos_log = logging.getLogger("dbos")
    if not dbos_log.handlers:
        # else DBOS adds a console handler bound to the stderr of the moment (a closed
        # stream once it is swapped) and stops propagation: its records go where ours go
        dbos_log.addHandler(logging.NullHandler())
        dbos_log.addFilter(_quiet_deliberate_stops)
        dbos_log.addFilter(_quiet_database_trouble)
    return dbos_log


def _quiet_deliberate_stops(record: logging.LogRecord) -> bool:
    """Drop DBOS's tracebacks for workflows PlanBoard stopped on purpose (a person's
    cancel, a closing process): nothing failed, and users see no tracebacks."""
    error = record.exc_info[1] if record.exc_info else None
    return type(error).__name__ not in _DELIBERATE_STOPS


def _quiet_database_trouble(record: logging.LogRecord) -> bool:
    """Count DBOS's record of its database being away as a retry of the outage (DBOS
    retries its own calls), and say once that its SQLite file was lost under it, instead
    of logging each (with SQL and tracebacks)."""
    global _lost_told
    error = record.exc_info[1] if record.exc_info else None
    text = record.getMessage()
    if said_away(text) or (error is not None and transient(error)):
        database_away(_blips_of, text)
        return False
    about_database = (isinstance(error, (sa.exc.SQLAlchemyError, sqlite3.Error))
                      or "sqlite3." in text)
    if record_intact() or not about_database:
        return True
    if not _lost_told:
        _lost_told = True
        logger.warning("%s", msg("run.record_lost_while_running", path=record_path()))
    return False


def is_launched() -> bool:
    """True while DBOS runs in this process (between :func:`launch` and :func:`shutdown`)."""
    return _running is not None


def shutdown() -> None:
    """Stop DBOS in this process and close the client (tests, process exit); harmless
    when nothing runs. Workflows still running resume at the next launch of their id."""
    global _client_of
    with _lock:
        if _running:
            _destroy()
        if _client_of:
            _client_of[1].destroy()
            _client_of = None


def start_here(workflow: Any, workflow_id: str, *args: Any) -> None:
    """Start ``workflow(*args)`` under ``workflow_id`` on this process's DBOS (launched)."""
    with SetWorkflowID(workflow_id):
        DBOS.start_workflow(workflow, *args)


def _destroy() -> None:
    global _running
    DBOS.destroy(destroy_registry=False)  # keep the workflows registered at import
    _running = None


# ---- the client side: no launch needed ---------------------------------------------------

def _dbos_client() -> DBOSClient:
    """A client of the current system database, kept while that database stays the same.
    It raises on a lost connection (DBOS would retry without a bound): :func:`_client`
    rides it out for a while."""
    global _client_of
    url = system_database_url()
    with _lock:
        if _client_of and _client_of[0] != url:
            _client_of[1].destroy()
            _client_of = None
        if _client_of is None:
            check_record(url)
            _quiet_dbos_log(url)
            _client_of = (url, DBOSClient(system_database_url=url, application_name=APP_NAME,
                                          retry_connection_errors=False))
        return _client_of[1]


def _client(call: str, *args: Any, **kwargs: Any) -> Any:
    """``call`` of the DBOS client, its database's blips ridden out as the store's are."""
    return ride_out(system_database_url(),
                    lambda: getattr(_dbos_client(), call)(*args, **kwargs))


def enqueue(workflow_name: str, workflow_id: str, *args: Any) -> None:
    """Put workflow ``workflow_name`` (its ``@DBOS.workflow(name=…)``) on the runs queue
    under ``workflow_id``, for any launched process to run; an id already used is left
    as it is."""
    _client("enqueue", {"queue_name": RUNS_QUEUE, "workflow_name": workflow_name,
                        "workflow_id": workflow_id, "app_version": APPLICATION_VERSION}, *args)


def send_control(run_id: str, action: str, *, idempotency_key: str | None = None) -> None:
    """Leave ``action`` (``pause``, ``confirm:s2``, …) in the mailbox of run ``run_id``;
    the same ``idempotency_key`` delivers it once."""
    _client("send", run_id, action, topic=CONTROL_TOPIC, idempotency_key=idempotency_key)


def workflow_status(run_id: str) -> str | None:
    """The DBOS status of the workflow ``run_id`` (ENQUEUED, PENDING, SUCCESS, ERROR,
    CANCELLED, …), None when there is none."""
    found = workflow_state(run_id)
    return found[0] if found else None


def workflow_state(workflow_id: str) -> tuple[str, str] | None:
    """The DBOS status of the workflow and the executor that last took it (an ENQUEUED
    one: the process whose own queue holds it, empty on the shared queue), None when
    there is no such workflow."""
    found = _client("list_workflows", workflow_ids=[workflow_id], load_input=False,
                    load_output=False)
    if not found:
        return None
    if found[0].status != "ENQUEUED":
        return found[0].status, found[0].executor_id or ""
    queue = found[0].queue_name or ""
    return "ENQUEUED", queue.removeprefix(f"{RUNS_QUEUE}@") if "@" in queue else ""


def cancel_workflow(run_id: str) -> None:
    """Cancel the workflow ``run_id``: no worker starts it, and one running it stops at
    its next step (the result of the step in flight is discarded)."""
    _client("cancel_workflow", run_id)


def unfinished_workflows(executor_id: str) -> list[str]:
    """The ids of the workflows that executor ``executor_id`` took and did not finish
    (PENDING, or ENQUEUED again by its restart), oldest first."""
    found = _client("list_workflows", status=["PENDING", "ENQUEUED"],
                    executor_id=executor_id, load_input=False, load_output=False)
    return [status.workflow_id for status in found]


def resume_on_queue(workflow_id: str) -> None:
    """Put an unfinished workflow back on the runs queue for any live process to take;
    it continues after its last recorded step. DBOS does not check that the executor
    running it is gone (two would then run it at once): the caller has made sure."""
    _client("resume_workflow", workflow_id, queue_name=RUNS_QUEUE)
