"""Roles: viewer < editor < approver < admin, given by e-mail, OS user or identity claim.

Two places give roles. A TOML file (``PLANBOARD_ROLES``, else ``roles.toml`` in the
PlanBoard home) written by whoever deploys PlanBoard::

    default = "viewer"              # a signed-in person no rule names (left out: no access)
    visibility = "team"             # "team": everyone sees every run; "owner": only their own
    [emails]
    "ann@example.com" = "approver"
    [os_users]                      # the command line (and an unsigned dashboard) acts as one
    ci = "editor"
    [claims.groups]                 # a claim of the identity token: its value, or one of
    planboard-admins = "admin"      # its values, gives the role

and the run store's ``role_grants``, which an admin changes (``python -m core roles``, the
Audit page): a grant there overrides the file for that person. A person named by neither
gets the highest role a claim rule gives them, else ``default``. Roles are *configured* when
the file exists or the store holds a grant; until then nobody is checked (one person on
their own machine, as before).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.access.identity import Actor
from core.base.home import home_path
from core.base.messages import msg
from core.errors import ConfigError
from core.store.schema import as_utc, role_grants, utc_now

if TYPE_CHECKING:
    from core.store.run_store import RunStore

__all__ = ["ROLES", "Grant", "Role", "RoleBook", "RoleRules", "drop_grant", "put_grant", "rank",
           "roles_file"]

Role = Literal["viewer", "editor", "approver", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)  # lowest first: each role may do all below it
Visibility = Literal["team", "owner"]


def rank(role: Role | None) -> int:
    """0 for no role, then 1 (viewer) to 4 (admin)."""
    return 0 if role is None else ROLES.index(role) + 1


class RoleRules(BaseModel):
    """The roles file, read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    default: Role | None = None
    visibility: Visibility = "team"
    emails: dict[str, Role] = Field(default_factory=dict)
    os_users: dict[str, Role] = Field(default_factory=dict)
    claims: dict[str, dict[str, Role]] = Field(default_factory=dict)

    def claimed(self, claims: Mapping[str, Any]) -> Role | None:
        """The highest role the identity token's claims give."""
        found: list[Role] = []
        for claim, values in self.claims.items():
            held = claims.get(claim)
            held = held if isinstance(held, list) else [held]
            found += [role for value, role in values.items() if value in map(str, held)]
        return max(found, key=rank, default=None)


class Grant(BaseModel):
    """A role an admin gave in the run store."""

    subject: str  # an e-mail, or an OS user name
    kind: Literal["email", "os_user"]
    role: Role
    granted_by: str
    granted_at: datetime


def roles_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where the roles file is: ``PLANBOARD_ROLES``, else roles.toml in the home."""
    env = os.environ if environ is None else environ
    configured = env.get("PLANBOARD_ROLES", "").strip()
    return Path(configured).expanduser() if configured else home_path(env) / "roles.toml"


def _read_rules(path: Path) -> RoleRules | None:
    """The rules of the file at ``path`` (None when there is none); ConfigError, one line,
    for a file that is not TOML or names an unknown role."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(msg("roles.bad_file", path=path, reason=exc.strerror)) from None
    try:
        data = tomllib.loads(text)
        data["emails"] = {k.strip().lower(): v for k, v in data.get("emails", {}).items()}
        return RoleRules.model_validate(data)
    except (tomllib.TOMLDecodeError, ValidationError, AttributeError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise ConfigError(msg("roles.bad_file", path=path, reason=reason)) from None


def _kind(actor: Actor) -> Literal["email", "os_user"]:
    return "os_user" if actor.via == "os" else "email"


class RoleBook:
    """The roles in force: the file's rules and the store's grants."""

    def __init__(self, store: RunStore | None, path: Path | None = None) -> None:
        self.store = store
        self.path = path or roles_file()
        self.rules = _read_rules(self.path)

    @property
    def configured(self) -> bool:
        """True when roles are checked at all (a file, or a grant in the store)."""
        return self.rules is not None or bool(self.grants())

    @property
    def visibility(self) -> Visibility:
        """Who sees a run: ``team`` (everyone with a role) or ``owner`` (its owner, and
        approvers and admins, who decide on it)."""
        return self.rules.visibility if self.rules else "team"

    def role_of(self, actor: Actor) -> Role | None:
        """The person's role: their grant, else their entry in the file, else the highest a
        claim gives, else the file's default (None: no role)."""
        for grant in self.grants():
            if grant.subject == actor.name and grant.kind == _kind(actor):
                return grant.role
        rules = self.rules or RoleRules()
        named = rules.os_users if actor.via == "os" else rules.emails
        if actor.name in named:
            return named[actor.name]
        return rules.claimed(actor.claims) or rules.default

    # ---- the store's grants ---------------------------------------------------------

    def grants(self) -> list[Grant]:
        """Every role given in the run store, by subject."""
        if self.store is None:
            return []
        query = sa.select(role_grants).order_by(role_grants.c.subject)
        rows = self.store.transaction(lambda conn: conn.execute(query).all())
        return [Grant(subject=r.subject, kind=r.kind, role=r.role, granted_by=r.granted_by,
                      granted_at=as_utc(r.granted_at)) for r in rows]


def put_grant(conn: sa.Connection, subject: str, role: str, by: Actor) -> Grant:
    """Give ``subject`` (an e-mail, or an OS user name) ``role`` in the store, in the
    caller's transaction ``conn`` (:meth:`RunStore.transaction`, with its audit entry)."""
    if role not in ROLES:
        raise ConfigError(msg("roles.unknown_role", role=role, roles=", ".join(ROLES)))
    subject = subject.strip()
    kind: Literal["email", "os_user"] = "email" if "@" in subject else "os_user"
    subject = subject.lower() if kind == "email" else subject
    if not subject:
        raise ConfigError(msg("roles.no_subject"))
    made = Grant(subject=subject, kind=kind, role=role, granted_by=by.name,
                 granted_at=utc_now())
    conn.execute(role_grants.delete().where(role_grants.c.subject == subject))
    conn.execute(role_grants.insert().values(**made.model_dump()))
    return made


def drop_grant(conn: sa.Connection, subject: str) -> bool:
    """Take back the store's grant of ``subject`` in the caller's transaction ``conn``;
    False when it had none."""
    subject = subject.strip()
    subject = subject.lower() if "@" in subject else subject
    done = conn.execute(role_grants.delete().where(role_grants.c.subject == subject))
    return bool(done.rowcount)
