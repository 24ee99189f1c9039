"""Who acts: a person signed in, the OS user of a command, or a person's API token."""

from __future__ import annotations

import getpass
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Actor", "Via", "os_actor", "signed_in_actor", "token_actor"]

Via = Literal["sign-in", "os", "token"]
"""How a person reached PlanBoard: signed in with OpenID Connect (named by their e-mail),
as the OS user running a command or an unsigned dashboard, or with an API token that
belongs to a person (named by that person's e-mail, so the token carries their role)."""


@dataclass(frozen=True)
class Actor:
    """A person as PlanBoard knows them: ``name`` (an e-mail, or an OS user name), how they
    came in, and the identity token's claims (read for roles, never recorded)."""

    name: str
    via: Via
    claims: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def record(self) -> dict[str, str]:
        """What a run, an event or the audit log keeps of the person."""
        return {"name": self.name, "via": self.via}

    @property
    def email(self) -> str | None:
        """The person's e-mail (None for an OS user)."""
        return None if self.via == "os" else self.name


def os_actor() -> Actor:
    """The OS user running this process (the command line; the dashboard without sign-in)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no name for the uid (a bare container)
        name = "unknown"
    return Actor(name=name, via="os")


def signed_in_actor(claims: Mapping[str, Any]) -> Actor | None:
    """The person of an OpenID Connect sign-in, named by the e-mail of its claims (or its
    subject when the provider sends no e-mail); None when the claims name nobody."""
    email = str(claims.get("email") or "").strip().lower()
    name = email or str(claims.get("sub") or "").strip()
    if not name:
        return None
    return Actor(name=name, via="sign-in", claims=dict(claims))


def token_actor(email: str) -> Actor:
    """The person an API token belongs to: their role is the one their e-mail has."""
    return Actor(name=email.strip().lower(), via="token")
