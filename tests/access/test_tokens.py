"""API tokens: who a call acts as, from PLANBOARD_API_TOKENS; a wrong or missing token."""

from __future__ import annotations

import pytest

from core.access.identity import Actor
from core.access.tokens import MIN_TOKEN_CHARS, TOKENS_ENV, api_actor, api_tokens
from core.errors import ConfigError, NotIdentifiedError

TOKEN = "t" * MIN_TOKEN_CHARS
ENV = {TOKENS_ENV: f"Ann@Example.com={TOKEN}\nbob@example.com={'b' * MIN_TOKEN_CHARS}"}


def test_a_token_acts_as_the_person_it_belongs_to():
    assert api_actor(f"Bearer {TOKEN}", sign_in=True, environ=ENV) == Actor(
        "ann@example.com", "token")
    assert api_actor(f"bearer {TOKEN} ", sign_in=False, environ=ENV).name == "ann@example.com"


@pytest.mark.parametrize("sign_in", [True, False])
@pytest.mark.parametrize("header", [f"Bearer {TOKEN}x", "Bearer ", f"Basic {TOKEN}", "x"])
def test_a_token_nobody_has_is_refused_with_sign_in_on_or_off(header, sign_in):
    with pytest.raises(NotIdentifiedError, match="not one PlanBoard knows"):
        api_actor(header, sign_in=sign_in, environ=ENV)


def test_without_a_token_sign_in_decides():
    assert api_actor(None, sign_in=False, environ=ENV).via == "os"
    with pytest.raises(NotIdentifiedError, match="Bearer"):
        api_actor("", sign_in=True, environ=ENV)


@pytest.mark.parametrize("raw", ["ann@example.com=short", "no-email=" + TOKEN, TOKEN])
def test_a_bad_setting_names_its_entry(raw):
    with pytest.raises(ConfigError, match=TOKENS_ENV):
        api_tokens({TOKENS_ENV: raw})
