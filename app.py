"""PlanBoard's server: the dashboard (dashboard.py) and the stream of step marks its run
page listens to (ui.live_marks). ``streamlit run app.py`` serves both."""

from dotenv import find_dotenv, load_dotenv

load_dotenv(find_dotenv(usecwd=True))  # before the stream opens the run store

import streamlit as st  # noqa: E402

from ui.live_marks import feed_lifespan, feed_routes  # noqa: E402

app = st.App("dashboard.py", routes=feed_routes(), lifespan=feed_lifespan)
