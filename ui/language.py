"""The dashboard's language: where a session starts, and how the choice is kept.

A person's choice is kept in two places, each for what a person expects of it. The address
holds it (``?lang=zh``; English, the default, leaves it out), so that a reload, an address
copied to someone and the pages' own links to a run keep it: every run puts it back, since
``st.switch_page`` clears the query parameters. The browser remembers it too (a cookie the
sidebar writes), so that an address without it (a run link the command line printed, a
bookmark, a new tab) opens in the language last chosen there. With neither, the browser's
own language decides.
"""

from __future__ import annotations

import streamlit as st

from ui.i18n import LANGUAGES, current_language

__all__ = [
    "LANGUAGE_COOKIE",
    "LANG_PARAM",
    "initial_language",
    "keep_language",
    "remember_language",
]

LANG_PARAM = "lang"
LANGUAGE_COOKIE = "planboard_language"
_DEFAULT = "en"  # left out of the address
_YEAR_S = 365 * 24 * 3600

_JS = f"""
export default function (component) {{
  const kept = "{LANGUAGE_COOKIE}=" + component.data.language;
  if (!document.cookie.split("; ").includes(kept)) {{
    document.cookie = kept + "; path=/; max-age={_YEAR_S}; SameSite=Lax";
  }}
}}
"""

_cookie = st.components.v2.component("planboard_language", js=_JS)


def initial_language() -> str:
    """The language a new session starts in: the address's, else the one this browser last
    chose, else the browser's own (Chinese for any ``zh-*``), else English."""
    asked = st.query_params.get(LANG_PARAM)
    if asked in LANGUAGES:
        return asked
    kept = st.context.cookies.get(LANGUAGE_COOKIE)
    if kept in LANGUAGES:
        return kept
    return "zh" if str(st.context.locale or "").lower().startswith("zh") else _DEFAULT


def keep_language() -> None:
    """Put the session's language into the address (or take it out, for English)."""
    language = current_language()
    if language == _DEFAULT:
        if LANG_PARAM in st.query_params:
            del st.query_params[LANG_PARAM]
    elif st.query_params.get(LANG_PARAM) != language:
        st.query_params[LANG_PARAM] = language


def remember_language() -> None:
    """Have this browser remember the session's language for addresses that name none."""
    _cookie(key="language_cookie", data={"language": current_language()})
