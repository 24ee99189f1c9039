"""Who did what: every approval, edit, confirmation, cancel, re-run (and role change) is
recorded with the person, in the run store's ``audit_log``.

The runner records an act once it was accepted (a refused or failed one leaves no entry);
an act that is itself a write to the run store (a review's decision, a role given) inserts
its entry in that write's transaction (:func:`insert_act`), so the two land together or not
at all. Every entry is written and read through the store's retrying transaction: a
database blip is ridden out, and what still fails is a one-line StoreError.
``show --json`` and the exports carry a run's acts, and the Audit page lists them all with
filters. An entry holds the person's name and how they came in, never a claim or a secret.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, get_args

import sqlalchemy as sa
from pydantic import BaseModel, Field

from core.access.identity import Actor, Via
from core.base.language import Language
from core.base.messages import msg, render
from core.store.schema import as_utc, audit_log, utc_now

if TYPE_CHECKING:
    from core.store.run_store import RunStore

__all__ = ["AUDIT_ACTIONS", "Act", "AuditAction", "act_text", "acts", "insert_act",
           "owner_text", "record_act"]

AuditAction = Literal[
    "approve",          # a person approved a plan version and started it
    "edit",             # a person's edit of the plan became a version they approved
    "confirm",          # a side-effecting step was confirmed
    "reject",           # a side-effecting step was rejected
    "approve_version",  # a new version that widens the side effects was approved
    "reject_version",   # ... or rejected
    "reject_plan",      # a plan another agent sent for review was rejected
    "pause", "resume", "cancel",
    "follow_up",        # new steps were added to a finished run
    "rerun",            # a finished run was run again from one step
    "grant_role", "revoke_role",
    "reset_demo",
]
AUDIT_ACTIONS: tuple[AuditAction, ...] = get_args(AuditAction)


class Act(BaseModel):
    """One entry of the audit log."""

    at: datetime
    person: str
    via: Via
    action: AuditAction
    run_id: str | None = None
    version: int | None = None
    step_id: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def by(cls, actor: Actor, action: AuditAction, *, run_id: str | None = None,
           version: int | None = None, step_id: str | None = None,
           detail: dict[str, Any] | None = None) -> Act:
        """``actor`` doing ``action`` now (on ``run_id``'s ``version``/``step_id``)."""
        return cls(at=utc_now(), person=actor.name, via=actor.via, action=action,
                   run_id=run_id, version=version, step_id=step_id, detail=detail or {})


def insert_act(conn: sa.Connection, act: Act) -> None:
    """Write ``act`` in the caller's transaction ``conn`` (it lands with the caller's write)."""
    conn.execute(audit_log.insert().values(**act.model_dump()))


def record_act(store: RunStore, actor: Actor, action: AuditAction, *,
               run_id: str | None = None, version: int | None = None,
               step_id: str | None = None, detail: dict[str, Any] | None = None) -> Act:
    """Write one entry, in a transaction of its own: ``actor`` did ``action`` (on
    ``run_id``'s ``version``/``step_id``), an act that was not a write to the store."""
    act = Act.by(actor, action, run_id=run_id, version=version, step_id=step_id,
                 detail=detail)
    store.transaction(partial(insert_act, act=act))
    return act


def act_text(act: Act, language: Language) -> str:
    """One line a person reads: when, who (and how they came in), what, on which version or
    step (the run is the reader's to name)."""
    what = ""
    if act.step_id:
        what = render(msg("audit.step", step=act.step_id), language)
    elif act.version is not None:
        what = render(msg("audit.version", version=act.version), language)
    return render(msg("audit.entry", at=act.at.isoformat(timespec="seconds"),
                      person=act.person, via=msg(f"via.{act.via}"),
                      action=msg(f"audit_action.{act.action}"), what=what), language)


def owner_text(run: Any, language: Language) -> str | None:
    """"Started by …" for a run that records its owner (None for one from before owners)."""
    owner = run.options.get("owner")
    if not isinstance(owner, dict) or not owner.get("name"):
        return None
    return render(msg("audit.owner", person=owner["name"],
                      via=msg(f"via.{owner.get('via', 'os')}")), language)


def acts(store: RunStore, *, person: str | None = None, action: str | None = None,
         run_id: str | None = None, since: datetime | None = None,
         limit: int = 500) -> list[Act]:
    """The newest ``limit`` entries (oldest first), of ``person``, ``action``, ``run_id``
    and from ``since`` where given."""
    query = sa.select(audit_log)
    if person:
        query = query.where(audit_log.c.person == person)
    if action:
        query = query.where(audit_log.c.action == action)
    if run_id:
        query = query.where(audit_log.c.run_id == run_id)
    if since is not None:
        query = query.where(audit_log.c.at >= since)
    query = query.order_by(audit_log.c.id.desc()).limit(limit)
    rows = store.transaction(lambda conn: conn.execute(query).all())
    return [Act(at=as_utc(row.at), person=row.person, via=row.via, action=row.action,
                run_id=row.run_id, version=row.version, step_id=row.step_id,
                detail=row.detail or {}) for row in reversed(rows)]
