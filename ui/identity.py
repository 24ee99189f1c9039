"""Who is using the dashboard: sign-in with OpenID Connect when ``[auth]`` is configured,
the person's role, and the sidebar's "signed in as".

Sign-in is Streamlit's own (``st.login`` / ``st.user``, configured by an ``[auth]``
section in ``.streamlit/secrets.toml``); without that section the dashboard is one
person's, who acts as the OS user that started it, as the command line does. What a person
may do is decided in core (:mod:`core.access.policy`); pages ask :func:`access` to show a
control enabled or not, and pass :func:`actor` to core, which checks again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import streamlit as st
from starlette.requests import Request
from streamlit.navigation.page import StreamlitPage

from core.access.identity import Actor, os_actor, signed_in_actor
from core.access.policy import Access, Action, access_for
from ui import state
from ui.i18n import t

__all__ = ["access", "actor", "allows", "render_person", "request_actor", "require_sign_in",
           "sign_in_on"]

_USER_COOKIE = "_streamlit_user"  # where Streamlit keeps a sign-in (signed, maybe in chunks)
_ACCESS_KEY = "person_access"  # session key: (when, Access), read again after ACCESS_S
ACCESS_S = 2.0  # a role an admin changes reaches an open page within this long


def sign_in_on() -> bool:
    """True when the app is configured for sign-in (an ``[auth]`` section in secrets)."""
    return "is_logged_in" in st.user.to_dict()


def request_actor(request: Request) -> Actor | None:
    """The person of an HTTP request to the dashboard's server (the stream of step marks):
    the one its sign-in cookie names, None when sign-in is configured and it holds none
    (without sign-in: the OS user of the server, as on the pages)."""
    from streamlit.auth_util import get_cookie_with_chunks, get_secrets_auth_section
    from streamlit.web.server.server_util import get_cookie_secret
    from streamlit.web.server.starlette.starlette_app_utils import decode_signed_value

    if not get_secrets_auth_section():
        return os_actor()
    secret = get_cookie_secret()

    def signed(name: str) -> bytes | None:  # as Streamlit reads it for the websocket
        raw = request.cookies.get(name)
        return None if raw is None else decode_signed_value(secret, name, raw.encode("latin-1"))

    cookie = get_cookie_with_chunks(signed, _USER_COOKIE)
    try:
        claims = json.loads(cookie) if cookie else {}
    except ValueError:
        return None
    return signed_in_actor(claims) if claims.get("is_logged_in") else None


def actor() -> Actor:
    """The person of this session: the one signed in, else the OS user of the server."""
    if sign_in_on():
        person = signed_in_actor(st.user.to_dict())
        if person is not None:
            return person
    return os_actor()


def access() -> Access:
    """What the person of this session may do (read again every :data:`ACCESS_S`)."""
    kept = st.session_state.get(_ACCESS_KEY)
    if kept is not None and time.monotonic() - kept[0] < ACCESS_S and kept[1].actor == actor():
        return kept[1]
    made = access_for(actor(), state.runner().store)
    st.session_state[_ACCESS_KEY] = (time.monotonic(), made)
    return made


def allows(action: Action) -> bool:
    """True when the person may do ``action`` (a control they may not use is disabled)."""
    return access().allows(action)


def require_sign_in(app_pages: list[StreamlitPage]) -> None:
    """With sign-in configured, a session nobody signed into sees the sign-in page and
    nothing else; a person without a role (roles configured) sees why, and nothing else.
    ``app_pages``: the app's pages, whose addresses show that page instead."""
    if sign_in_on() and not st.user.is_logged_in:
        _only(_sign_in_page, "signin_title", app_pages)
    granted = access()
    if granted.checked and granted.role is None:
        _only(_no_role_page, "signin_no_role_title", app_pages)


def _only(page: Callable[[], None], title: str, app_pages: list[StreamlitPage]) -> None:
    """Draw ``page`` as the app's one page (no navigation to any other), then stop. It stands
    in at every page's address: a shared link to one (/run?run=…) would otherwise open
    Streamlit's "page not found" dialog, in English, over the page and its button."""
    stand_ins = [st.Page(page, title=t(title), default=True)]
    stand_ins += [st.Page(page, title=t(title), url_path=app_page.url_path)
                  for app_page in app_pages if app_page.url_path]
    st.navigation(stand_ins, position="hidden").run()
    st.stop()


def _sign_in_page() -> None:
    st.title(t("signin_title"))
    st.caption(t("signin_caption"))
    st.button(t("signin_button"), key="sign_in", type="primary", on_click=st.login,
              icon=":material/login:")


def _no_role_page() -> None:
    st.title(t("signin_no_role_title"))
    st.error(t("signin_no_role", person=actor().name))
    if sign_in_on():
        st.button(t("signout_button"), key="sign_out", on_click=st.logout,
                  icon=":material/logout:")


def render_person() -> None:
    """The sidebar's line: who is signed in and their role, with a sign-out button."""
    if not sign_in_on():
        return
    granted = access()
    role = t(f"role_{granted.role}") if granted.role else t("role_none")
    st.caption(t("signed_in_as", person=granted.actor.name, role=role))
    st.button(t("signout_button"), key="sign_out", on_click=st.logout,
              icon=":material/logout:")
