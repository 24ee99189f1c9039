"""The run's timeline on the run page: a Gantt chart and the cost meter.

Draws a :class:`core.runs.timeline.Timeline` as it is: a row per step (with its lane), its
bar cut into waiting (pale), the demo pace (grey-blue), a person's decision (orange), model
time (violet), tool time (blue) and other work (grey); replans and decisions as dashed
rules; each step's LLM calls and tokens after its bar; and the calls made against the calls
expected before the run.
"""

from __future__ import annotations

import altair as alt
import streamlit as st

from core.base.messages import msg
from core.runs.timeline import Bar, Marker, Timeline, marker_message, meter_text
from ui.i18n import current_language, t
from ui.messages import said

__all__ = ["render_timeline"]

_KINDS = ("queued", "pace", "person", "model", "tool", "work")
_COLOURS = ("#e9ecef", "#c5d0dc", "#ff922b", "#7950f2", "#228be6", "#868e96")


def render_timeline(timeline: Timeline) -> None:
    """The Gantt chart of ``timeline`` and its cost meter (a caption before any step)."""
    with st.container(key="run_timeline"):
        _render_meter(timeline)
        if not timeline.bars:
            st.caption(said(msg("timeline.empty")))
            return
        st.caption(said(msg("timeline.lanes")))
        st.altair_chart(_chart(timeline), width="stretch")


def _render_meter(timeline: Timeline) -> None:
    words = meter_text(timeline.meter, current_language())
    fraction = timeline.meter.fraction
    if fraction is None:
        st.caption(words)
    else:
        st.progress(min(1.0, fraction), text=words)


def _chart(timeline: Timeline) -> alt.LayerChart:
    kinds = {kind: said(msg(f"timeline.kind_{kind}")) for kind in _KINDS}
    order = [_row(bar) for bar in sorted(timeline.bars, key=lambda b: (b.start_s, b.step_id))]
    segments = [
        {"step": _row(bar), "kind": kinds[s.kind], "start": s.start_s, "end": s.end_s,
         "seconds": round(s.seconds, 3), "description": bar.description}
        for bar in timeline.bars for s in bar.segments
    ]
    tallies = [{"step": _row(bar), "end": bar.end_s,
                "label": t("timeline_tally", calls=bar.llm_calls, tokens=bar.tokens)}
               for bar in timeline.bars if bar.llm_calls]
    y = alt.Y("step:N", sort=order, title=None, axis=alt.Axis(labelOverlap=False,
                                                              labelLimit=260))
    x_title = t("timeline_seconds")
    bars = alt.Chart(alt.Data(values=segments)).mark_bar(height=14).encode(
        x=alt.X("start:Q", title=x_title), x2="end:Q", y=y,
        color=alt.Color("kind:N", title=None, legend=alt.Legend(orient="bottom"),
                        scale=alt.Scale(domain=list(kinds.values()), range=list(_COLOURS))),
        tooltip=[alt.Tooltip("step:N", title=t("timeline_step")),
                 alt.Tooltip("kind:N", title=t("timeline_part")),
                 alt.Tooltip("seconds:Q", title=x_title),
                 alt.Tooltip("description:N", title=t("col_description"))])
    labels = alt.Chart(alt.Data(values=tallies)).mark_text(
        align="left", dx=4, fontSize=11).encode(x="end:Q", y=y, text="label:N")
    layers = [bars, labels]
    if timeline.markers:
        marks = [{"at": m.at_s, "label": _marker_label(m)} for m in timeline.markers]
        layers.append(alt.Chart(alt.Data(values=marks)).mark_rule(
            strokeDash=[4, 3], color="#e03131").encode(
            x="at:Q", tooltip=[alt.Tooltip("label:N", title=t("timeline_marker"))]))
    return alt.layer(*layers).properties(height=alt.Step(26))


def _row(bar: Bar) -> str:
    tool = bar.tool or t("no_tool")
    return f"L{bar.lane + 1} · {bar.step_id} · {tool}"


def _marker_label(marker: Marker) -> str:
    reason = marker.reason(current_language())
    return said(marker_message(marker)) + (f" — {reason}" if reason else "")
