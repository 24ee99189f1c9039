"""Audit page: who did what (approvals, edits, confirmations, cancels, re-runs), with
filters; an admin also gives and takes back roles here."""

from __future__ import annotations

import streamlit as st

from core.access.audit import AUDIT_ACTIONS, Act
from core.access.roles import ROLES
from core.base.messages import msg
from core.errors import PlanBoardError
from core.review.reviews import run_agent
from ui import identity, state
from ui.frame import page_header
from ui.i18n import current_language, t
from ui.messages import error_text, said
from ui.safe_text import literal


def _visible(found: list[Act], runs: dict) -> list[Act]:
    """The entries of runs this person sees (under ``visibility = "owner"``: their own)."""
    access = identity.access()
    if access.visibility == "team":
        return found
    return [act for act in found if act.run_id is None
            or (act.run_id in runs and access.sees(runs[act.run_id]))]


def _render_filters() -> dict[str, str | None]:
    person, action, run = st.columns(3)
    any_label = t("audit_any")
    chosen_action = action.selectbox(t("audit_action"), [any_label, *AUDIT_ACTIONS],
                                     key="audit_action")
    return {
        "person": person.text_input(t("audit_person"), key="audit_person").strip() or None,
        "action": None if chosen_action == any_label else chosen_action,
        "run_id": run.text_input(t("audit_run"), key="audit_run").strip() or None,
    }


def _render_table(found: list[Act], runs: dict) -> None:
    """The entries, newest first; the Agent column names who sent the run's plan."""
    if not found:
        st.info(t("audit_none"))
        return
    columns = t("audit_cols").split("|")
    language = current_language()
    rows = [dict(zip(columns, (
        act.at.strftime("%Y-%m-%d %H:%M:%S"), act.person, said(msg(f"via.{act.via}")),
        said(msg(f"audit_action.{act.action}")), act.run_id or "",
        run_agent(runs[act.run_id], language) if act.run_id in runs else "",  # type: ignore[arg-type]
        "" if act.version is None else str(act.version), act.step_id or ""), strict=True))
        for act in reversed(found)]
    with st.container(key="audit_table"):
        st.table(rows)


def _grant(person: str, role: str) -> None:
    try:
        state.grant_role(person, role, identity.actor())
    except PlanBoardError as exc:
        st.session_state["audit_error"] = error_text(exc)


def _revoke(person: str) -> None:
    try:
        state.revoke_role(person, identity.actor())
    except PlanBoardError as exc:
        st.session_state["audit_error"] = error_text(exc)


def _render_roles() -> None:
    """An admin's roles: those given here, and a form to give one."""
    st.subheader(t("audit_roles"))
    if error := st.session_state.pop("audit_error", None):
        st.error(error)
    for grant in state.role_grants():
        line, button = st.columns([4, 1])
        line.markdown(f"`{literal(grant.subject)}` · {t(f'role_{grant.role}')} "
                      f"· {literal(grant.granted_by)}")
        button.button(t("audit_revoke_button"), key=f"audit_revoke_{grant.subject}",
                      on_click=_revoke, args=(grant.subject,))
    with st.form("audit_grant_form", border=True):
        st.caption(t("audit_grant"))
        person = st.text_input(t("audit_grant_person"), key="audit_grant_person")
        role = st.selectbox(t("audit_grant"), ROLES, key="audit_grant_role",
                            format_func=lambda name: t(f"role_{name}"))
        if st.form_submit_button(t("audit_grant_button"), key="audit_grant_submit"):
            _grant(person, role)
            st.rerun()


def main() -> None:
    """Draw the audit log with its filters (and, for an admin, the roles)."""
    page_header("audit_title", "audit_caption", show_mode=False)
    runs = {record.run_id: record for record in state.runner().store.list_runs(limit=10_000)}
    _render_table(_visible(state.acts(**_render_filters()), runs), runs)
    if identity.allows("admin"):
        _render_roles()


main()
