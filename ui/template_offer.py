"""The plan library on the Plan page: a saved plan that fits the request, and saving one."""

from __future__ import annotations

import streamlit as st

from core.errors import PlanBoardError
from core.plan.model import Plan
from ui import state
from ui.i18n import t
from ui.messages import error_text
from ui.safe_text import literal

__all__ = ["render_offer", "render_save"]


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
        name = st.text_input(t("template_name"), key="template_save_name",
                             help=t("template_name_help"))
        if not st.button(t("template_save_confirm"), key="template_save_confirm"):
            return
        try:
            saved = state.template_library().save_plan(name, plan, request)
        except PlanBoardError as exc:
            st.error(error_text(exc))
            return
        listed = ", ".join(p.name for p in saved.parameters) or "-"
        st.success(t("template_saved", name=literal(saved.name), parameters=literal(listed)))
