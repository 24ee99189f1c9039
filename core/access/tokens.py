"""API tokens: each belongs to a person, and a call made with it acts as that person.

The tokens come from ``PLANBOARD_API_TOKENS`` in the server's environment, set by whoever
deploys PlanBoard: ``ann@example.com=<token>`` pairs separated by commas, spaces or
newlines, each token at least :data:`MIN_TOKEN_CHARS` characters. PlanBoard never writes
them anywhere. A call's person has the role their e-mail has (:mod:`core.access.roles`).
With sign-in off, a call without a token acts as the server's OS user, as the pages do; a
token sent is always checked, and with sign-in on a call needs one.
"""

from __future__ import annotations

import hmac
import os
import re
from collections.abc import Mapping

from core.access.identity import Actor, os_actor, token_actor
from core.base.messages import msg
from core.errors import ConfigError, NotIdentifiedError

__all__ = ["MIN_TOKEN_CHARS", "TOKENS_ENV", "api_actor", "api_tokens"]

TOKENS_ENV = "PLANBOARD_API_TOKENS"
MIN_TOKEN_CHARS = 24  # a guessable token is no token
_BEARER = re.compile(r"^\s*Bearer\s+(\S+)\s*$", re.IGNORECASE)


def api_tokens(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(e-mail, token) of every configured token; ConfigError names a bad entry."""
    raw = (os.environ if environ is None else environ).get(TOKENS_ENV, "")
    pairs = []
    for number, entry in enumerate(re.split(r"[\s,]+", raw.strip()), 1):
        if not entry:
            continue
        email, _, token = entry.partition("=")
        if "@" not in email or len(token) < MIN_TOKEN_CHARS:
            raise ConfigError(msg("api.bad_tokens_setting", variable=TOKENS_ENV, entry=number))
        pairs.append((email.strip().lower(), token))
    return pairs


def api_actor(authorization: str | None, *, sign_in: bool,
              environ: Mapping[str, str] | None = None) -> Actor:
    """The person an API call acts as, from its ``Authorization`` header;
    NotIdentifiedError when it holds a token nobody has, or none while sign-in is on."""
    if not (authorization or "").strip():
        if sign_in:
            raise NotIdentifiedError(msg("api.no_token"))
        return os_actor()
    bearer = _BEARER.match(authorization or "")
    sent = bearer.group(1) if bearer else ""
    owner = None
    for email, token in api_tokens(environ):  # every token compared, in constant time
        if hmac.compare_digest(token.encode(), sent.encode()) and owner is None:
            owner = email
    if owner is None:
        raise NotIdentifiedError(msg("api.bad_token", variable=TOKENS_ENV))
    return token_actor(owner)
