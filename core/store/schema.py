"""Tables and records of the run store (migrations are in :mod:`core.store.migrations`).

The schema is written with SQLAlchemy Core (``Table`` objects), not the ORM: the store is a
handful of small, explicit transactions and Core keeps every statement visible.
The row-level statements every store transaction shares (update a run, append an event,
upsert a plan snapshot, turn a row into a :class:`RunRecord`) live here as well.
:func:`scrub_settings` decides what of a run's settings may be stored (never a secret).
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from typing import Any, Literal, get_args

import sqlalchemy as sa
from pydantic import BaseModel, Field
from sqlalchemy.engine import Connection

from core.base.messages import msg
from core.base.usage import Usage
from core.errors import RunNotFoundError
from core.execution.events import RunEvent
from core.lifecycle import RunStatus
from core.llm.settings import redact_secrets
from core.plan.model import Plan, Step

__all__ = [
    "REPLAY_KEY_INDEX",
    "VERSION_SOURCES",
    "PlanVersion",
    "RunRecord",
    "StoredEvent",
    "VersionSource",
    "as_utc",
    "audit_log",
    "events",
    "insert_event",
    "lessons",
    "looks_secret",
    "metadata",
    "plan_templates",
    "plan_versions",
    "record_from_row",
    "replayed_seq",
    "role_grants",
    "runs",
    "schema_version",
    "scrub_options",
    "scrub_settings",
    "source_of_event",
    "step_states",
    "stored_plan",
    "stored_plans",
    "update_run",
    "upsert_plan",
    "upsert_step",
    "utc_now",
]

logger = logging.getLogger(__name__)

_TS = sa.DateTime(timezone=True)


VersionSource = Literal["draft", "manual", "failure", "checkpoint", "retry", "follow-up",
                        "rerun", "expansion", "phases"]
"""What made a plan version: the first plan (drafted by the planner or written by hand),
a person's edit before approval, a replan after a failure, an adaptive checkpoint, a
retry after reflection, a follow-up request, a re-run from one step of a finished run, the
expansion of a phase into its steps when it was reached, or a change of the phase plan (a
phase whose goal cannot be reached)."""
VERSION_SOURCES: tuple[VersionSource, ...] = get_args(VersionSource)

_SECRET_NAME = re.compile(
    r"api[_\-]?key|secret|token|passw(or)?d|credential|auth(?!ors?(?:[_\-.]|$))|(^|[_\-.])key$",
    re.IGNORECASE)
# "Bearer <token>" / "Basic <token>" as a whole value, not prose that starts with "Basic"
_SECRET_VALUE = re.compile(
    r"^\s*(?:(?:sk|pk|rk)-[A-Za-z0-9_\-]{6,}|(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]{8,}\s*$)",
    re.IGNORECASE)
_DROP = object()  # what _scrub returns for a value that must not be stored
READ_AHEAD = "read_ahead"  # the run option holding tool results read while planning


def looks_secret(text: str) -> bool:
    """True when ``text`` is or contains something shaped like a credential.

    A key anywhere in it (``sk-…``, ``ak-…``, ``ghp_…``, ``xoxb-…``, as
    :func:`core.llm.settings.redact_secrets` finds them, e.g. in a URL's query), or a value
    starting like one (``sk-``/``pk-``/``rk-``, ``Bearer …``, ``Basic …``).
    """
    return bool(_SECRET_VALUE.search(text)) or redact_secrets(text) != text


def scrub_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` (or run options) without anything that looks like a secret.

    Dropped, at any depth: a text value that looks like a credential (:func:`looks_secret`),
    and any text under a secret-looking name (containing api_key/apikey, secret, token,
    password, credential or auth, or ending in ``key``). Under such a name only flags and
    numbers stay (``has_key: true``, ``max_tokens: 5``); containers keep their shape.
    """
    return _scrub(settings, strict=False, path="")


def scrub_options(options: dict[str, Any]) -> dict[str, Any]:
    """A run's options as :func:`scrub_settings` keeps them, but for the reads made while
    its plan was written (``read_ahead``, core.execution.read_ahead): those are tool
    results, kept as written as a step's result is (a result field named ``tokens``, or a
    query about a password, is data, and a read that lost it must not stand for its call)."""
    kept = scrub_settings({key: value for key, value in options.items()
                           if key != READ_AHEAD})
    if READ_AHEAD in options:
        kept[READ_AHEAD] = options[READ_AHEAD]
    return kept


def _scrub(value: Any, *, strict: bool, path: str) -> Any:
    """``value`` without secrets, or ``_DROP``; ``strict``: under a secret-looking name."""
    if isinstance(value, dict):
        kept = {str(k): _scrub(v, strict=strict or bool(_SECRET_NAME.search(str(k))),
                               path=f"{path}.{k}" if path else str(k)) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not _DROP}
    if isinstance(value, list | tuple):
        items = [_scrub(v, strict=strict, path=f"{path}[{i}]") for i, v in enumerate(value)]
        return [item for item in items if item is not _DROP]
    if value is None or isinstance(value, bool | int | float):
        return value
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    if strict or (isinstance(text, str) and looks_secret(text)):
        logger.warning("not storing setting %r: it looks like a secret", path)
        return _DROP
    return value


def utc_now() -> datetime:
    """The current time in UTC (what every stored time uses)."""
    return datetime.now(UTC)


def as_utc(value: datetime | None) -> datetime | None:
    """``value`` in UTC: SQLite returns naive datetimes (stored in UTC), PostgreSQL aware ones."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class RunRecord(BaseModel):
    """A run as stored: its fields, its latest plan and how many plan versions it has."""

    run_id: str
    request: str
    settings: dict[str, Any] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)
    status: RunStatus
    answer: str | None = None
    usage: Usage = Field(default_factory=Usage)
    workflow_id: str | None = None  # the DBOS workflow executing it; None: not started yet
    event_seq: int = 0  # the number of its latest event: a claim or a crash record adds one
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    plan: Plan | None = None
    versions: int = 0

    @property
    def wall_s(self) -> float:
        """Seconds from creation to finish (or to now while the run is unfinished)."""
        end = self.finished_at or utc_now()
        return round((end - self.created_at).total_seconds(), 3)


class PlanVersion(BaseModel):
    """One stored plan version of a run."""

    version: int
    plan: Plan
    source: VersionSource
    reason: str | None = None
    created_at: datetime


class StoredEvent(RunEvent):
    """A run event with its run id, its place in the run's log and its replay key, if any."""

    run_id: str
    seq: int
    replay_key: str | None = None


class _NulFreeText(sa.TypeDecorator[str]):
    """Text that PostgreSQL can store: it refuses NUL characters, so they become U+FFFD there.

    A request or an answer holding one would otherwise fail its whole transaction.
    """

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: sa.Dialect) -> str | None:
        if value is not None and dialect.name == "postgresql":
            return value.replace("\x00", "\ufffd")
        return value


