"""A page with only the plan graph, for tests/test_browser_graph.py (not part of the app).

The address picks the plan: ``?scenario=churn-analysis&lang=zh`` drafts that scenario's plan
offline in that language (a side-effecting step marked ⚠, as the pages draw it);
``&narrow=1`` puts the graph in the run page's narrow column; ``&pick=s6`` selects a
step from outside the graph (as the plan table does).
A click on a step is written below the graph ("selected: s3 (2 clicks)").
"""

from __future__ import annotations

import streamlit as st

from core.plan.graph import plan_to_dot
from core.tools.toolsets import default_registry
from demo.offline.planner import offline_plan
from demo.scenarios import get_scenario
from ui.graph_view import plan_graph

st.set_page_config(layout="wide")  # as app.py
lang = st.query_params.get("lang", "en")
st.session_state["language"] = lang
scenario = get_scenario(st.query_params.get("scenario", "churn-analysis"))
registry = default_registry()
plan = offline_plan(scenario.request(lang), registry)


def _select(step_id: str) -> None:
    st.session_state["picked"] = step_id
    st.session_state["clicks"] = st.session_state.get("clicks", 0) + 1


place = st.columns([3, 2])[1] if st.query_params.get("narrow") == "1" else st.container()
with place:
    plan_graph(plan_to_dot(plan, registry=registry), key="graph",
               selected=st.session_state.get("picked") or st.query_params.get("pick"),
               on_select=_select)
st.write(f"selected: {st.session_state.get('picked')} ({st.session_state.get('clicks', 0)} clicks)")
