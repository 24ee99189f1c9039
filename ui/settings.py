"""The settings sidebar: endpoint, models, API key (session only), offline mode, run options."""

from __future__ import annotations

import streamlit as st

from core.llm.settings import env_settings
from ui import identity, state
from ui.i18n import LANGUAGES, t
from ui.language import remember_language
from ui.switches import guarded_switch, switch

__all__ = ["SIDEBAR_KEYS", "keep_settings", "render_sidebar"]

SIDEBAR_KEYS = (
    "language", "offline_mode", "base_url", "planner_model", "executor_model", "api_key",
    "max_parallel", "max_replans", "confirm_side_effects", "checkpoint_policy", "demo_pace",
    "read_ahead",
)
# choices on the pages whose labels change with the language
_PAGE_CHOICES = ("plan_mode", "step_pick", "history_status", "history_run", "tool_pick")


def keep_settings() -> None:
    """Keep the sidebar's values and the pages' choices across page and language switches.

    Streamlit drops the state of widgets that were not drawn in the previous run (which
    st.switch_page causes) and starts a widget afresh when its label changes (which a
    language switch causes); assigning each value to itself makes it the session's own.
    Call before any widget is drawn.
    """
    for key in (*SIDEBAR_KEYS, *_PAGE_CHOICES):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def render_sidebar() -> None:
    """Draw the settings in the sidebar; their values live in ``st.session_state``."""
    with st.sidebar:
        identity.render_person()
        st.radio(
            t("language"), options=list(LANGUAGES), key="language",
            format_func=LANGUAGES.get, horizontal=True,
        )
        remember_language()  # and the address keeps it: ui.language
        _render_mode()
        with st.expander(t("settings_llm"), expanded=False):
            st.text_input(t("base_url"), key="base_url", help=t("base_url_help"))
            st.text_input(t("planner_model"), key="planner_model")
            st.text_input(t("executor_model"), key="executor_model")
            st.text_input(
                t("api_key"), key="api_key", type="password", help=t("api_key_help"),
                autocomplete="off",
            )
            st.caption(_key_source())
        with st.expander(t("settings_run"), expanded=False):
            st.number_input(t("max_parallel"), min_value=1, max_value=16, step=1,
                            key="max_parallel")
            st.number_input(t("max_replans"), min_value=0, max_value=5, step=1,
                            key="max_replans")
            # both widen what runs without asking: a second act turns them that way
            guarded_switch(t("confirm_side_effects"), key="confirm_side_effects",
                           help=t("confirm_side_effects_help"), widening=False,
                           ask=t("widen_confirm_side_effects_ask"),
                           confirm=t("widen_confirm_side_effects_yes"),
                           keep=t("widen_confirm_side_effects_no"),
                           widened=t("widened_confirm_side_effects"))
            guarded_switch(t("read_ahead"), key="read_ahead", help=t("read_ahead_help"),
                           widening=True, ask=t("widen_read_ahead_ask"),
                           confirm=t("widen_read_ahead_yes"), keep=t("widen_read_ahead_no"),
                           widened=t("widened_read_ahead"))
            policies = {p: t(f"checkpoint_{p}") for p in state.CHECKPOINT_POLICIES}
            st.selectbox(t("checkpoint_policy"), options=list(policies),
                         key="checkpoint_policy", help=t("checkpoint_policy_help"),
                         format_func=policies.get)
            # kept in the address (?demo_pace=1.0), so a refresh keeps the presenter's pace
            st.number_input(t("demo_pace"), min_value=0.0, max_value=10.0, step=0.5,
                            key="demo_pace", help=t("demo_pace_help"), bind="query-params")


def _render_mode() -> None:
    switch(t("offline_mode"), key="offline_mode", help=t("offline_mode_help"))
    chosen = state.settings()
    reason = t(f"reason_{chosen.reason}")
    if chosen.offline:
        st.caption(t("planner_offline") + " — " + reason)
    else:
        settings = chosen.settings
        st.caption(
            t("planner_llm", model=settings.planner_model, base_url=settings.base_url)
            + " — " + reason
        )


def _key_source() -> str:
    if st.session_state.get("api_key"):
        return t("key_from_session")
    if env_settings().has_key:
        return t("key_from_env")
    return t("key_none")
