"""Templates page: the saved plans — their request, parameters and steps; use or delete one."""

from __future__ import annotations

import streamlit as st

from core.errors import PlanBoardError
from core.learning.templates import PlanTemplate
from core.plan.model import Plan
from ui import identity, state
from ui.frame import page_header
from ui.i18n import t
from ui.messages import error_text
from ui.safe_text import literal
from ui.template_offer import open_on_plan_page


def _delete(name: str) -> None:
    try:
        state.template_library().delete(name)
    except PlanBoardError as exc:
        st.session_state["templates_notice"] = (error_text(exc), True)
        return
    st.session_state["templates_notice"] = (t("template_deleted", name=literal(name)), False)


def _render_template(template: PlanTemplate) -> None:
    """One template card: who saved it when, its request, parameters and plan."""
    created = template.created_at.strftime("%Y-%m-%d %H:%M")
    with st.container(border=True, key=f"template_{template.name}"):
        st.markdown(f"**{literal(template.name)}**")
        st.caption(t("template_meta", saved_by=literal(template.saved_by), created=created,
                     run_id=template.source_run or "—"))
        st.text(template.request)
        if template.parameters:
            listed = ", ".join(f"{p.name} ({p.example})" for p in template.parameters)
            st.caption(t("template_parameters", parameters=literal(listed)))
        else:
            st.caption(t("template_no_parameters"))
        plan = Plan.model_validate(template.plan)
        with st.expander(t("template_show_plan", steps=len(plan.steps))):
            st.json(plan.canonical(), expanded=True)
        if identity.allows("plan"):
            _render_use(template)
        st.button(t("template_delete"), key=f"template_delete_{template.name}",
                  icon=":material/delete:", on_click=_delete, args=(template.name,))


def _render_use(template: PlanTemplate) -> None:
    """"Use this plan": its parameters (their saved values to start from), filled into a
    draft that opens on the Plan page for review; nothing runs before it is approved."""
    with st.expander(t("template_use_here"), icon=":material/bolt:"):
        values: dict[str, str] = {}
        for parameter in template.parameters:
            key = f"template_use_{template.name}_{parameter.name}"
            st.session_state.setdefault(key, parameter.example)
            values[parameter.name] = st.text_input(
                t("template_param", name=parameter.name, example=parameter.example), key=key)
        replaces = st.session_state.get("plan") is not None
        st.caption(t("template_open_replaces" if replaces else "template_open_note"))
        if not st.button(t("template_open"), key=f"template_open_{template.name}",
                         type="primary", icon=":material/edit_note:"):
            return
        try:
            plan, request = template.fill(values)
        except PlanBoardError as exc:
            st.error(error_text(exc))
            return
    open_on_plan_page(plan, request)


def main() -> None:
    """Draw every template, newest first."""
    page_header("templates_title", "templates_caption")
    if notice := st.session_state.pop("templates_notice", None):
        message, error = notice
        (st.error if error else st.success)(message)
    templates = state.template_library().list_templates()
    if not templates:
        st.info(t("templates_empty"))
        return
    st.caption(t("templates_count", count=len(templates)))
    for template in templates:
        _render_template(template)


main()
