"""A throwaway PostgreSQL for the tests: one cluster per session, one database per test, empty
but for the engine's (DBOS's) tables, migrated once per session.

A pytest plugin (registered in tests/conftest.py). The cluster starts the first time a test
asks for ``postgres_url``, so sessions without a PostgreSQL test pay nothing, and it is
stopped when the session ends, however it ends (a guard process stops it even when pytest
is killed). ``on_both_backends`` runs a test once on SQLite and once on PostgreSQL.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from core.store.database import default_db_url, engine_url

__all__ = [
    "PostgresCluster",
    "db_url",
    "on_both_backends",
    "pg_binaries",
    "postgres_cluster",
    "postgres_url",
    "running_cluster",
]

USER = "planboard"
_UNPRIVILEGED = "nobody"  # PostgreSQL refuses to run as root
# durability buys nothing in a cluster that lives for one session
_FAST_SETTINGS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
# every test database is a copy of this one, where DBOS made its schema once
_TEMPLATE = "planboard_template"
_ENGINE_SCHEMA = "dbos"
_ENGINE_MIGRATIONS = "dbos_migrations"  # kept when a database is emptied: DBOS reads it

on_both_backends = pytest.mark.usefixtures("db_url")
"""Mark: run the test on SQLite and on PostgreSQL (``PLANBOARD_DB_URL`` names the latter)."""


def pg_binaries() -> Path | None:
    """The bin folder of the newest PostgreSQL installed the Debian way, if any."""
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")
             if Path(p).with_name("initdb").exists()]
    return max(found, key=lambda p: int(p.parent.name), default=None)


class PostgresCluster:
    """A running cluster on 127.0.0.1 with trust authentication for the user ``planboard``."""

    def __init__(self, binaries: Path, root: Path, as_user: list[str]) -> None:
        self.binaries, self.root, self.as_user = binaries, root, as_user
        self.data = root / "data"
        self.port = 0
        self._names = itertools.count(1)
        self._admin: psycopg.Connection | None = None
        self._emptied: list[str] = []
        self._guard: subprocess.Popen | None = None
        self._template_made = False

    def url(self, database: str) -> str:
        """A plain ``postgresql://`` URL, as a user would write it."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def init(self) -> None:
        self._pg("initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8",
                 "--no-locale", "--no-sync")

    def start(self) -> None:
        """Start on a free port (another one if the port was taken meanwhile)."""
        for attempt in range(3):
            self.port = _free_port()
            started = self._ctl("start", check=False)
            if started.returncode == 0:
                return
            if attempt == 2:
                log = (self.root / "server.log").read_text(errors="replace")[-2000:]
                pytest.fail(f"PostgreSQL did not start:\n{started.stderr}\n{log}")

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session is ended, and the server is back on the
        same port once this returns (the fault tests' database blip)."""
        self._forget_admin()
        self._ctl("restart", "-m", "fast")

    def stop_now(self) -> None:
        """``pg_ctl stop -m immediate``: every connection drops at once (start it again
        with :meth:`start_again`)."""
        self._forget_admin()
        self._ctl("stop", "-m", "immediate")

    def start_again(self) -> None:
        """Start the stopped server on its port."""
        self._ctl("start")

    def _ctl(self, action: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                   + _FAST_SETTINGS)
        return self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
                        "-o", options, "-w", action, *args, check=check)

    def _forget_admin(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def guard(self) -> None:
        """Start the process that stops the cluster and removes its folder when pytest ends.

        It waits for the end of its stdin, which only this process holds open: pytest
        closes it in :meth:`stop`, or its death does, so even a killed session leaves no
        server behind. Its own session keeps a Ctrl-C in the terminal from killing it first.
        """
        stop = [*self.as_user, str(self.binaries / "pg_ctl"), "-D", str(self.data),
                "-m", "immediate", "stop"]
        script = 'cat >/dev/null; root=$1; shift; "$@" >/dev/null 2>&1; rm -rf "$root"'
        self._guard = subprocess.Popen(["sh", "-c", script, "pg-guard", str(self.root), *stop],
                                       stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)

    def stop(self) -> None:
        """Stop the server and remove its folder (through the guard)."""
        if self._admin is not None:
            self._admin.close()
        if self._guard is not None:
            self._guard.stdin.close()
            self._guard.wait(60)

    def create_database(self) -> str:
        """A database with DBOS's tables and nothing else (new, or one a finished test left
        and :meth:`release` emptied).

        DBOS's tables are migrated once, in the template every database is copied from: a
        launch on a database without them spends about a second of the server's time (four
        on a loaded machine) making them, in every test that runs on PostgreSQL.
        """
        if self._emptied:
            return self._emptied.pop()
        if not self._template_made:
            self._make_template()
        name = f"test_{next(self._names)}"
        self._admin_connection().execute(
            f"CREATE DATABASE {name} TEMPLATE {_TEMPLATE} STRATEGY FILE_COPY")
        return name

    def _make_template(self) -> None:
        from dbos import DBOS  # here: bench/ starts clusters too, and needs no DBOS

        self._admin_connection().execute(f"CREATE DATABASE {_TEMPLATE}")
        DBOS.migrate(engine_url(self.url(_TEMPLATE)).render_as_string(hide_password=False))
        self._template_made = True

    def release(self, name: str) -> None:
        """Empty ``name`` for the next test: 20 ms, where a new database takes half a second.

        Its connections are ended, then every schema but DBOS's (public, ...) is dropped and
        public made again as initdb makes it, and DBOS's tables are emptied, but for the
        record of its migrations. When that fails the database is dropped.
        """
        admin = self._admin_connection()
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE datname = %s AND pid <> pg_backend_pid()", [name])
        try:
            with psycopg.connect(self.url(name), autocommit=True) as conn:
                _empty(conn)
        except psycopg.Error:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        else:
            self._emptied.append(name)

    def _admin_connection(self) -> psycopg.Connection:
        if self._admin is None:
            self._admin = psycopg.connect(self.url("postgres"), autocommit=True)
        return self._admin

    def _pg(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([*self.as_user, str(self.binaries / program), *args],
                              cwd=self.root, capture_output=True, text=True, timeout=120)
        if check and done.returncode:
            pytest.fail(f"{program} failed: {done.stderr.strip() or done.stdout.strip()}")
        return done


def _empty(conn: psycopg.Connection) -> None:
    """What a test left in its database, removed: a copy of the template again."""
    schemas = conn.execute(
        "SELECT nspname FROM pg_namespace WHERE nspname NOT IN ('information_schema', %s) "
        "AND nspname NOT LIKE 'pg\\_%%'", [_ENGINE_SCHEMA]).fetchall()
    for (schema,) in schemas:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    conn.execute("CREATE SCHEMA public AUTHORIZATION pg_database_owner; "
                 "GRANT USAGE ON SCHEMA public TO PUBLIC")
    tables = [row[0] for row in conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename <> %s",
        [_ENGINE_SCHEMA, _ENGINE_MIGRATIONS])]
    if tables:
        listed = ", ".join(f'{_ENGINE_SCHEMA}."{table}"' for table in tables)
        conn.execute(f"TRUNCATE {listed} RESTART IDENTITY CASCADE")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _unprivileged(root: Path) -> list[str]:
    """The command prefix that runs PostgreSQL's programs as a user allowed to (and owning root)."""
    if os.geteuid() != 0:
        return []
    user = pwd.getpwnam(_UNPRIVILEGED)
    os.chown(root, user.pw_uid, user.pw_gid)
    return ["runuser", "-u", _UNPRIVILEGED, "--"]


@contextmanager
def running_cluster(binaries: Path) -> Iterator[PostgresCluster]:
    """A cluster started in a new folder, stopped and removed on exit (also used by bench/).

    A failure to start it is reported through ``pytest.fail`` (``pytest.fail.Exception``).
    """
    # under /tmp, not pytest's tmp folder: the unprivileged user must be able to reach it
    root = Path(tempfile.mkdtemp(prefix="planboard-pg-", dir="/tmp"))
    cluster = PostgresCluster(binaries, root, _unprivileged(root))
    cluster.guard()
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A throwaway cluster for the whole session (started on first use, about 4 s)."""
    binaries = pg_binaries()
    if binaries is None:
        pytest.skip("PostgreSQL is not installed: apt-get install postgresql "
                    "(scripts/test.sh does it)")
    with running_cluster(binaries) as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """The URL of an empty PostgreSQL database for one test; emptied afterwards for the next."""
    name = postgres_cluster.create_database()
    try:
        yield postgres_cluster.url(name)
    finally:
        postgres_cluster.release(name)


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The store's URL on each backend: the default SQLite file, then PostgreSQL.

    The PostgreSQL variant sets ``PLANBOARD_DB_URL``, so ``RunStore()`` (and the ``store``
    fixture) open that database.
    """
    if request.param == "sqlite":
        return default_db_url()
    url = request.getfixturevalue("postgres_url")
    monkeypatch.setenv("PLANBOARD_DB_URL", url)
    return url
