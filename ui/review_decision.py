"""The run page's decision on a plan an agent sent for review: approve it, or reject it with
a comment the agent receives (core.review.reviews decides and checks the role)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from core.access.identity import Actor
from core.errors import PlanBoardError
from core.review.reviews import approve_review, pending_review, reject_review
from core.runs.view import RunView
from ui import identity, state
from ui.i18n import t
from ui.messages import error_text

__all__ = ["render_review_decision"]


def render_review_decision(view: RunView) -> None:
    """The decision's controls while the run is a review waiting for a person."""
    record = view.record
    if not pending_review(record):
        return
    with st.container(border=True, key="review_decision"):
        st.markdown(t("review_decide"))
        st.page_link("pages/plan.py", label=t("review_edit_on_plan"),
                     icon=":material/edit_note:", query_params={"review": record.run_id})
        comment = st.text_area(t("review_comment"), key="review_comment", height=68)
        approve, reject = st.columns(2)
        if approve.button(t("review_approve"), key="review_approve", type="primary",
                          icon=":material/check:", width="stretch"):
            _decide(lambda store, person: approve_review(store, record.run_id, person))
        if reject.button(t("review_reject"), key="review_reject", icon=":material/block:",
                         width="stretch"):
            if not comment.strip():
                st.error(t("review_reject_needs_comment"))
            else:
                _decide(lambda store, person: reject_review(store, record.run_id, person,
                                                            comment))


def _decide(decision: Callable[[Any, Actor], object]) -> None:
    """Make ``decision`` (of the run store and the person) as this session's person."""
    try:
        decision(state.runner().store, identity.actor())
    except PlanBoardError as exc:  # refused (a role, decided elsewhere): nothing changed
        st.error(error_text(exc))
        return
    st.rerun()
