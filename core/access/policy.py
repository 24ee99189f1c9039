"""What a person may do: the one place every page, command and route asks.

Each role may do what the roles below it may (:data:`NEEDS`):

- ``viewer`` reads runs (the run page, the presentation view, the history, the audit log);
- ``editor`` also plans (drafts, edits, refines, compares, rehearses, saves templates) and
  starts runs none of whose steps has a side effect;
- ``approver`` also approves what has side effects: starts a plan that has them (or that
  approves its later versions beforehand), approves a new version that widens them, and
  confirms or rejects a step waiting for a person;
- ``admin`` also manages roles, tools and the demo's data.

A run belongs to whoever started it: pausing, resuming, cancelling, following it up or
re-running it (``steer``) is for its owner and for approvers. Under ``visibility =
"owner"`` a person sees only their own runs (approvers and admins see all: they decide on
them). Until roles are configured (:class:`core.access.roles.RoleBook`) everyone may do
everything, as on one person's machine. A refusal is an :class:`AccessDeniedError` saying
who, which role they have and which one it needs; nothing has happened when it is raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

import sqlalchemy as sa

from core.access.audit import Act, insert_act
from core.access.identity import Actor, os_actor
from core.access.roles import Grant, Role, RoleBook, Visibility, drop_grant, put_grant, rank
from core.base.messages import msg
from core.errors import AccessDeniedError
from core.plan.approval import has_side_effect

if TYPE_CHECKING:
    from core.plan.model import Plan
    from core.store.run_store import RunRecord, RunStore
    from core.tools.registry import ToolRegistry

__all__ = ["ACTIONS", "NEEDS", "Access", "Action", "access_for", "call_action", "grant_role",
           "owner_of", "revoke_role", "start_action"]

Action = Literal["read", "plan", "run_read_only", "approve", "steer", "admin"]
ACTIONS: tuple[Action, ...] = get_args(Action)
NEEDS: dict[Action, Role] = {
    "read": "viewer", "plan": "editor", "run_read_only": "editor", "approve": "approver",
    "steer": "editor", "admin": "admin",
}


def owner_of(run: RunRecord) -> str | None:
    """The name of the person who started ``run`` (None for a run from before owners)."""
    owner = run.options.get("owner")
    return owner.get("name") if isinstance(owner, dict) else None


def start_action(plan: Plan, registry: ToolRegistry, options: Any = None) -> Action:
    """What starting ``plan`` is: ``approve`` when a step of it has a side effect, or when
    the run options approve later versions beforehand (``new_versions="approve"``),
    else ``run_read_only``."""
    if getattr(options, "new_versions", None) == "approve":
        return "approve"
    if any(has_side_effect(step, registry) for step in plan.steps):
        return "approve"
    return "run_read_only"


def call_action(tool: str, registry: ToolRegistry) -> Action:
    """What calling ``tool`` by hand is: ``approve`` for a side effect (an unknown tool
    may have one), else ``run_read_only``."""
    if tool not in registry or registry.get(tool).side_effect:
        return "approve"
    return "run_read_only"


@dataclass(frozen=True)
class Access:
    """What one person may do, with the roles in force when it was made."""

    actor: Actor
    role: Role | None
    checked: bool  # False: roles are not configured, everything is allowed
    visibility: Visibility = "team"

    def allows(self, action: Action, run: RunRecord | None = None) -> bool:
        """True when the person may do ``action`` (on ``run``, when one is named)."""
        return self._refusal(action, run) is None

    def require(self, action: Action, run: RunRecord | None = None) -> None:
        """Return when the person may do ``action``; AccessDeniedError otherwise."""
        refusal = self._refusal(action, run)
        if refusal is not None:
            raise AccessDeniedError(refusal)

    def sees(self, run: RunRecord) -> bool:
        """True when the person may see ``run`` at all."""
        if not self.checked:
            return True
        if rank(self.role) < rank("viewer"):
            return False
        return (self.visibility == "team" or owner_of(run) == self.actor.name
                or rank(self.role) >= rank("approver"))

    def _refusal(self, action: Action, run: RunRecord | None) -> Any:
        if not self.checked:
            return None
        person, role = self.actor.name, self.role
        if role is None:
            return msg("access.no_role", person=person)
        if rank(role) < rank(NEEDS[action]):
            return msg("access.denied", person=person, role=msg(f"role.{role}"),
                       action=msg(f"access_action.{action}"),
                       needed=msg(f"role.{NEEDS[action]}"))
        if run is not None and not self.sees(run):
            return msg("access.not_visible", person=person, run_id=run.run_id)
        if (action == "steer" and run is not None and rank(role) < rank("approver")
                and owner_of(run) != person):
            return msg("access.not_owner", person=person, run_id=run.run_id,
                       owner=owner_of(run) or "?")
        return None


def access_for(actor: Actor | None, store: RunStore | None) -> Access:
    """The access of ``actor`` (None: the OS user of this process) under the roles of the
    roles file and ``store``."""
    actor = actor or os_actor()
    book = RoleBook(store)
    if not book.configured:
        return Access(actor, None, checked=False)
    return Access(actor, book.role_of(actor), checked=True, visibility=book.visibility)


def grant_role(store: RunStore, person: str, role: str, actor: Actor | None) -> Grant:
    """Give ``person`` ``role`` in the run store, as ``actor`` (an admin); the grant and its
    audit entry are one transaction. While no roles are configured anyone may give the
    first, who then configures them."""
    access = access_for(actor, store)
    access.require("admin")

    def write(conn: sa.Connection) -> Grant:
        grant = put_grant(conn, person, role, access.actor)
        insert_act(conn, Act.by(access.actor, "grant_role",
                                detail={"subject": grant.subject, "role": grant.role}))
        return grant

    return store.transaction(write)


def revoke_role(store: RunStore, person: str, actor: Actor | None) -> bool:
    """Take back the store's grant of ``person``, as ``actor`` (an admin), with its audit
    entry in the same transaction; False when there was none (and nothing is recorded)."""
    access = access_for(actor, store)
    access.require("admin")

    def write(conn: sa.Connection) -> bool:
        taken = drop_grant(conn, person)
        if taken:
            insert_act(conn, Act.by(access.actor, "revoke_role", detail={"subject": person}))
        return taken

    return store.transaction(write)