_Text = _NulFreeText()

metadata = sa.MetaData()

schema_version = sa.Table(
    "schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("description", sa.String(200), nullable=False),
    sa.Column("applied_at", _TS, nullable=False),
)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("request", _Text, nullable=False),
    sa.Column("settings", sa.JSON, nullable=False),
    sa.Column("status", sa.String(32), nullable=False, index=True),
    sa.Column("answer", _Text),
    sa.Column("usage", sa.JSON, nullable=False),
    sa.Column("created_at", _TS, nullable=False, index=True),
    sa.Column("updated_at", _TS, nullable=False),
    sa.Column("finished_at", _TS),
    # added by migration 2; the owner, heartbeat and control columns are unused since
    # migration 6 (DBOS executes runs), kept because old SQLite cannot drop a column
    sa.Column("options", sa.JSON),
    sa.Column("owner_pid", sa.Integer),
    sa.Column("owner_host", sa.String(255)),
    sa.Column("heartbeat_at", _TS),
    sa.Column("control_request", sa.String(64)),
    sa.Column("control_at", _TS),
    sa.Column("event_seq", sa.Integer, nullable=False, server_default="0"),
    # added by migration 5: the DBOS workflow executing the run (NULL: not started yet)
    sa.Column("workflow_id", sa.String(255)),
)

plan_versions = sa.Table(
    "plan_versions",
    metadata,
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("plan", sa.JSON, nullable=False),
    sa.Column("reason", _Text),
    sa.Column("created_at", _TS, nullable=False),
    # added by migration 2
    sa.Column("updated_at", _TS),
    # added by migration 4 (always written; old rows got theirs from the migration)
    sa.Column("source", sa.String(32)),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("kind", sa.String(40), nullable=False),
    sa.Column("step_id", sa.String(40)),
    sa.Column("plan_version", sa.Integer, nullable=False),
    sa.Column("data", sa.JSON, nullable=False),
    sa.Column("at", _TS, nullable=False),
    # added by migration 5, unique per run (REPLAY_KEY_INDEX): workflow code replays from
    # the top after a crash, and an event written under a key is written only once
    sa.Column("replay_key", sa.Text),
)
REPLAY_KEY_INDEX = "events_replay_key_unique"

