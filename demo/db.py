"""Small SQLite helpers shared by the demo toolsets: safe first-use creation and connections."""

from __future__ import annotations

import logging
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["connect", "ensure_database", "remove_database", "transaction"]

logger = logging.getLogger(__name__)
BUSY_TIMEOUT_MS = 15_000


def ensure_database(
    path: Path, build: Callable[[sqlite3.Connection], None], *, wal: bool = True
) -> Path:
    """Create the database at ``path`` with ``build`` unless it exists; safe across processes.

    The database is built in a temporary file next to ``path`` and then hard-linked into
    place: linking fails when another process got there first, so exactly one complete
    database ever appears under the final name and nobody sees a half-built one.
    """
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(handle)
    temp = Path(temp_name)
    try:
        conn = sqlite3.connect(temp)
        try:
            conn.execute("PRAGMA journal_mode=" + ("WAL" if wal else "DELETE"))
            build(conn)
            conn.commit()
        finally:
            conn.close()
        _publish(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    return path


def _publish(temp: Path, path: Path) -> None:
    try:
        os.link(temp, path)
        logger.info("created demo database %s", path)
    except FileExistsError:
        logger.debug("%s was created by another process first", path)
    except OSError:  # a file system without hard links: fall back to a rename
        if not path.exists():
            os.replace(temp, path)


def remove_database(path: Path) -> None:
    """Delete a database file and its WAL/SHM companions, if present."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """Open ``path`` in autocommit mode with a busy timeout (read-only through a file: URI)."""
    if read_only:
        uri = path.resolve().as_uri() + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    else:
        conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn


@contextmanager
def transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """A write transaction taken with BEGIN IMMEDIATE (one writer at a time), then closed."""
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.close()
