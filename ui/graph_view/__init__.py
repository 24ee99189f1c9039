"""The plan graph: a Graphviz drawing with pan, zoom and click-a-step-to-select.

A small custom component (``frontend/``): the browser lays out the DOT of
``core.plan.graph.plan_to_dot`` with Graphviz compiled to WebAssembly (vendored, so the
app needs no ``dot`` binary), shows it whole at first when its text stays at 11 px or more
(else as much as such text allows, the rest a scroll away), and
reports a click on a step's node, or on a phase (its folded node or its cluster), which
folds or unfolds it: :func:`folded_phases` keeps what a person chose on top of
``core.plan.graph.default_folded``. AppTest cannot draw it; tests read its arguments (the
``dot``) from the element's proto instead.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st
import streamlit.components.v1 as components

from core.plan.graph import default_folded
from core.plan.model import Plan
from ui.i18n import current_language

__all__ = ["folded_phases", "plan_graph", "toggle_phase"]

_FRONTEND = Path(__file__).resolve().parent / "frontend"
_component = components.declare_component("plan_graph", path=str(_FRONTEND))

# The toolbar's tooltips; few enough to live with the widget that shows them.
_LABELS: dict[str, dict[str, str]] = {
    "en": {
        "zoom-in": "Zoom in",
        "zoom-out": "Zoom out",
        "fit": "Show the whole graph",
        "hint": "Drag to pan · Ctrl + wheel to zoom · click a step to select it, a phase "
                "to fold or unfold it",
    },
    "zh": {
        "zoom-in": "放大",
        "zoom-out": "缩小",
        "fit": "显示整张图",
        "hint": "拖动以平移 · 按住控制键滚动滚轮以缩放 · 点击步骤以选中，点击阶段以折叠或展开",
    },
}


def plan_graph(
    dot: str,
    *,
    key: str,
    height: int = 460,
    selected: str | None = None,
    on_select: Callable[[str], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
    live: dict[str, Any] | None = None,
) -> None:
    """Draw ``dot`` (at most ``height`` px tall) with ``selected`` step outlined; ``live``
    (ui.live_marks.graph_marks): the run's pushed step marks are painted on the nodes.

    A click on a step's node calls ``on_select(step_id)`` as a widget callback, before the
    next script run (so it may set other widgets' session state); every click counts, also
    a second one on the same node. Nodes of missing dependencies are not selectable. A
    click on a phase (its node or its cluster) calls ``on_phase(phase_id)`` the same way.
    """
    seen = f"{key}__seen"

    def clicked() -> None:
        value = st.session_state.get(key)
        if not isinstance(value, dict) or value.get("nonce") == st.session_state.get(seen):
            return
        st.session_state[seen] = value.get("nonce")
        step, phase = value.get("step"), value.get("phase")
        if on_select is not None and isinstance(step, str) and step:
            on_select(step)
        if on_phase is not None and isinstance(phase, str) and phase:
            on_phase(phase)

    _component(
        dot=dot, selected=selected, height=height, labels=_LABELS[current_language()],
        live=live,
        key=key, default=None, on_change=clicked,
    )


def _folds(key: str, plan: Plan) -> dict[str, bool]:
    """The phases a person folded (True) or unfolded (False) in graph ``key`` for this
    plan (a new plan starts with none)."""
    kept = st.session_state.get(f"{key}__folds")
    if not isinstance(kept, dict) or kept.get("plan") != plan.id:
        kept = st.session_state[f"{key}__folds"] = {"plan": plan.id, "chosen": {}}
    return kept["chosen"]


def folded_phases(key: str, plan: Plan) -> set[str]:
    """The phases graph ``key`` draws folded: as ``default_folded`` says (for a plan over 20
    steps, every phase but the current one), with what a person chose on top."""
    folded = default_folded(plan)
    for phase_id, fold in _folds(key, plan).items():
        (folded.add if fold else folded.discard)(phase_id)
    return folded & {phase.id for phase in plan.phases}


def toggle_phase(key: str, plan: Plan, drawn: set[str], phase_id: str) -> None:
    """A click on phase ``phase_id`` of graph ``key``, which drew ``drawn`` folded: it is
    drawn the other way from now on (a widget callback)."""
    _folds(key, plan)[phase_id] = phase_id not in drawn
