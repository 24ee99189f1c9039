"""The plan graph: a Graphviz drawing with pan, zoom and click-a-step-to-select.

A small custom component (``frontend/``): the browser lays out the DOT of
``core.plan.graph.plan_to_dot`` with Graphviz compiled to WebAssembly (vendored, so the
app needs no ``dot`` binary), fits it to the width without drawing text below 11 px, and
reports a click on a step's node. AppTest cannot draw it; tests read its arguments (the
``dot``) from the element's proto instead.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st
import streamlit.components.v1 as components

from ui.i18n import current_language

__all__ = ["plan_graph"]

_FRONTEND = Path(__file__).resolve().parent / "frontend"
_component = components.declare_component("plan_graph", path=str(_FRONTEND))

# The toolbar's tooltips; few enough to live with the widget that shows them.
_LABELS: dict[str, dict[str, str]] = {
    "en": {
        "zoom-in": "Zoom in",
        "zoom-out": "Zoom out",
        "fit": "Show the whole graph",
        "hint": "Drag to pan · Ctrl + wheel to zoom · click a step to select it",
    },
    "zh": {
        "zoom-in": "放大",
        "zoom-out": "缩小",
        "fit": "显示整张图",
        "hint": "拖动以平移 · 按住控制键滚动滚轮以缩放 · 点击步骤以选中",
    },
}


def plan_graph(
    dot: str,
    *,
    key: str,
    height: int = 460,
    selected: str | None = None,
    on_select: Callable[[str], None] | None = None,
) -> None:
    """Draw ``dot`` (at most ``height`` px tall) with ``selected`` step outlined.

    A click on a step's node calls ``on_select(step_id)`` as a widget callback, before the
    next script run (so it may set other widgets' session state); every click counts, also
    a second one on the same node. Nodes of missing dependencies are not selectable.
    """
    seen = f"{key}__seen"

    def clicked() -> None:
        value = st.session_state.get(key)
        if not isinstance(value, dict) or value.get("nonce") == st.session_state.get(seen):
            return
        st.session_state[seen] = value.get("nonce")
        step = value.get("step")
        if on_select is not None and isinstance(step, str) and step:
            on_select(step)

    _component(
        dot=dot, selected=selected, height=height, labels=_LABELS[current_language()],
        key=key, default=None, on_change=clicked,
    )
