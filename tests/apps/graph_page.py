"""A page with only the plan graph, for tests/browser/test_browser_graph.py (not part of the app).

The address picks the plan: ``?scenario=churn-analysis&lang=zh`` drafts that scenario's plan
offline in that language (a side-effecting step marked ⚠, as the pages draw it);
``&narrow=1`` puts the graph in the run page's narrow column, ``&narrow=plan`` in the Plan
page's column beside the step panel, ``&narrow=both`` draws it at the page's width and then
in the narrow column; ``&pick=s6`` selects a
step from outside the graph (as the plan table does); ``?phased=60`` draws a plan of 12
phases of 5 steps (folded as the pages fold it: a click on a phase folds or unfolds it),
``?phased=review`` the quarterly review scenario's phased plan, ``?phased=twins`` two phases
side by side under long titles in two languages (each with a refund, as issue 44 found
them); ``&feed=/api/runs/x/steps``
has the graph follow that stream of step marks (as a followed run's graph does).
A click on a step is written below the graph ("selected: s3 (2 clicks)"), the phases drawn
folded too ("folded: p2, p3"). The text field at the page's foot (``.st-key-query``) takes
such a query too (``scenario=shop-refund&lang=zh``): Enter draws it in a rerun of the page,
in the frames already there, instead of a new load of the page (which costs Chromium
seconds of CPU).
"""

from __future__ import annotations

from functools import partial
from urllib.parse import parse_qsl

import streamlit as st

from core.plan.graph import STATUS_COLOURS, plan_to_dot
from core.plan.model import STATUS_ICONS, Phase, Plan, Step
from core.tools.toolsets import default_registry
from demo.offline.phased import phased_plan
from demo.offline.planner import offline_plan
from demo.scenarios import get_scenario
from ui.graph_view import folded_phases, plan_graph, toggle_phase

st.set_page_config(layout="wide")  # as dashboard.py
typed = st.session_state.get("query")
params = dict(parse_qsl(typed)) if typed else st.query_params.to_dict()
lang = params.get("lang", "en")
st.session_state["language"] = lang
scenario = get_scenario(params.get("scenario", "churn-analysis"))
registry = default_registry()
plan = offline_plan(scenario.request(lang), registry)


def _twelve_phases() -> Plan:
    steps, previous = [], None
    for number in range(1, 13):
        for _ in range(5):
            sid = f"s{len(steps) + 1}"
            steps.append(Step(id=sid, description=f"Collect figures for part {sid}",
                              tool="calculate", args={"expression": f"{len(steps)} + 1"},
                              depends_on=[previous] if previous else [], phase=f"p{number}"))
            previous = sid
    return Plan(id="long", goal="a long job", phases=[
        Phase(id=f"p{n}", title=f"Stage {n} of the review",
              depends_on=[f"p{n - 1}"] if n > 1 else []) for n in range(1, 13)], steps=steps)


def _twin_phases() -> Plan:
    refund = {"tool": "apply_refund", "depends_on": ["s1"],
              "args": {"order_id": "88231", "reason": "用户申请退货"},
              "description": "如果订单 88231 已签收，为其申请退款（原因：用户申请退货）",
              "condition": "s1.status == 'delivered'"}
    return Plan.model_validate({"id": "twins", "goal": "mixed", "phases": [
        {"id": "p1", "title": "帮我查一下 order 88231 到了没"},
        {"id": "p2", "title": "If delivered 就 refund it", "depends_on": ["p1"]},
        {"id": "p3", "title": "Tell me the refund number", "depends_on": ["p1"]},
        {"id": "p4", "title": "综合以上结果，给出最终回复", "depends_on": ["p1", "p2", "p3"]},
    ], "steps": [
        {"id": "s1", "phase": "p1", "tool": "query_order", "args": {"order_id": "88231"},
         "description": "查询订单 88231 的详情，确认商品和状态"},
        {"id": "s2", "phase": "p2", **refund}, {"id": "s3", "phase": "p3", **refund},
        {"id": "s4", "phase": "p4", "description": "综合以上结果，给出最终回复",
         "depends_on": ["s1", "s2", "s3"]},
    ]})


phased = params.get("phased")
if phased == "60":
    plan = _twelve_phases()
elif phased == "twins":
    plan = _twin_phases()
elif phased == "review":
    plan = phased_plan(get_scenario("ops-quarterly-review").request(lang), registry)
    plan.id = "review"  # drafted again on every run: the person's folds belong to one plan
folded = folded_phases("graph", plan) if plan.phases else set()
feed = params.get("feed")
live = {"feed": feed, "seq": 0, "icons": STATUS_ICONS, "fills": STATUS_COLOURS} if feed else None


def _select(step_id: str) -> None:
    st.session_state["picked"] = step_id
    st.session_state["clicks"] = st.session_state.get("clicks", 0) + 1


def _place(narrow: str | None):
    """Where the graph goes for ``narrow``: the page's width, or a column as a page has it."""
    if narrow == "1":  # the run page's graph beside its cards
        return st.columns([3, 2])[1]
    if narrow == "plan":  # ui.plan_editor's, beside the step panel
        return st.columns([3, 2], gap="medium")[0]
    return st.container()


narrow = params.get("narrow")
if narrow == "plan":  # the dashboard's sidebar takes its width from the page, as there
    st.sidebar.write("settings")
# ``narrow=both``: the full-width graph, then the run page's narrow one, each in a container
# keyed by its width (one page load measures both)
for width, key in ([("0", "graph"), ("1", "graph_narrow")] if narrow == "both"
                   else [(narrow or "0", "graph")]):
    with st.container(key=f"width_{width}"), _place(width):
        plan_graph(plan_to_dot(plan, registry=registry, folded=folded), key=key,
                   selected=st.session_state.get("picked") or params.get("pick"),
                   on_select=_select, on_phase=partial(toggle_phase, "graph", plan, folded),
                   live=live)
st.write(f"selected: {st.session_state.get('picked')} ({st.session_state.get('clicks', 0)} clicks)")
st.write(f"folded: {', '.join(sorted(folded, key=lambda p: int(p[1:]))) or 'none'}")
st.text_input("query", key="query")  # another address's query, drawn in a rerun
