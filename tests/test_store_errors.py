"""Database failures reach the user as one-line StoreErrors that never show credentials."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from core.errors import StoreError
from core.execution.events import RunEvent
from core.store.run_store import store_failure
from tests.stored_runs import stopped_run, three_calcs


def test_database_failures_become_store_errors(store):
    run_id = stopped_run(store, "paused")
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE events"))
    for call in (lambda: store.events(run_id), lambda: store.append_event(
            run_id, RunEvent(kind="paused")), lambda: store.record_step(
            run_id, RunEvent(kind="paused"), three_calcs())):
        with pytest.raises(StoreError, match="check PLANBOARD_DB_URL, disk space") as info:
            call()
        assert "\n" not in str(info.value) and "no such table" in str(info.value)


def test_store_failure_never_shows_the_password():
    exc = sa.exc.OperationalError("SELECT 1", {}, Exception(
        'password "s3cret-pw" rejected for user "bob"\nsecond line'))
    text = store_failure("postgresql://bob:s3cret-pw@db.example/planboard", exc)
    assert "s3cret-pw" not in text and "\n" not in text
    assert "postgresql://bob:***@db.example/planboard" in text
    assert text.endswith("check PLANBOARD_DB_URL, disk space and that no other program "
                         "locks the database")
