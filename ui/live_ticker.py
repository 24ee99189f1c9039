"""Follow something live from the browser: a tick answered when it changed, not per tick.

An inline component (``st.components.v2``, no iframe, nothing drawn) sends one tick
``every_s`` seconds after it is drawn, and no other until it is drawn again. The tick's
callback runs on the server before anything is drawn and *holds*: it sleeps until the
followed thing changed (the run page waits on core.runs.live_views.RunChanges), or a
person's own action waits to be served (:func:`request_pending`), or a timeout. The page
then redraws what changed (``st.rerun`` of the live fragment and of the ticker's own,
which draws the ticker again: the next tick). So a change reaches the screen about as soon
as it happens, an idle follower costs one small rerun per timeout, and many followers
cost no more than their changes. (A fragment's own ``run_every`` would rerun, and redraw
the live part, on every tick, in the server and in every browser; a hold inside it would
hold up the person's clicks.)

Whether a person's action waits is read from the script run's pending requests, which
Streamlit does not publish: when it cannot be read, a hold simply lasts until a change or
its timeout (an action then waits up to that long).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

__all__ = ["live_ticker", "page_switch_pending", "request_pending"]

# Streamlit calls the function again whenever the element is drawn again: the tick is
# one timeout per drawing, kept on the element and replaced, never added to.
_JS = """
export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  clearTimeout(parentElement.planboardTick);
  parentElement.planboardTick = setTimeout(
    () => setTriggerValue("tick", data.drawing), data.every_ms);
  return () => clearTimeout(parentElement.planboardTick);
}
"""

_ticker = st.components.v2.component("planboard_live_ticker", js=_JS)


def live_ticker(key: str, every_s: float, on_tick: Callable[[], None], *,
                drawing: int) -> None:
    """One tick ``every_s`` seconds after this drawing (``drawing``: a number new each
    time, so that the element is drawn again); the tick calls ``on_tick``."""
    _ticker(key=key, data={"every_ms": int(every_s * 1000), "drawing": drawing},
            height=0, on_tick_change=on_tick)


def request_pending() -> bool:
    """True when the session has a request waiting (a click, a page switch, a stop)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

    ctx = get_script_run_ctx(suppress_warning=True)
    state = getattr(getattr(ctx, "script_requests", None), "_state", None)
    return state is not None and state is not ScriptRequestType.CONTINUE


def page_switch_pending() -> bool:
    """True when the session's waiting request opens another page (a sidebar link). A rerun
    asked for now would be folded into it with the newer request's page, this one, and
    the person's page switch would be lost: Streamlit keeps the newest page of the
    requests it folds together."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    waiting = getattr(getattr(ctx, "script_requests", None), "_rerun_data", None)
    return (request_pending() and waiting is not None
            and waiting.page_script_hash not in ("", ctx.page_script_hash))
