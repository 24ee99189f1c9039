"""The Plan page's "Rehearse" button and the rehearsal it reports, kept while the plan is
unchanged (core.execution.rehearsal: each step simulated, no tool called, no run recorded)."""

from __future__ import annotations

import streamlit as st

from core.execution.rehearsal import Finding, Rehearsal, rehearse
from core.plan.model import Plan
from core.tools.registry import ToolRegistry
from ui.i18n import t
from ui.messages import said
from ui.safe_text import literal

__all__ = ["render_rehearsal"]

_KEPT = "plan_rehearsal"  # (the plan rehearsed as JSON, its rehearsal)


def render_rehearsal(plan: Plan, registry: ToolRegistry, *, offline: bool,
                     blocked: bool) -> None:
    """The Rehearse button (off while the plan has validation problems) and, below it, the
    rehearsal of this very plan, if one was made."""
    fingerprint = plan.model_dump_json()
    if st.button(t("rehearse"), key="rehearse_plan", disabled=blocked,
                 icon=":material/science:",
                 help=t("approve_blocked") if blocked else t("rehearse_help")):
        st.session_state[_KEPT] = (fingerprint, rehearse(plan, registry,
                                                         model_available=not offline))
    kept = st.session_state.get(_KEPT)
    if kept is None or kept[0] != fingerprint:
        return
    with st.container(key="rehearsal_report"):
        _render_report(kept[1])


def _render_report(rehearsal: Rehearsal) -> None:
    if rehearsal.problems:
        st.error(t("rehearsal_problems", count=len(rehearsal.problems)) + "\n\n"
                 + _listed(rehearsal.problems), icon=":material/science:")
    else:
        st.success(t("rehearsal_clean"), icon=":material/science:")
    if rehearsal.side_effects:
        st.warning(t("rehearsal_side_effects") + "\n\n" + _listed(rehearsal.side_effects))
    for note in rehearsal.notes:
        st.caption(literal(said(note.message)))
    st.caption(t("rehearsal_cost", calls=rehearsal.llm_calls))


def _listed(findings: list[Finding]) -> str:
    return "\n".join(f"- {literal(said(finding.message))}" for finding in findings)
