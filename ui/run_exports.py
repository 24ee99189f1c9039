"""A run's downloads (JSON record, Markdown report, DOT and SVG graph), for any page."""

from __future__ import annotations

import streamlit as st

from core.errors import PlanBoardError
from ui import state
from ui.i18n import current_language, t
from ui.messages import error_text

__all__ = ["render_exports"]

_EXPORTS = (("json", "application/json"), ("md", "text/markdown"),
            ("dot", "text/vnd.graphviz"), ("svg", "image/svg+xml"))


def render_exports(run_id: str) -> None:
    """"Export": a download button per format, or why a format cannot be made."""
    from core.runs.export import GraphvizMissingError, export_run

    store = state.runner().store
    st.subheader(t("export"))
    columns = st.columns(len(_EXPORTS))
    for (fmt, mime), column in zip(_EXPORTS, columns, strict=True):
        try:
            data = export_run(store, run_id, fmt, language=current_language())
        except GraphvizMissingError:
            column.warning(t("export_no_dot"))
            continue
        except PlanBoardError as exc:
            column.warning(error_text(exc))
            continue
        column.download_button(
            t(f"export_{fmt}"), data=data, file_name=f"planboard-{run_id}.{fmt}", mime=mime,
            key=f"export_{fmt}", width="stretch", icon=":material/download:",
        )
