"""Opening the store's database (SQLite or PostgreSQL), riding out its blips, and reporting
its failures in one line.

``PLANBOARD_DB_URL`` picks the database; without it the store is a SQLite file in the
PlanBoard home, in WAL mode with a busy timeout. A plain ``postgresql://`` URL uses the
installed psycopg 3 driver, and every PostgreSQL session speaks UTC.

A database that is away for a moment (PostgreSQL restarting, a dropped connection, a
SQLite file locked past its busy timeout) is not an error: :func:`ride_out` calls again
with a growing pause for up to :data:`RETRY_FOR_S`, as DBOS does its own calls (without
a bound), and the process logs one line when the database goes away and one when it is
back, with the count of retries (:func:`database_away`). A failure that lasts, or is not
such a blip, becomes a one-line :class:`core.errors.StoreError` that says what to check
and never shows the URL's password (:func:`store_failure`, :func:`guard_public_methods`).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa

from core.errors import StoreError

__all__ = [
    "RETRY_FOR_S",
    "database_away",
    "default_db_url",
    "engine_url",
    "guard_public_methods",
    "make_engine",
    "ride_out",
    "said_away",
    "store_failure",
    "transient",
]

logger = logging.getLogger(__name__)

_SQLITE_BUSY_TIMEOUT_S = 30
_CONNECT_TIMEOUT_S = 10  # an unreachable host fails in seconds, not after TCP's minutes
_POSTGRES_DRIVER = "postgresql+psycopg"  # psycopg 3, in requirements.txt (not psycopg2)
_Cls = TypeVar("_Cls", bound=type)
T = TypeVar("T")
RETRY_FOR_S = 30.0  # a blip is ridden out this long (a restart takes about a second)
_FIRST_PAUSE_S, _LONGEST_PAUSE_S = 0.1, 2.0
_PROBE_EVERY_S = 1.0
# what a driver says when the database is away for a moment (psycopg, SQLite, DBOS's logs)
_AWAY = ("connection failed", "server closed the connection", "the database system is",
         "terminating connection", "connection refused", "consuming input failed",
         "could not receive data", "connection is closed", "database is locked")


_DB_FILE = "planboard.db"  # the default store's file in the PlanBoard home


def default_db_url() -> str:
    """PLANBOARD_DB_URL, or a SQLite file in the PlanBoard home directory."""
    url = os.environ.get("PLANBOARD_DB_URL", "").strip()
    if url:
        return url
    from core.base.home import planboard_home

    return f"sqlite:///{planboard_home() / _DB_FILE}"


def default_store_exists() -> bool:
    """False when the default store is a SQLite file not made yet (nothing is in it), without
    making it; True for a configured PLANBOARD_DB_URL, which may hold anything."""
    if os.environ.get("PLANBOARD_DB_URL", "").strip():
        return True
    from core.base.home import home_path

    return (home_path() / _DB_FILE).exists()


def engine_url(url: str | sa.URL) -> sa.URL:
    """``url`` parsed, with ``postgresql://`` (or ``postgres://``) bound to psycopg 3.

    A URL that cannot be parsed is a StoreError that does not repeat it (it may hold a
    password).
    """
    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError) as exc:
        raise StoreError("PLANBOARD_DB_URL is not a database URL; write it like "
                         "sqlite:///path/planboard.db or postgresql://user:password@host:5432/"
                         "database, or unset it") from exc
    if parsed.drivername in ("postgresql", "postgres"):
        return parsed.set(drivername=_POSTGRES_DRIVER)
    return parsed


def make_engine(url: str | sa.URL) -> sa.Engine:
    """An engine for the store at ``url`` (StoreError when the URL or its driver is wrong)."""
    parsed = engine_url(url)
    options: dict[str, Any] = {}
    if parsed.get_backend_name() == "postgresql":
        options.update(pool_pre_ping=True, connect_args=_postgres_connect_args(parsed))
    try:
        engine = sa.create_engine(parsed, **options)
    except (sa.exc.ArgumentError, ImportError, ValueError) as exc:
        shown = parsed.render_as_string(hide_password=True)
        raise StoreError(f"cannot open the database {shown} from PLANBOARD_DB_URL: {exc}; "
                         "use a sqlite:/// or postgresql:// URL, or unset it") from exc
    if engine.dialect.name == "sqlite":
        sa.event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _postgres_connect_args(url: sa.URL) -> dict[str, Any]:
    """A connect timeout unless the URL sets one, and UTC for every session."""
    args: dict[str, Any] = {}
    if "connect_timeout" not in url.query:
        args["connect_timeout"] = _CONNECT_TIMEOUT_S
    # connect_args replace the URL's own options: keep them, then add the time zone
    given = url.query.get("options", "")
    given = " ".join(given) if isinstance(given, tuple) else given
    args["options"] = f"{given} -c TimeZone=UTC".strip()
    return args


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {_SQLITE_BUSY_TIMEOUT_S * 1000}")
    _use_wal(cursor)
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def _use_wal(cursor: Any) -> None:
    """Switch the file to WAL (it stays so), retrying while another connection holds it.

    SQLite answers "database is locked" at once, without its busy timeout, when two
    connections switch a new file at the same moment.
    """
    deadline = time.monotonic() + _SQLITE_BUSY_TIMEOUT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


# ---- failures -------------------------------------------------------------------------------

_SQLITE_HINT = "check PLANBOARD_DB_URL, disk space and that no other program locks the database"
_POSTGRES_HINT = ("check PLANBOARD_DB_URL (host, port, user, password, database) and that the "
                  "PostgreSQL server is running and accepts connections from this machine")


def store_failure(url: sa.URL | str, exc: BaseException) -> str:
    """The one-line StoreError message for a database failure (never with the URL's password)."""
    safe = sa.make_url(url) if isinstance(url, str) else url
    backend = safe.get_backend_name()
    lines = [line.strip() for line in str(getattr(exc, "orig", None) or exc).splitlines()]
    lines = [line for line in lines if line]
    text = lines[0] if lines else type(exc).__name__
    if text.endswith(":") and len(lines) > 1:  # a heading such as "… All failures were:"
        text = f"{text} {lines[1]}"
    if safe.password:
        text = text.replace(str(safe.password), "***")
    shown = safe.set(drivername=backend).render_as_string(hide_password=True)
    hint = _POSTGRES_HINT if backend == "postgresql" else _SQLITE_HINT
    return f"the run store at {shown} failed: {text}; {hint}"


def transient(error: BaseException) -> bool:
    """True when ``error`` says the database is away for a moment (a restart, a dropped
    or refused connection, an exhausted pool, a locked SQLite file): the same call may
    well succeed soon."""
    if isinstance(error, sa.exc.TimeoutError):  # no connection free in the pool
        return True
    if isinstance(error, sa.exc.DBAPIError) and error.connection_invalidated:
        return True
    cause = getattr(error, "orig", None) or error
    # PostgreSQL: connection exception (08), operator intervention (57P: shutting down,
    # starting up)
    if str(getattr(cause, "sqlstate", "") or "").startswith(("08", "57P")):
        return True
    return (isinstance(error, (sa.exc.OperationalError, sqlite3.OperationalError))
            and said_away(str(cause)))


def said_away(text: str) -> bool:
    """True when ``text`` (an error, a log line) says the database is away for a moment."""
    lowered = text.lower()
    return any(marker in lowered for marker in _AWAY)


def ride_out(url: sa.URL | str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(...)`` against the database at ``url``, called again while it fails with a
    :func:`transient` error, for up to :data:`RETRY_FOR_S`; then its error is raised."""
    deadline = time.monotonic() + RETRY_FOR_S
    pause = _FIRST_PAUSE_S
    while True:
        try:
            return call(*args, **kwargs)
        except (sa.exc.SQLAlchemyError, sqlite3.OperationalError) as exc:
            if not transient(exc) or time.monotonic() + pause > deadline:
                raise
            database_away(url, exc)
        time.sleep(pause)
        pause = min(pause * 2, _LONGEST_PAUSE_S)


class _Outage:
    """This process's account of the database being away: one line when it goes, one
    when it is back (a probe connects every second until it can), and the retries made
    in between by the store and by DBOS."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._since: float | None = None
        self._retries = 0

    def away(self, url: sa.URL | str, cause: BaseException | str) -> None:
        with self._lock:
            self._retries += 1
            if self._since is not None:
                return
            self._since = time.monotonic()
        logger.warning("the database %s is away (%s); retrying until it is back",
                       _shown(url), _driver_words(cause))
        threading.Thread(target=self._probe, args=(url,), daemon=True,
                         name="planboard-database-probe").start()

    def _probe(self, url: sa.URL | str) -> None:
        engine = make_engine(url)
        try:
            while True:
                time.sleep(_PROBE_EVERY_S)
                try:
                    with engine.connect() as conn:
                        conn.execute(sa.text("SELECT 1"))
                except sa.exc.SQLAlchemyError:
                    with self._lock:
                        self._retries += 1
                    continue
                break
        finally:
            engine.dispose()
        with self._lock:
            away_s, retries = time.monotonic() - (self._since or 0.0), self._retries
            self._since, self._retries = None, 0
        logger.warning("the database is back after %.1f s (%d retries)", away_s, retries)


_outage = _Outage()


def _shown(url: sa.URL | str) -> str:
    """The URL without its password and driver, as a person writes it."""
    parsed = sa.make_url(url)
    return parsed.set(drivername=parsed.get_backend_name()).render_as_string(
        hide_password=True)


def _driver_words(cause: BaseException | str) -> str:
    """The first line of what the driver said (without DBOS's or SQLAlchemy's preamble)."""
    line = (str(getattr(cause, "orig", None) or cause).strip().splitlines() or [""])[0]
    return re.sub(r"^.*?\((?:\w+\.)*\w+(?:Error|Exception)\)\s*", "", line)


def database_away(url: sa.URL | str, cause: BaseException | str) -> None:
    """Note a failed call to the database at ``url`` that is retried: the first one of an
    outage logs that the database is away, and its return is logged once."""
    _outage.away(url, cause)


_riding = threading.local()  # set while a guarded method runs: the methods it calls retry not


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(_riding, "on", False):  # inside another method, which retries the whole
            return method(self, *args, **kwargs)
        _riding.on = True
        try:
            return ride_out(self.engine.url, method, self, *args, **kwargs)
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(store_failure(self.engine.url, exc)) from exc
        finally:
            _riding.on = False
    return wrapper


def guard_public_methods(cls: _Cls) -> _Cls:
    """Ride out the database's blips in every public method of ``cls`` (:func:`ride_out`,
    the whole method again: each is one transaction, or only reads) and turn its other
    SQLAlchemy errors into a one-line StoreError.

    Only the methods defined on ``cls`` itself are wrapped (decorate each class).
    """
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and callable(member):
            setattr(cls, name, _guarded(member))
    return cls
