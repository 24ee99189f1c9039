"""Switches a stray click cannot move: the help beside a switch, outside what a click flips,
and a second, explicit act before a switch widens what runs without asking.

``st.toggle(help=...)`` draws its help icon inside the switch's label, so a click on the
"?" flips the switch. :func:`switch` draws the toggle without help and the "?" next to it,
in a row of their own (``switch_<key>``). :func:`guarded_switch` keeps a switch where it
was when a click moves it to its widening value, and asks below it (``widen_<key>``): the
person confirms with a button that names what changes, or keeps the setting as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

__all__ = ["ASKING", "guarded_switch", "switch"]

ASKING = "switch_asking"  # session key: the guarded switch whose second act is asked for
# the toggle may shrink (its label wraps) so that the help icon stays on its row
_ROW_CSS = ("<style>[class*='st-key-switch_'] > div:first-child "
            "{flex-shrink: 1; min-width: 0}</style>")


def switch(label: str, *, key: str, help: str, on_change: Callable[..., None] | None = None,
           args: tuple[Any, ...] = (), disabled: bool = False) -> bool:
    """A toggle keyed ``key`` with its ``help`` as a "?" beside it, outside its label (no
    "?" when ``help`` is empty)."""
    if not help:
        return st.toggle(label, key=key, on_change=on_change, args=args, disabled=disabled)
    st.html(_ROW_CSS)
    with st.container(key=f"switch_{key}", horizontal=True, vertical_alignment="center",
                      gap="xsmall", wrap=False):
        value = st.toggle(label, key=key, on_change=on_change, args=args, disabled=disabled)
        st.markdown("", help=help, width="content")
    return value


def guarded_switch(label: str, *, key: str, help: str, widening: bool, ask: str,
                   confirm: str, keep: str, widened: str) -> bool:
    """A :func:`switch` whose move to ``widening`` waits for a second act: ``ask`` (what
    changes), with the buttons ``confirm`` (``widen_<key>_yes``) and ``keep``
    (``widen_<key>_no``). While it stands at ``widening``, ``widened`` says so under it.
    A move back, away from ``widening``, takes one click."""
    value = switch(label, key=key, help=help, on_change=_held, args=(key, widening))
    if st.session_state.get(ASKING) == key:
        with st.container(key=f"widen_{key}", border=True):
            st.warning(ask, icon=":material/gpp_maybe:")
            st.button(confirm, key=f"widen_{key}_yes", type="primary", width="stretch",
                      on_click=_decided, args=(key, widening))
            st.button(keep, key=f"widen_{key}_no", width="stretch",
                      on_click=_decided, args=(key, not widening))
    elif value == widening:
        st.caption(f":orange[:material/warning: {widened}]")
    return value


def _held(key: str, widening: bool) -> None:
    """A click that moved ``key`` to its widening value: put it back, and ask."""
    if st.session_state.get(key) == widening:
        st.session_state[key] = not widening
        st.session_state[ASKING] = key
    elif st.session_state.get(ASKING) == key:
        st.session_state.pop(ASKING)


def _decided(key: str, value: bool) -> None:
    st.session_state[key] = value
    st.session_state.pop(ASKING, None)
