"""Database failures reach the user as one-line StoreErrors that never show credentials."""

from __future__ import annotations

import logging
import re
import socket

import pytest
import sqlalchemy as sa

from core.errors import StoreError
from core.execution.events import RunEvent
from core.store.run_store import RunStore, store_failure
from tests.support.pg import on_both_backends
from tests.support.stored_runs import stopped_run, three_calcs

PASSWORD = "s3cret-pw"


@on_both_backends
def test_database_failures_become_store_errors(store):
    run_id = stopped_run(store, "paused")
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE events"))
    for call in (lambda: store.events(run_id), lambda: store.append_event(
            run_id, RunEvent(kind="paused")), lambda: store.record_step(
            run_id, RunEvent(kind="paused"), three_calcs())):
        with pytest.raises(StoreError, match="check PLANBOARD_DB_URL") as info:
            call()
        assert "\n" not in str(info.value)
        assert re.search(r'no such table|relation "events" does not exist', str(info.value))


def test_store_failure_never_shows_the_password():
    exc = sa.exc.OperationalError("SELECT 1", {}, Exception(
        f'password "{PASSWORD}" rejected for user "bob"\nsecond line'))
    text = store_failure(f"postgresql+psycopg://bob:{PASSWORD}@db.example/planboard", exc)
    assert PASSWORD not in text and "\n" not in text
    assert "postgresql://bob:***@db.example/planboard" in text  # as the user wrote it
    assert text.endswith("check PLANBOARD_DB_URL (host, port, user, password, database) and "
                         "that the PostgreSQL server is running and accepts connections from "
                         "this machine")
    sqlite = store_failure("sqlite:///x.db", sa.exc.OperationalError("", {}, Exception("full")))
    assert sqlite.endswith("failed: full; check PLANBOARD_DB_URL, disk space and that no other "
                           "program locks the database")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens there once the probe is closed


def _open_fails(url: str, caplog: pytest.LogCaptureFixture) -> str:
    """The StoreError message of opening ``url``; nothing logged may show the password."""
    with caplog.at_level(logging.DEBUG), pytest.raises(StoreError) as info:
        RunStore(url)
    text = str(info.value)
    assert "\n" not in text and PASSWORD not in text
    assert PASSWORD not in caplog.text
    return text


def test_an_unreachable_postgresql_is_a_one_line_store_error(caplog):
    text = _open_fails(f"postgresql://bob:{PASSWORD}@127.0.0.1:{_closed_port()}/planboard",
                       caplog)
    assert "Connection refused" in text
    assert "the PostgreSQL server is running" in text


def test_a_missing_postgresql_database_is_named(postgres_cluster, caplog):
    url = postgres_cluster.url("no_such_db").replace("planboard@", f"planboard:{PASSWORD}@")
    text = _open_fails(url, caplog)
    assert 'database "no_such_db" does not exist' in text
    assert f"planboard:***@127.0.0.1:{postgres_cluster.port}/no_such_db" in text


@pytest.mark.parametrize(("url", "says"), [
    (f"postgresql+psycopg2://bob:{PASSWORD}@db.example/planboard", "No module named 'psycopg2'"),
    (f"mysql://bob:{PASSWORD}@db.example/planboard", "No module named 'MySQLdb'"),
    (f"postgresql://bob:{PASSWORD}@db.example:port/planboard", "not a database URL"),
    (f"bob:{PASSWORD}@db.example", "not a database URL"),
])
def test_a_wrong_url_is_a_store_error_without_the_password(url, says, caplog):
    text = _open_fails(url, caplog)
    assert says in text and "PLANBOARD_DB_URL" in text
