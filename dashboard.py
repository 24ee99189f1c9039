"""The dashboard script: navigation, the settings sidebar and the shared page frame (served
by app.py)."""

from __future__ import annotations

import streamlit as st
from dotenv import find_dotenv, load_dotenv

from ui import state
from ui.frame import ensure_entrypoint
from ui.i18n import t
from ui.identity import require_sign_in
from ui.language import keep_language
from ui.settings import keep_settings, render_sidebar

ensure_entrypoint()  # the first run after a start may treat this file as a legacy page
load_dotenv(find_dotenv(usecwd=True))  # .env next to where `streamlit run` started

st.set_page_config(page_title="PlanBoard", page_icon="🧭", layout="wide")
state.init_session()
app_pages = [
    st.Page("pages/plan.py", title=t("nav_plan"), icon=":material/edit_note:",
            default=True),
    st.Page("pages/run.py", title=t("nav_run"), icon=":material/play_circle:", url_path="run"),
    st.Page("pages/history.py", title=t("nav_history"), icon=":material/history:",
            url_path="history"),
    st.Page("pages/lessons.py", title=t("nav_lessons"), icon=":material/school:",
            url_path="lessons"),
    st.Page("pages/tools.py", title=t("nav_tools"), icon=":material/build:", url_path="tools"),
    st.Page("pages/templates.py", title=t("nav_templates"), icon=":material/library_books:",
            url_path="templates"),
    st.Page("pages/audit.py", title=t("nav_audit"), icon=":material/fact_check:",
            url_path="audit"),
]
require_sign_in(app_pages)  # under [auth], nothing else is drawn for a session nobody signed into

keep_settings()
keep_language()  # in the address, which st.switch_page cleared
# the run page's presentation view (?run=<id>&present=1) is for a projector: no sidebar
presenting = st.query_params.get("present") == "1"
if not presenting:
    render_sidebar()
pages = st.navigation(app_pages, position="hidden" if presenting else "sidebar")
state.note_page(pages.url_path)
pages.run()
