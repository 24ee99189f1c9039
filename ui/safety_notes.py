"""What a run does without asking a person, said where it matters: beside "Approve & run",
under "Generate plan" while reads start during planning, and at the top of the run page.

Which options let something run unasked is core's to decide
(:func:`core.execution.options.runs_unasked`, a run's :attr:`RunView.unasked`); this
module words it.
"""

from __future__ import annotations

import streamlit as st

from core.execution.options import RunOptions, Unasked, runs_unasked
from core.plan.approval import has_side_effect
from core.plan.model import Plan
from core.tools.registry import ToolRegistry
from ui.i18n import t
from ui.safe_text import literal

__all__ = ["render_approval_note", "render_read_ahead_note", "render_run_note"]

_CONFIRMED = ":material/verified_user:"
_UNASKED = ":material/warning:"


def render_approval_note(plan: Plan, registry: ToolRegistry, options: RunOptions) -> None:
    """Beside Approve & run (``approve_note``): the plan's side-effecting steps, and whether
    each waits for a person's Confirm under ``options``."""
    effects = ", ".join(f"{literal(step.id)} ({literal(step.tool or '')})"
                        for step in plan.steps if has_side_effect(step, registry))
    with st.container(key="approve_note"):
        if not effects:
            st.caption(f"{_CONFIRMED} {t('approve_no_side_effects')}")
        elif "side_effects" in runs_unasked(options.model_dump()):
            st.markdown(f":orange[{_UNASKED} {t('approve_unconfirmed', steps=effects)}]")
        else:
            st.markdown(f"{_CONFIRMED} {t('approve_confirmed', steps=effects)}")


def render_read_ahead_note() -> None:
    """Under Generate plan while read ahead is on: reads start before any approval."""
    st.caption(f":orange[{_UNASKED} {t('read_ahead_on')}]")


def render_run_note(unasked: list[Unasked]) -> None:
    """At the top of the run page (``run_safety``): whether the run's side effects wait for a
    person, and what else of it ran or runs ``unasked`` (:attr:`RunView.unasked`)."""
    lines = [f":orange[{_UNASKED} {t('run_unconfirmed')}]" if "side_effects" in unasked
             else f"{_CONFIRMED} {t('run_confirmed')}"]
    if "new_versions" in unasked:
        lines.append(f":orange[{_UNASKED} {t('run_new_versions_approved')}]")
    if "read_ahead" in unasked:
        lines.append(f":material/bolt: {t('run_read_ahead')}")
    with st.container(key="run_safety"):
        st.markdown("  \n".join(lines))
