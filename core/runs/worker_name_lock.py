"""A worker's exclusive hold on its name: one live worker per name and system database.

Two live workers under one executor id recover each other's running workflows and run a
step twice at once, and DBOS cannot tell whether an executor is alive: it recovers the
pending workflows of whatever launches under their executor id (docs/DBOS.md).
``python -m core worker`` therefore holds its name before DBOS launches and keeps it for
the life of the process; the operating system or PostgreSQL drops the hold however the
process ends, SIGKILL included. On PostgreSQL the
hold is a session-level advisory lock on a connection kept open for it; on SQLite (the
workers of one machine) an ``flock`` on ``workers/<name>.lock`` beside ``dbos.sqlite``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from core.base.messages import msg
from core.errors import ConfigError
from core.store.database import make_engine

__all__ = ["hold_worker_name"]

_SAFE_FILE_NAME = re.compile(r"[A-Za-z0-9._-]+")
_held: dict[tuple[str, str], Any] = {}  # what keeps each hold alive: a connection, a file
_lock = threading.Lock()


def hold_worker_name(name: str, system_database_url: str) -> None:
    """Hold worker name ``name`` on that system database until this process ends;
    ConfigError when a live worker holds it already (a held name is kept: no-op)."""
    key = (system_database_url, name)
    with _lock:
        if key in _held:
            return
        if system_database_url.startswith("sqlite"):
            holder = _hold_file(Path(sa.make_url(system_database_url).database or ""), name)
        else:
            holder = _hold_advisory_lock(system_database_url, name)
        if holder is None:
            raise ConfigError(msg("run.worker_name_taken", name=name))
        _held[key] = holder


def _lock_key(name: str) -> int:
    """The advisory lock key of worker ``name``: a stable signed 64-bit hash."""
    digest = hashlib.blake2b(f"planboard-worker:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _hold_advisory_lock(url: str, name: str) -> sa.Connection | None:
    """The connection holding the name's advisory lock, None when another session holds it.

    Autocommit: the session holds the lock, and no transaction stays open for hours.
    """
    engine = make_engine(url).execution_options(isolation_level="AUTOCOMMIT")
    try:
        connection = engine.connect()
        if connection.execute(sa.text("SELECT pg_try_advisory_lock(:key)"),
                              {"key": _lock_key(name)}).scalar_one():
            return connection
        connection.close()
    except BaseException:
        engine.dispose()
        raise
    engine.dispose()
    return None


def _hold_file(database: Path, name: str) -> int | None:
    """The open lock file of the name, flocked; None when another process holds it."""
    folder = database.parent / "workers"
    folder.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(folder / f"{_file_name(name)}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    return descriptor


def _file_name(name: str) -> str:
    """The name itself when it is safe in a file name, else a safe form plus its hash
    (two names never share a file)."""
    if _SAFE_FILE_NAME.fullmatch(name) and not name.startswith("."):
        return name
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', name).lstrip('.')}-{_lock_key(name) & 0xFFFFFFFF:08x}"
