"""Opening the store's database (SQLite or PostgreSQL) and reporting its failures in one line.

``PLANBOARD_DB_URL`` picks the database; without it the store is a SQLite file in the
PlanBoard home, in WAL mode with a busy timeout. A plain ``postgresql://`` URL uses the
installed psycopg 3 driver, and every PostgreSQL session speaks UTC. A failure becomes a
one-line :class:`core.errors.StoreError` that says what to check and never shows the
URL's password (:func:`store_failure`, :func:`guard_public_methods`).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa

from core.errors import StoreError

__all__ = [
    "default_db_url",
    "engine_url",
    "guard_public_methods",
    "make_engine",
    "store_failure",
]

_SQLITE_BUSY_TIMEOUT_S = 30
_CONNECT_TIMEOUT_S = 10  # an unreachable host fails in seconds, not after TCP's minutes
_POSTGRES_DRIVER = "postgresql+psycopg"  # psycopg 3, in requirements.txt (not psycopg2)
_Cls = TypeVar("_Cls", bound=type)


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


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(store_failure(self.engine.url, exc)) from exc
    return wrapper


def guard_public_methods(cls: _Cls) -> _Cls:
    """Turn SQLAlchemy errors of every public method of ``cls`` into a one-line StoreError.

    Only the methods defined on ``cls`` itself are wrapped (decorate each class).
    """
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and callable(member):
            setattr(cls, name, _guarded(member))
    return cls
