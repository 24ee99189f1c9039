"""PlanBoard's server: the dashboard (dashboard.py), the stream of step marks its run page
listens to (ui.live_marks) and the review API for agents built elsewhere (ui.review_api).
``streamlit run app.py`` serves them all."""

from dotenv import find_dotenv, load_dotenv

load_dotenv(find_dotenv(usecwd=True))  # before the stream opens the run store

import streamlit as st  # noqa: E402

from ui.live_marks import feed_lifespan, feed_routes  # noqa: E402
from ui.review_api import api_routes  # noqa: E402

app = st.App("dashboard.py", routes=[*feed_routes(), *api_routes()], lifespan=feed_lifespan)
