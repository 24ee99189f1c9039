"""The shared page frame: every page starts through dashboard.py, then shows a title and caption.

Streamlit treats a ``pages/`` folder next to the entry script as a legacy multipage app
until ``st.navigation`` has been called once in the process. So the first run after a
server start (and every AppTest run) executes dashboard.py *as a page*, or even a page file
directly, skipping dashboard.py: the address /run?run=... then shows no sidebar, no settings and
keeps doing so. :func:`ensure_entrypoint` notices that legacy mode and runs dashboard.py in
place as the real entry script (with the entry script's identity, so widget state matches
later runs), which calls ``st.navigation`` and draws the page the address names in the same
run, keeping clicks and query parameters.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import streamlit as st

from ui import state
from ui.i18n import t

__all__ = ["ENTRYPOINT", "ensure_entrypoint", "page_header"]

ENTRYPOINT = Path(__file__).resolve().parent.parent / "dashboard.py"


def ensure_entrypoint() -> None:
    """Run dashboard.py as the entry script if Streamlit started this run in legacy pages mode."""
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not getattr(PagesManager, "uses_pages_directory", False):
        return
    PagesManager.uses_pages_directory = False  # what st.navigation would do, one step early
    with ctx.run_with_active_hash(ctx.pages_manager.main_script_hash):
        runpy.run_path(str(ENTRYPOINT), run_name="__main__")
    st.stop()  # dashboard.py has drawn the whole app already


def page_header(title_key: str, caption_key: str, *, show_mode: bool = True) -> None:
    """Title and caption of a page, plus (``show_mode``) whether this session uses the LLM.

    The run page leaves the mode out: a run shows the settings it was started with.
    """
    ensure_entrypoint()
    state.init_session()
    st.title(t(title_key))
    if not show_mode:
        st.caption(t(caption_key))
        return
    badge = t("badge_offline") if state.settings().offline else t("badge_llm")
    st.caption(f"{t(caption_key)} · {badge}")
