"""The plan while the planner writes it: the steps so far in the table and the graph, and a
placeholder for the rest. Read-only: the finished, checked plan is the one reviewed."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.plan.edit import COLUMNS, plan_to_rows
from core.plan.graph import plan_to_dot
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry
from ui.graph_view import plan_graph
from ui.i18n import t

__all__ = ["render_plan_preview"]

_NEXT = "…"  # the placeholder's id, in the table and in the graph


def render_plan_preview(goal: str, steps: list[Step], registry: ToolRegistry) -> None:
    """Draw ``steps`` (a plan being written for ``goal``) with a placeholder for the rest."""
    st.info(t("planning_streamed", count=len(steps)), icon=":material/hourglass_top:")
    plan = Plan(goal=goal, steps=[step.model_copy(deep=True) for step in steps])
    st.subheader(t("plan_graph"))
    plan_graph(_with_placeholder(plan_to_dot(plan, registry=registry)),
               key="plan_preview_graph")
    st.subheader(t("plan_table"))
    rows = [*plan_to_rows(plan), {"id": _NEXT, "description": t("planning_next_step")}]
    frame = pd.DataFrame(rows, columns=list(COLUMNS)).astype("string")
    st.dataframe(frame, key="plan_preview_table", hide_index=True, width="stretch")


def _with_placeholder(dot: str) -> str:
    """``dot`` with a dashed node standing for the steps still being written."""
    label = f"{_NEXT}\\n{t('planning_next_step')}".replace('"', "'")
    node = f'  "{_NEXT}" [label="{label}", style="rounded,dashed", color="#ADB5BD"];\n'
    end = dot.rstrip().rfind("}")
    return dot[:end] + node + dot[end:]
