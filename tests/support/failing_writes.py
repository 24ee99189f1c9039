"""A store whose writes to one table fail, as the database driver reports it: a blip
(``database is locked``) or a lasting failure (``disk I/O error``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

__all__ = ["failing_inserts"]


@contextmanager
def failing_inserts(engine: sa.Engine, table: str, cause: str, *,
                    times: int | None = None) -> Iterator[list[str]]:
    """While inside, an INSERT into ``table`` through ``engine`` fails with the driver
    saying ``cause``: the first ``times`` of them (None: every one). Yields the failed
    statements."""
    failed: list[str] = []

    def fail(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if not statement.lstrip().upper().startswith(f"INSERT INTO {table.upper()}"):
            return
        if times is None or len(failed) < times:
            failed.append(statement)
            raise sqlite3.OperationalError(cause)

    sa.event.listen(engine, "before_cursor_execute", fail)
    try:
        yield failed
    finally:
        sa.event.remove(engine, "before_cursor_execute", fail)
