"""core.runs.durable on a real DBOS over SQLite: launch, the runs queue, the client side.

One DBOS serves the whole module (destroying one takes about a second), launched in a
home of its own and shut down when the module ends, so no other test file inherits it.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from dbos import DBOS

from core.base.messages import render
from core.errors import ConfigError
from core.runs import durable
from tests.support.durable_runs import await_workflow

ECHO = "planboard.test.echo"
TWO_CONTROLS = "planboard.test.two_controls"


@DBOS.workflow(name=ECHO)
def echo(text: str) -> str:
    return f"{text}!"


@DBOS.workflow(name=TWO_CONTROLS)
def two_controls() -> list[str]:
    return [DBOS.recv(durable.CONTROL_TOPIC, timeout_seconds=60) for _ in range(2)]


@pytest.fixture(scope="module")
def engine_home(tmp_path_factory) -> Iterator[Path]:
    """The home of the module's DBOS, launched once and shut down at the module's end."""
    home = tmp_path_factory.mktemp("durable-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLANBOARD_HOME", str(home))
        patch.delenv("PLANBOARD_DB_URL", raising=False)
        try:
            durable.launch(durable.embedded_executor_id())
            yield home
        finally:
            durable.shutdown()


@pytest.fixture
def dbos_engine(engine_home, isolated_environment, monkeypatch) -> durable.Launched:
    """This test in the module's home, with its DBOS running there (again, after a test
    that moved it)."""
    monkeypatch.setenv("PLANBOARD_HOME", str(engine_home))
    return durable.launch(durable.embedded_executor_id())




# ---- launch ------------------------------------------------------------------------------

def test_launch_is_idempotent_across_threads(dbos_engine, engine_home):
    found: list[durable.Launched] = []
    threads = [threading.Thread(target=lambda: found.append(durable.launch())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [dbos_engine] * 4
    assert dbos_engine.executor_id == durable.embedded_executor_id()
    assert dbos_engine.database == f"sqlite:///{engine_home / 'dbos.sqlite'}"


def test_the_sqlite_file_is_in_wal_mode(dbos_engine, engine_home):
    connection = sqlite3.connect(engine_home / "dbos.sqlite")
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        connection.close()


def test_a_workflow_enqueued_by_name_runs_under_its_id(dbos_engine):
    durable.enqueue(ECHO, "run-echo-1", "hello")
    assert await_workflow("run-echo-1") == "SUCCESS"
    assert DBOS.retrieve_workflow("run-echo-1").get_result() == "hello!"
    durable.enqueue(ECHO, "run-echo-1", "again")  # the id is taken: it is not queued again
    assert durable.workflow_status("run-echo-1") == "SUCCESS"
    assert DBOS.retrieve_workflow("run-echo-1").get_result() == "hello!"


def test_an_unknown_workflow_has_no_status(dbos_engine):
    assert durable.workflow_status("run-never-started") is None


def test_control_messages_reach_the_workflow_once_per_idempotency_key(dbos_engine):
    durable.enqueue(TWO_CONTROLS, "run-controls-1")
    durable.send_control("run-controls-1", "pause", idempotency_key="run-controls-1:1")
    durable.send_control("run-controls-1", "pause", idempotency_key="run-controls-1:1")
    durable.send_control("run-controls-1", "confirm:s2")
    assert await_workflow("run-controls-1") == "SUCCESS"
    assert DBOS.retrieve_workflow("run-controls-1").get_result() == ["pause", "confirm:s2"]


def test_relaunch_on_another_home_runs_workflows_there(dbos_engine, engine_home, monkeypatch,
                                                      tmp_path, capfd):
    other_home = tmp_path / "other-home"
    monkeypatch.setenv("PLANBOARD_HOME", str(other_home))
    moved = durable.launch("w1")
    assert moved == durable.Launched("w1", f"sqlite:///{other_home / 'dbos.sqlite'}")
    durable.enqueue(ECHO, "run-elsewhere", "there")
    assert await_workflow("run-elsewhere") == "SUCCESS"
    assert DBOS.get_workflow_status("run-elsewhere").executor_id == "w1"
    assert durable.launch() == moved  # no id asked: the running one stays
    monkeypatch.setenv("PLANBOARD_HOME", str(engine_home))
    assert durable.workflow_status("run-elsewhere") is None  # each home has its own runs
    assert "console.dbos.dev" not in capfd.readouterr().err


def test_launch_switches_a_new_file_to_wal_while_another_process_writes_it(
        dbos_engine, monkeypatch, tmp_path):
    home = tmp_path / "racing-home"
    home.mkdir()
    monkeypatch.setenv("PLANBOARD_HOME", str(home))
    writer = sqlite3.connect(home / "dbos.sqlite", isolation_level=None,
                             check_same_thread=False)
    writer.execute("BEGIN")
    writer.execute("CREATE TABLE other_process (x)")  # SQLite refuses WAL at once meanwhile
    committed = threading.Timer(0.3, writer.execute, ("COMMIT",))
    committed.start()
    try:
        assert durable.launch("w-wal").database == f"sqlite:///{home / 'dbos.sqlite'}"
    finally:
        committed.join()
        writer.close()
    reader = sqlite3.connect(home / "dbos.sqlite")
    try:
        assert reader.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        reader.close()


def test_a_failed_launch_leaves_the_tracebacks_to_the_caller(dbos_engine, monkeypatch):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("PLANBOARD_DB_URL", f"postgresql://planboard@127.0.0.1:{port}/runs")
    logged: list[logging.LogRecord] = []
    collector = logging.Handler()
    collector.emit = logged.append
    dbos_log = logging.getLogger("dbos")  # DBOS's own console handler hangs here too
    dbos_log.addHandler(collector)
    try:
        with pytest.raises(sa.exc.OperationalError):
            durable.launch("w-unreachable")
    finally:
        dbos_log.removeHandler(collector)
    assert [record.getMessage() for record in logged] == []
    assert dbos_log.level == logging.WARNING
    assert not durable.is_launched()


def test_dbos_lines_not_about_its_database_being_away_are_logged_as_they_are(dbos_engine):
    """Only DBOS's lines about its database being away become the store's outage lines:
    its other warnings, a database error among them while its record is intact, pass."""
    logged: list[logging.LogRecord] = []
    collector = logging.Handler()
    collector.emit = logged.append
    dbos_log = logging.getLogger("dbos")
    dbos_log.addHandler(collector)
    try:
        dbos_log.warning("queue runs: concurrency lowered")
        dbos_log.warning("a query failed", exc_info=sa.exc.ProgrammingError(
            "SELECT nothing", {}, Exception("syntax error at or near nothing")))
    finally:
        dbos_log.removeHandler(collector)
    assert [record.getMessage() for record in logged] == [
        "queue runs: concurrency lowered", "a query failed"]


def test_a_postgresql_db_url_is_also_the_system_database(monkeypatch, isolated_environment):
    for url in ("postgresql://planboard:secret@127.0.0.1:5432/runs",
                "postgres://planboard:secret@127.0.0.1:5432/runs",  # as the store reads it
                "postgresql+psycopg://planboard:secret@127.0.0.1:5432/runs"):
        monkeypatch.setenv("PLANBOARD_DB_URL", url)
        assert durable.system_database_url() == (
            "postgresql+psycopg://planboard:secret@127.0.0.1:5432/runs")
    monkeypatch.setenv("PLANBOARD_DB_URL", "sqlite:///elsewhere.db")
    assert durable.system_database_url() == f"sqlite:///{isolated_environment / 'dbos.sqlite'}"


def test_a_db_url_of_another_database_is_one_line_when_the_engine_is_needed(monkeypatch):
    monkeypatch.setenv("PLANBOARD_DB_URL", "mysql://planboard:secret@127.0.0.1/runs")
    for needs_the_engine in (durable.system_database_url, durable.launch,
                             lambda: durable.workflow_status("run-1")):
        with pytest.raises(ConfigError) as refused:
            needs_the_engine()
        for language in ("en", "zh"):
            text = render(refused.value, language)
            assert "mysql" in text and "PostgreSQL" in text and "\n" not in text
            assert "secret" not in text


# ---- executor ids ------------------------------------------------------------------------

def test_embedded_and_worker_executor_ids():
    # host, pid and the process's start time (a reused pid is another process)
    host, pid, started = durable.embedded_executor_id().removeprefix("embedded:").split(":")
    assert (host, pid) == (socket.gethostname(), str(os.getpid())) and started.isdigit()
    assert durable.worker_executor_id() == socket.gethostname()
    assert durable.worker_executor_id("w1") == "w1"
    assert durable.worker_executor_id("x" * 64) == "x" * 64


@pytest.mark.parametrize("name", [
    "", "x" * 65, "two words", "tab\there", "line\n", "bell\x07", "embedded:w1",
])
def test_invalid_worker_names_are_refused_in_both_languages(name):
    with pytest.raises(ConfigError) as refused:
        durable.worker_executor_id(name)
    text = str(refused.value)
    assert "\n" not in text
    assert "Invalid worker name" in text and "工作进程名" in text
    assert repr(name) in text
