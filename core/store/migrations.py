"""Migrations that bring an older run store up to the current schema, never dropping data
that anything reads (a column nothing writes or reads any more goes in a migration of its own).

Each migration is a function applied once, in order, inside one transaction, and recorded
in the ``schema_version`` table. Several processes may open the same database at once:
the first to record a migration applies it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.store.schema import (
    REPLAY_KEY_INDEX,
    VERSION_SOURCES,
    VersionSource,
    events,
    lessons,
    plan_versions,
    runs,
    schema_version,
)

__all__ = ["LATEST_VERSION", "MIGRATIONS", "current_version", "migrate"]

logger = logging.getLogger(__name__)

_TS = sa.DateTime(timezone=True)  # as the tables define it; kept here so v1 stays frozen


def _v1_initial(conn: Connection) -> None:
    """The first schema: runs, plan versions and events, without ownership or control.

    The tables are written out as they were at version 1, not taken from
    :mod:`core.store.schema`: a migration is frozen, and later migrations add to exactly
    this shape whatever the current definitions become."""
    old = sa.MetaData()
    sa.Table(
        "runs", old,
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("request", sa.Text, nullable=False),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("status", sa.String(32), nullable=False, index=True),
        sa.Column("answer", sa.Text),
        sa.Column("usage", sa.JSON, nullable=False),
        sa.Column("created_at", _TS, nullable=False, index=True),
        sa.Column("updated_at", _TS, nullable=False),
        sa.Column("finished_at", _TS),
    )
    sa.Table(
        "plan_versions", old,
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("plan", sa.JSON, nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("created_at", _TS, nullable=False),
    )
    sa.Table(
        "events", old,
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("step_id", sa.String(40)),
        sa.Column("plan_version", sa.Integer, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("at", _TS, nullable=False),
    )
    old.create_all(conn)


def _add_column(conn: Connection, table: sa.Table, name: str) -> None:
    column = table.c[name]
    ddl = column.type.compile(dialect=conn.dialect)
    default = f" DEFAULT {column.server_default.arg}" if column.server_default is not None else ""
    not_null = " NOT NULL" if not column.nullable and default else ""
    conn.execute(sa.text(f"ALTER TABLE {table.name} ADD COLUMN {name} {ddl}{default}{not_null}"))


def _v2_ownership_control_lessons(conn: Connection) -> None:
    """Owner pid/host + heartbeat, control requests, the event counter, options, lessons."""
    for name in (
        "options", "owner_pid", "owner_host", "heartbeat_at", "control_request", "control_at",
        "event_seq",
    ):
        _add_column(conn, runs, name)
    _add_column(conn, plan_versions, "updated_at")
    # existing runs: continue numbering after the events they already have
    conn.execute(
        runs.update().values(
            event_seq=sa.select(sa.func.coalesce(sa.func.max(events.c.seq), 0))
            .where(events.c.run_id == runs.c.id)
            .scalar_subquery()
        )
    )
    lessons.create(conn)


Migration = tuple[int, str, Callable[[Connection], None]]

def _v3_unique_lessons(conn: Connection) -> None:
    """One lesson per text: merge duplicates (keep the oldest), then let the index hold it."""
    rows = conn.execute(sa.select(lessons.c.id, lessons.c.text).order_by(lessons.c.id)).all()
    seen: set[str] = set()
    for lesson_id, text in rows:
        key = " ".join(text.split()).lower()
        if key in seen:
            conn.execute(lessons.delete().where(lessons.c.id == lesson_id))
        seen.add(key)
    conn.execute(sa.text(f"CREATE UNIQUE INDEX {LESSON_TEXT_INDEX} ON lessons (text)"))


def _v4_version_sources(conn: Connection) -> None:
    """What made each plan version, stored with it; old versions get theirs inferred once."""
    _add_column(conn, plan_versions, "source")
    named: dict[tuple[str, int], VersionSource] = {}
    replans = sa.select(events.c.run_id, events.c.plan_version, events.c.data).where(
        events.c.kind == "replanned").order_by(events.c.run_id, events.c.seq)
    for run_id, plan_version, data in conn.execute(replans):
        data = data or {}
        if data.get("source") in VERSION_SOURCES:
            named[(run_id, int(data.get("to_version") or plan_version))] = data["source"]
    rows = conn.execute(sa.select(plan_versions.c.run_id, plan_versions.c.version,
                                  plan_versions.c.reason)).all()
    for run_id, version, reason in rows:
        source = named.get((run_id, version)) or _legacy_source(version, reason or "")
        conn.execute(plan_versions.update().where(
            (plan_versions.c.run_id == run_id) & (plan_versions.c.version == version)
        ).values(source=source))


def _legacy_source(version: int, reason: str) -> VersionSource:
    """A version without a replanned event: guessed from its reason, as the dashboard did."""
    if version == 1:
        return "draft"
    if reason.lower().startswith("follow-up"):
        return "follow-up"
    if "edit" in reason.lower() or "编辑" in reason:
        return "manual"
    return "failure"


def _v5_workflows_and_replay_keys(conn: Connection) -> None:
    """The DBOS workflow executing a run, and replay keys that make event writes idempotent.

    Existing runs and events get NULL for both (in-process runs; events written once).
    NULL keys never collide: both SQLite and PostgreSQL treat NULLs as distinct in a unique
    index.
    """
    _add_column(conn, runs, "workflow_id")
    _add_column(conn, events, "replay_key")
    conn.execute(sa.text(
        f"CREATE UNIQUE INDEX {REPLAY_KEY_INDEX} ON events (run_id, replay_key)"))


def _v6_runs_on_dbos(conn: Connection) -> None:
    """Runs execute as DBOS workflows: the in-process owner, heartbeat and control request
    are cleared, and a run an older version left unfinished without a workflow is recorded
    as interrupted (its process is gone with the upgrade), to be resumed as a workflow."""
    conn.execute(runs.update().values(owner_pid=None, owner_host=None, heartbeat_at=None,
                                      control_request=None, control_at=None))
    conn.execute(runs.update().where(
        runs.c.workflow_id.is_(None),
        runs.c.status.in_(["running", "waiting_confirmation", "paused"]),
    ).values(status="interrupted"))


def _v7_claim_times(conn: Connection) -> None:
    """When a run was last claimed: its claimer starts its workflow a moment later (the
    column written out as it was: migration 11 took it out of the schema)."""
    conn.execute(sa.text(f"ALTER TABLE runs ADD COLUMN claimed_at {_TS.compile(conn.dialect)}"))


def _v8_plan_templates(conn: Connection) -> None:
    """Plan templates: plans saved for reuse, with who saved them and when (the table
    written out as it is at version 8, like v1's)."""
    old = sa.MetaData()
    sa.Table(
        "plan_templates", old,
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("request", sa.Text, nullable=False),
        sa.Column("plan", sa.JSON, nullable=False),
        sa.Column("parameters", sa.JSON, nullable=False),
        sa.Column("source_run", sa.String(40)),
        sa.Column("saved_by", sa.String(255), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
    )
    old.create_all(conn)


def _v9_step_states(conn: Connection) -> None:
    """Step states written between two snapshots of a plan version (one step per event;
    the table written out as it is at version 9, like v1's)."""
    old = sa.MetaData()
    sa.Table("runs", old, sa.Column("id", sa.String(40), primary_key=True))  # for the key
    added = sa.Table(
        "step_states", old,
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("step_id", sa.String(255), primary_key=True),
        sa.Column("state", sa.JSON, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
    )
    old.create_all(conn, tables=[added])


def _v10_audit_and_roles(conn: Connection) -> None:
    """Who did what, and the roles an admin gave (the tables written out as they are at
    version 10, like v1's)."""
    old = sa.MetaData()
    added = [
        sa.Table(
            "audit_log", old,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("at", _TS, nullable=False, index=True),
            sa.Column("person", sa.String(255), nullable=False, index=True),
            sa.Column("via", sa.String(16), nullable=False),
            sa.Column("action", sa.String(32), nullable=False),
            sa.Column("run_id", sa.String(40), index=True),
            sa.Column("version", sa.Integer),
            sa.Column("step_id", sa.String(255)),
            sa.Column("detail", sa.JSON, nullable=False),
        ),
        sa.Table(
            "role_grants", old,
            sa.Column("subject", sa.String(255), primary_key=True),
            sa.Column("kind", sa.String(16), nullable=False),
            sa.Column("role", sa.String(16), nullable=False),
            sa.Column("granted_by", sa.String(255), nullable=False),
            sa.Column("granted_at", _TS, nullable=False),
        ),
    ]
    old.create_all(conn, tables=added)


def _v11_no_claim_times(conn: Connection) -> None:
    """The runs' claim times go: nothing writes or reads them since a run's holder is named
    in its options. SQLite drops a column from 3.35 on, which the run engine needs already
    (DBOS writes its SQLite record with RETURNING, also from 3.35 on)."""
    conn.execute(sa.text("ALTER TABLE runs DROP COLUMN claimed_at"))

LESSON_TEXT_INDEX = "lessons_text_unique"
MIGRATIONS: list[Migration] = [
    (1, "runs, plan versions, events", _v1_initial),
    (2, "ownership, heartbeat, control requests, event counter, options, lessons",
     _v2_ownership_control_lessons),
    (3, "one lesson per text", _v3_unique_lessons),
    (4, "the source of every plan version", _v4_version_sources),
    (5, "workflow ids of runs, replay keys of events", _v5_workflows_and_replay_keys),
    (6, "runs on DBOS: no owner columns, legacy unfinished runs interrupted", _v6_runs_on_dbos),
    (7, "claim times of runs", _v7_claim_times),
    (8, "plan templates", _v8_plan_templates),
    (9, "step states between plan snapshots", _v9_step_states),
    (10, "the audit log and the roles given in the store", _v10_audit_and_roles),
    (11, "no claim times of runs (nothing uses them)", _v11_no_claim_times),
]
LATEST_VERSION = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int:
    """The highest migration applied to the database (0 for an empty database)."""
    if not sa.inspect(conn).has_table("schema_version"):
        return 0
    return conn.execute(sa.select(sa.func.coalesce(sa.func.max(schema_version.c.version), 0))
                        ).scalar_one()


def migrate(engine: sa.Engine, target: int = LATEST_VERSION) -> int:
    """Apply every pending migration up to ``target``, each in its own transaction.

    Safe when several processes open the same database at once: each migration first
    inserts its ``schema_version`` row (which takes the write lock on SQLite; on PostgreSQL
    a second insert of that row waits for the first transaction to end); a process that
    finds the row already there leaves the migration to whoever inserted it.
    """
    try:
        with engine.begin() as conn:
            schema_version.create(conn, checkfirst=True)
    except sa.exc.DatabaseError:  # created meanwhile by another process (each DB says it its way)
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table("schema_version"):
                raise
    with engine.connect() as conn:
        applied = set(conn.execute(sa.select(schema_version.c.version)).scalars())
    for number, description, apply in MIGRATIONS:
        if number > target:
            break
        if number in applied:  # skipped: on PostgreSQL a refused insert is a logged error
            continue
        try:
            with engine.begin() as conn:
                conn.execute(schema_version.insert().values(
                    version=number, description=description, applied_at=datetime.now(UTC),
                ))
                logger.info("applying store migration %d: %s", number, description)
                apply(conn)
        except sa.exc.IntegrityError:
            continue  # already applied (by us earlier or by another process)
    with engine.connect() as conn:
        return current_version(conn)