# added by migration 9: the state of a step written since its version's last snapshot, so
# that an event about one step writes that step, not the whole plan (a plan of 1,000 steps
# would cost each event a ~0.3 MB snapshot); a snapshot of the version clears its rows
step_states = sa.Table(
    "step_states",
    metadata,
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("step_id", sa.String(255), primary_key=True),
    sa.Column("state", sa.JSON, nullable=False),
    sa.Column("updated_at", _TS, nullable=False),
)

lessons = sa.Table(
    "lessons",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(40)),
    sa.Column("text", _Text, nullable=False),
    sa.Column("tools", sa.JSON, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("created_at", _TS, nullable=False),
    sa.Column("updated_at", _TS, nullable=False),
)

# added by migration 8: plans kept for reuse, their request's values made parameters
plan_templates = sa.Table(
    "plan_templates",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("request", _Text, nullable=False),
    sa.Column("plan", sa.JSON, nullable=False),
    sa.Column("parameters", sa.JSON, nullable=False),
    sa.Column("source_run", sa.String(40)),  # no foreign key: a template outlives its run
    sa.Column("saved_by", sa.String(255), nullable=False),
    sa.Column("created_at", _TS, nullable=False),
)


# added by migration 10: who did what (core.access.audit): an approval, an edit, a
# confirmation, a cancel, a re-run, a role given; ``run_id`` is empty for acts on no run
audit_log = sa.Table(
    "audit_log",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", _TS, nullable=False, index=True),
    sa.Column("person", sa.String(255), nullable=False, index=True),
    sa.Column("via", sa.String(16), nullable=False),
    sa.Column("action", sa.String(32), nullable=False),
    sa.Column("run_id", sa.String(40), index=True),  # no foreign key: the log outlives runs
    sa.Column("version", sa.Integer),
    sa.Column("step_id", sa.String(255)),
    sa.Column("detail", sa.JSON, nullable=False),
)

