"""History page: past runs, a status filter, opening a run, and exports."""

from __future__ import annotations

import streamlit as st

from core.lifecycle import RUN_STATUSES
from core.review.reviews import run_agent
from ui import state
from ui.frame import page_header
from ui.i18n import current_language, t
from ui.run_exports import render_exports


def main() -> None:
    """Draw the list of runs and the selected run's actions."""
    page_header("history_title", "history_caption")
    status = st.selectbox(
        t("history_filter"), options=["all", *RUN_STATUSES], key="history_status",
        format_func=lambda s: t("history_all") if s == "all" else t(f"run_status_{s}"),
    )
    runs = state.runner().store.list_runs(status=None if status == "all" else status)
    if not runs:
        st.info(t("history_empty") if status == "all" else t("history_none_with_status"))
        return
    st.dataframe(
        [
            {
                t("col_run"): r.run_id,
                t("col_agent"): run_agent(r, current_language()),  # type: ignore[arg-type]
                t("col_status"): t(f"run_status_{r.status}"),
                t("col_request"): r.request,
                t("col_created"): r.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                t("usage_calls"): r.usage.llm_calls,
            }
            for r in runs
        ],
        hide_index=True, width="stretch",
    )
    by_id = {r.run_id: r for r in runs}
    pick, open_column = st.columns([4, 1], vertical_alignment="bottom")
    run_id = pick.selectbox(
        t("history_pick"), options=list(by_id), key="history_run",
        format_func=lambda rid: " · ".join(
            (rid, t(f"run_status_{by_id[rid].status}"), by_id[rid].request[:60])),
    )
    if open_column.button(t("history_open"), key="history_open", type="primary",
                          width="stretch"):
        st.switch_page("pages/run.py", query_params={"run": run_id})
    render_exports(run_id)


main()
