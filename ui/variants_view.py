"""Plan variants on the Plan page: up to three alternative plans side by side, each with its
figures (core.runs.variants), and "Use this plan", which sends one to the normal review."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.base.messages import msg
from core.runs.variants import MAX_VARIANTS, Variant, Variants
from ui.i18n import t
from ui.messages import said
from ui.safe_text import literal

__all__ = ["forget", "keep", "render_control", "render_variants"]

_KEPT = "plan_variants"  # the Variants drafted for the request under comparison


def render_control() -> int | None:
    """How many variants to draft and the button that asks for them: the number asked for
    when it was clicked, else None."""
    with st.popover(t("variants"), icon=":material/view_column:"):
        count = st.number_input(t("variants_count"), min_value=2, max_value=MAX_VARIANTS,
                                value=MAX_VARIANTS, step=1, key="variants_count")
        st.caption(t("variants_help"))
        if st.button(t("variants_draft"), key="draft_variants", type="primary",
                     icon=":material/auto_awesome:"):
            return int(count)
    return None


def keep(drafted: Variants) -> None:
    """Show ``drafted`` until one of them is used or another plan is drafted."""
    st.session_state[_KEPT] = drafted


def forget() -> None:
    """Drop the variants on screen (a plan went to review another way)."""
    st.session_state.pop(_KEPT, None)


def render_variants(on_use: Callable[[Variant, Variants], None]) -> bool:
    """The variants side by side, each with "Use this plan" (``on_use(variant, all)`` runs as
    the button's callback, before the page is drawn again); True when any are on screen."""
    drafted: Variants | None = st.session_state.get(_KEPT)
    if drafted is None or not drafted.variants:
        return False
    with st.container(key="variants"):
        st.subheader(t("variants_title"))
        for note in drafted.notes:
            st.info(literal(said(note)), icon=":material/info:")
        columns = st.columns(len(drafted.variants))
        for number, (column, variant) in enumerate(zip(columns, drafted.variants,
                                                       strict=True), 1):
            with column.container(border=True, key=f"variant_{number}"):
                _render_variant(number, variant)
                st.button(t("variant_use"), key=f"use_variant_{number}", type="primary",
                          width="stretch", icon=":material/check:",
                          on_click=on_use, args=(variant, drafted))
    return True


def _render_variant(number: int, variant: Variant) -> None:
    angles = " · ".join(said(msg(f"variants.angle.{angle}")) for angle in variant.angles)
    st.markdown(f"**{t('variant_title', number=number)}**")
    st.caption(literal(angles) if angles else t("variant_offline"))
    figures = variant.figures
    st.markdown(t("variant_figures", steps=figures.steps, path=figures.critical_path,
                  calls=figures.llm_calls))
    st.markdown(t("variant_side_effects", steps=", ".join(figures.side_effects))
                if figures.side_effects else t("variant_no_side_effects"))
    if figures.problems:
        st.warning(t("variant_problems", count=len(figures.problems)) + "\n\n"
                   + "\n".join(f"- {literal(problem)}" for problem in figures.problems))
    else:
        st.success(t("variant_no_problems"))
    st.dataframe(
        [{t("variant_column_id"): step.id, t("variant_column_step"): step.description,
          t("variant_column_tool"): step.tool or "—",
          t("variant_column_after"): ", ".join(step.depends_on)}
         for step in variant.plan.steps],
        hide_index=True, width="stretch")
