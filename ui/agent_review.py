"""The Plan page's review of a plan an agent sent (``?review=<id>``), like one of PlanBoard's.

The plan gets the table, the diagram and the step panel, over the tools its agent declared
and checked against their schemas (core.review.reviews). The person approves it as it is
or as edited (the agent receives exactly the version approved), or rejects it with a
comment; either opens the review's run, where the agent's reported steps show. While a
review is open it is the page's plan; the person's own plan comes back when it closes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import streamlit as st

from core.access.identity import Actor
from core.access.policy import NEEDS, start_action
from core.errors import PlanBoardError
from core.plan.approval import has_side_effect
from core.plan.model import Plan
from core.review.reviews import (
    approve_review,
    pending_review,
    reject_review,
    review_on_page,
    review_plan,
    review_problems,
    review_registry,
    review_text,
)
from core.runs.view import RunRecord
from core.tools.registry import ToolRegistry
from ui import identity, plan_editor, state
from ui.i18n import current_language, t
from ui.messages import error_text
from ui.safe_text import literal

__all__ = ["OPEN_REVIEW", "render_agent_review"]

OPEN_REVIEW = "agent_review"  # session key: the review the Plan page shows
_OWN_PLAN = "agent_review_own_plan"  # session key: the person's plan while a review is open


def render_agent_review() -> bool:
    """Draw the review the address names (else the one this session has open); True when
    the page shows a review and nothing else."""
    review_id = st.query_params.get("review") or st.session_state.get(OPEN_REVIEW)
    if not review_id:
        return False
    try:
        review = review_on_page(state.runner().store, review_id, identity.actor())
    except PlanBoardError:  # no such review, or one this person may not see: the same
        _close()
        st.error(t("review_unknown", review_id=literal(review_id)))
        return False
    if not pending_review(review):
        _close()
        _render_decided(review)
        return True
    _open(review)
    _render_pending(review)
    return True


def _open(review: RunRecord) -> None:
    """Make the review's plan the page's plan (once: the person's edits stay), keeping the
    person's own plan aside."""
    if st.session_state.get(OPEN_REVIEW) != review.run_id:
        if OPEN_REVIEW not in st.session_state:
            st.session_state[_OWN_PLAN] = st.session_state.get("plan")
        st.session_state[OPEN_REVIEW] = review.run_id
        plan_editor.set_plan(review_plan(review))
    st.query_params["review"] = review.run_id  # a reload shows the review again


def _close() -> None:
    """Forget the open review: the person's own plan is the page's plan again."""
    if st.session_state.pop(OPEN_REVIEW, None) is not None:
        plan_editor.set_plan(st.session_state.pop(_OWN_PLAN, None))
    if "review" in st.query_params:
        del st.query_params["review"]


def _render_decided(review: RunRecord) -> None:
    """A review decided already (here, elsewhere, or by the API): its run to open."""
    st.info(literal(review_text(review, current_language()) or ""),  # type: ignore[arg-type]
            icon=":material/fact_check:")
    st.page_link("pages/run.py", label=t("review_open_run"), icon=":material/play_circle:",
                 query_params={"run": review.run_id})


def _render_pending(review: RunRecord) -> None:
    """The agent's plan to edit, and the decision on it."""
    st.info(literal(review_text(review, current_language()) or ""),  # type: ignore[arg-type]
            icon=":material/smart_toy:")
    st.caption(t("review_plan_intro"))
    if st.button(t("review_close"), key="agent_review_close", icon=":material/arrow_back:"):
        _close()
        st.rerun()
    st.divider()
    plan: Plan = st.session_state["plan"]
    st.markdown(f"**{t('goal')}:** {literal(plan.goal)}")
    registry = review_registry(review)
    edited, problems = plan_editor.render_plan_review(registry, offline=True,
                                                      declared=partial(review_problems, review))
    _render_effects(edited, registry)
    _render_decision(review.run_id, edited, registry, blocked=bool(problems))


def _render_effects(plan: Plan, registry: ToolRegistry) -> None:
    """Which steps have a side effect, as the agent declared its tools."""
    effects = ", ".join(f"{literal(step.id)} ({literal(step.tool or '')})"
                        for step in plan.steps if has_side_effect(step, registry))
    with st.container(key="agent_review_effects"):
        if effects:
            st.markdown(f":orange[:material/warning: {t('review_effects', steps=effects)}]")
        else:
            st.caption(t("review_no_effects"))


def _render_decision(review_id: str, edited: Plan, registry: ToolRegistry, *,
                     blocked: bool) -> None:
    """Approve (as edited) or reject with a comment; then the review's run opens."""
    needed = start_action(edited, registry)
    allowed = identity.allows(needed)
    if not allowed:
        st.caption(":material/lock: " + t("needs_role", role=t(f"role_{NEEDS[needed]}")))
    comment = st.text_area(t("review_comment"), key="agent_review_comment", height=68)
    approve, reject = st.columns(2)
    if approve.button(t("review_approve"), key="agent_review_approve", type="primary",
                      icon=":material/check:", disabled=blocked or not allowed,
                      help=t("approve_blocked") if blocked else t("review_approve_help"),
                      width="stretch"):
        _decide(review_id, partial(approve_review, edited=edited))
    if reject.button(t("review_reject"), key="agent_review_reject", icon=":material/block:",
                     width="stretch"):
        if not comment.strip():
            st.error(t("review_reject_needs_comment"))
            return
        _decide(review_id, partial(reject_review, comment=comment))


def _decide(review_id: str, decision: Callable[[Any, str, Actor], object]) -> None:
    """Make ``decision`` (of the store, the review and the person); open the review's run."""
    try:
        decision(state.runner().store, review_id, identity.actor())
    except PlanBoardError as exc:  # refused (an edit's problem, a role, decided elsewhere)
        st.error(error_text(exc))
        return
    _close()
    st.switch_page("pages/run.py", query_params={"run": review_id})