# added by migration 10: roles an admin gave (core.access.roles), over the roles file's
role_grants = sa.Table(
    "role_grants",
    metadata,
    sa.Column("subject", sa.String(255), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("granted_by", sa.String(255), nullable=False),
    sa.Column("granted_at", _TS, nullable=False),
)

# ---- statements shared by the store's transactions (run inside the caller's) ----------

def update_run(conn: Connection, run_id: str, **values: Any) -> None:
    """Update the run's row (taking the write lock); RunNotFoundError when there is none."""
    done = conn.execute(runs.update().where(runs.c.id == run_id).values(**values))
    if not done.rowcount:
        raise RunNotFoundError(msg("run.not_found", run_id=repr(run_id)))


def insert_event(conn: Connection, run_id: str, event: RunEvent,
                 replay_key: str | None = None) -> int:
    """Append ``event`` (under ``replay_key``) as the run's next event; return its seq."""
    update_run(conn, run_id, event_seq=runs.c.event_seq + 1, updated_at=utc_now())
    seq = conn.execute(sa.select(runs.c.event_seq).where(runs.c.id == run_id)).scalar_one()
    conn.execute(events.insert().values(
        run_id=run_id, seq=seq, kind=event.kind, step_id=event.step_id,
        plan_version=event.plan_version,
        data=event.model_dump(mode="json", include={"data"})["data"], at=event.at,
        replay_key=replay_key,
    ))
    return seq


def replayed_seq(conn: Connection, run_id: str, replay_key: str | None) -> int | None:
    """The seq of the run's event recorded under ``replay_key``, or None (always for no key).

    With a key, the run's write lock is taken first (an update that changes nothing), so a
    replay racing a live write of the same event waits for it and then finds it.
    """
    if replay_key is None:
        return None
    update_run(conn, run_id, event_seq=runs.c.event_seq)
    return conn.execute(sa.select(events.c.seq).where(
        events.c.run_id == run_id, events.c.replay_key == replay_key)).scalar()


def source_of_event(event: RunEvent) -> VersionSource | None:
    """The source a ``replanned`` event names for the version it made (None otherwise)."""
    source = event.data.get("source") if event.kind == "replanned" else None
    return source if source in VERSION_SOURCES else None


def upsert_plan(conn: Connection, run_id: str, plan: Plan, reason: str | None,
                at: datetime, source: VersionSource | None = None) -> None:
    """Store ``plan`` as version ``plan.version`` of the run, replacing that snapshot.

    ``source`` says what made the version; a snapshot of a stored version keeps its own
    unless one is given. A new version stored without one is taken as the first plan
    (version 1) or a replan after a failure (any later version).
    """
    data = plan.model_dump(mode="json")
    key = (plan_versions.c.run_id == run_id) & (plan_versions.c.version == plan.version)
    values: dict[str, Any] = {"plan": data, "updated_at": at}
    if reason is not None:
        values["reason"] = reason
    if source is not None:
        values["source"] = source
    conn.execute(step_states.delete().where(  # the snapshot holds every step's state now
        (step_states.c.run_id == run_id) & (step_states.c.version == plan.version)))
    if conn.execute(plan_versions.update().where(key).values(**values)).rowcount:
        return
    conn.execute(plan_versions.insert().values(
        run_id=run_id, version=plan.version, plan=data, reason=reason, created_at=at,
        updated_at=at, source=source or ("draft" if plan.version == 1 else "failure"),
    ))


def upsert_step(conn: Connection, run_id: str, version: int, step: Step, at: datetime
                ) -> None:
    """Store the state of one step of version ``version`` (whose snapshot is stored): read
    back over the snapshot by :func:`stored_plan` until the version's next snapshot."""
    key = ((step_states.c.run_id == run_id) & (step_states.c.version == version)
           & (step_states.c.step_id == step.id))
    state = step.model_dump(mode="json")
    if not conn.execute(step_states.update().where(key).values(state=state,
                                                                updated_at=at)).rowcount:
        conn.execute(step_states.insert().values(run_id=run_id, version=version,
                                                 step_id=step.id, state=state, updated_at=at))


def _overlaid(plan: dict[str, Any], states: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A stored snapshot with the step states written since, by step id."""
    if not states:
        return plan
    return {**plan, "steps": [states.get(step.get("id"), step) for step in plan["steps"]]}


def stored_plan(conn: Connection, run_id: str, version: int | None = None
                ) -> dict[str, Any] | None:
    """The run's plan version ``version`` (the latest when None) as stored: its snapshot
    with the step states written since; None when there is none."""
    query = sa.select(plan_versions.c.version, plan_versions.c.plan).where(
        plan_versions.c.run_id == run_id)
    if version is not None:
        query = query.where(plan_versions.c.version == version)
    row = conn.execute(query.order_by(plan_versions.c.version.desc()).limit(1)).first()
    if row is None:
        return None
    states = conn.execute(sa.select(step_states.c.step_id, step_states.c.state).where(
        (step_states.c.run_id == run_id) & (step_states.c.version == row[0]))).all()
    return _overlaid(row[1], dict(states))


def stored_plans(conn: Connection, run_id: str) -> list[tuple[Any, dict[str, Any]]]:
    """Every plan version of the run, oldest first: (its row, its plan as stored)."""
    rows = conn.execute(plan_versions.select().where(plan_versions.c.run_id == run_id)
                        .order_by(plan_versions.c.version)).mappings().all()
    states: dict[int, dict[str, dict[str, Any]]] = {}
    for version, step_id, state in conn.execute(sa.select(
            step_states.c.version, step_states.c.step_id, step_states.c.state).where(
            step_states.c.run_id == run_id)):
        states.setdefault(version, {})[step_id] = state
    return [(row, _overlaid(row["plan"], states.get(row["version"], {}))) for row in rows]


def record_from_row(row: Any, plan: Plan | None, versions: int) -> RunRecord:
    """The :class:`RunRecord` of a ``runs`` row, with its latest plan and version count."""
    return RunRecord(
        run_id=row["id"], request=row["request"], settings=row["settings"] or {},
        options=row["options"] or {}, status=row["status"], answer=row["answer"],
        usage=Usage.model_validate(row["usage"] or {}), workflow_id=row["workflow_id"],
        event_seq=row["event_seq"],
        created_at=as_utc(row["created_at"]),
        updated_at=as_utc(row["updated_at"]), finished_at=as_utc(row["finished_at"]),
        plan=plan, versions=versions,
    )
