"""PlanBoard's server: the dashboard (dashboard.py) and the stream of step marks its run
page listens to (ui.live_marks). ``streamlit run app.py`` serves both."""

import streamlit as st

from ui.live_marks import feed_routes

app = st.App("dashboard.py", routes=feed_routes())
