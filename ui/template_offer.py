"""The plan library on the Plan page: a saved plan that fits the request, and saving one."""

from __future__ import annotations

import streamlit as st

from core.errors import PlanBoardError
from core.learning.templates import suggest_name
from core.plan.model import Plan
from ui import state
from ui.i18n import t
from ui.messages import error_text
from ui.safe_text import literal

__all__ = ["open_on_plan_page", "render_offer", "render_save", "take_opened"]

_OPENED = "template_opened"  # (plan, request) filled on the Templates page, for the Plan page


def render_offer(request: str) -> tuple[Plan, str] | None:
    """Offer the saved template that fits ``request``, its parameters read from it.

    Returns the filled plan and request when the person starts from it (no model call).
    """
    if not request.strip():
        return None
    try:
        fit = state.template_library().best_fit(request)
    except PlanBoardError as exc:
        st.error(error_text(exc))
        return None
    if fit is None:
        return None
    template = fit.template
    values: dict[str, str] = {}
    with st.container(border=True, key="template_offer"):
        st.info(t("template_fits", name=literal(template.name), score=f"{fit.score:.0%}"),
                icon=":material/library_books:")
        columns = st.columns(max(len(template.parameters), 1))
        for column, parameter in zip(columns, template.parameters, strict=False):
            key = f"template_param_{template.name}_{parameter.name}"
            guess = fit.values.get(parameter.name, "")
            if st.session_state.get(f"{key}_read") != guess:  # the request changed: re-read
                st.session_state[key] = st.session_state[f"{key}_read"] = guess
            values[parameter.name] = column.text_input(
                t("template_param", name=parameter.name, example=parameter.example), key=key)
        if not st.button(t("template_use"), key="template_use", icon=":material/bolt:"):
            return None
    try:
        return template.fill(values)
    except PlanBoardError as exc:
        st.error(error_text(exc))
        return None


def render_save(plan: Plan, request: str, *, disabled: bool) -> None:
    """"Save as template": the plan under review, its request's values made parameters."""
    with st.popover(t("template_save"), icon=":material/bookmark_add:", disabled=disabled):
        st.text_input(t("template_name"), key=_SAVE_NAME, help=t("template_name_help"))
        st.button(t("template_save_confirm"), key="template_save_confirm", on_click=_save,
                  args=(plan, request))
        if notice := st.session_state.pop(_SAVE_NOTICE, None):
            message, error = notice
            (st.error if error else st.success)(message)


_SAVE_NAME = "template_save_name"
_SAVE_NOTICE = "template_save_notice"  # (text, is an error) of the last Save


def _save(plan: Plan, request: str) -> None:
    """Save under the name typed; a name refused for its spaces or punctuation is replaced
    in the box by the valid one suggested, for the next Save to take."""
    name = st.session_state.get(_SAVE_NAME, "")
    try:
        saved = state.template_library().save_plan(name, plan, request)
    except PlanBoardError as exc:
        suggestion = suggest_name(name)
        message = error_text(exc)
        if suggestion and suggestion != name.strip():
            st.session_state[_SAVE_NAME] = suggestion
            message += " " + t("template_name_filled")
        st.session_state[_SAVE_NOTICE] = (message, True)
        return
    listed = ", ".join(p.name for p in saved.parameters) or "-"
    st.session_state[_SAVE_NOTICE] = (
        t("template_saved", name=literal(saved.name), parameters=literal(listed)), False)


def open_on_plan_page(plan: Plan, request: str) -> None:
    """Open ``plan``, filled from a template for ``request``, on the Plan page to review."""
    st.session_state[_OPENED] = (plan, request)
    st.switch_page("pages/plan.py")


def take_opened() -> tuple[Plan, str] | None:
    """The plan and request :func:`open_on_plan_page` sent, once (None when there is none)."""
    return st.session_state.pop(_OPENED, None)
