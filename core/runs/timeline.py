"""A run at a glance: one bar per step on its lane, waits shaded, model and tool time apart.

:func:`run_timeline` reads a run's record and event log into a :class:`Timeline`: for every
step of the current plan that started, its bar from ``step_started`` to its end, cut into
segments — waiting in the queue, the demo pace, waiting for a person (from
``waiting_confirmation`` to the decision), its work inside tool calls, and the rest of its
work (a model's time, when the step asked one: the executor times the tool calls and the
whole work, see ``work_s``/``tool_s``/``check_s`` in ``step_*`` events); replans and a
person's decisions as markers; per-step LLM calls and tokens; and a :class:`CostMeter` of
the calls made against the calls expected before the run started (``options["estimate"]``).
Steps that overlap in time go to different lanes, so the lanes show the parallelism.

The dashboard draws it as a chart, the Markdown export as a Mermaid ``gantt`` block
(:func:`timeline_mermaid`) and ``show`` as text (:func:`timeline_text`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from core.base.language import Language
from core.base.messages import Message, msg, recorded, render
from core.base.usage import Usage
from core.plan.model import STATUS_ICONS, Step
from core.runs.live_run import USAGE_KEYS
from core.runs.view import step_usage
from core.store.run_store import RunRecord, StoredEvent

__all__ = [
    "Bar",
    "CostMeter",
    "Marker",
    "Segment",
    "SegmentKind",
    "Timeline",
    "marker_message",
    "meter_text",
    "run_timeline",
    "timeline_mermaid",
    "timeline_text",
]

SegmentKind = Literal["queued", "pace", "person", "tool", "model", "work"]
MarkerKind = Literal["replan", "approved", "rejected"]
_ENDS = {"step_completed", "step_failed", "step_skipped"}
_TEXT_MARKS = {"queued": "░", "pace": "┄", "person": "▒", "tool": "█", "model": "▓",
               "work": "▆"}


class Segment(BaseModel):
    """A stretch of a step's bar, in seconds from the run's start."""

    kind: SegmentKind
    start_s: float
    end_s: float

    @property
    def seconds(self) -> float:
        """How long it lasted."""
        return max(0.0, self.end_s - self.start_s)


class Bar(BaseModel):
    """One step on its lane: from waiting (when it had to) to its end (or now)."""

    step_id: str
    description: str
    tool: str | None = None
    status: str
    lane: int = 0
    start_s: float
    end_s: float
    ended: bool = True  # False while the step still runs (its bar ends at the last event)
    segments: list[Segment] = Field(default_factory=list)
    llm_calls: int = 0
    tokens: int = 0


class Marker(BaseModel):
    """A replan or a person's decision, at its time."""

    kind: MarkerKind
    at_s: float
    step_id: str | None = None
    version: int | None = None
    label: str = ""  # the replan's reason, as written
    message: Message | None = None  # the reason as a code, when PlanBoard worded it

    def reason(self, lang: Language) -> str:
        """Why the replan happened, in ``lang`` when PlanBoard worded it ("" for none)."""
        return render(self.message, lang) if self.message else self.label


class CostMeter(BaseModel):
    """LLM calls and tokens spent running the plan, against the calls expected."""

    estimated_calls: int | None = None  # predicted before the run started (None: unknown)
    calls: int = 0
    tokens: int = 0
    planning: Usage = Field(default_factory=Usage)  # planning and replanning, apart

    @property
    def fraction(self) -> float | None:
        """Calls made over calls expected (None when nothing was expected)."""
        if not self.estimated_calls:
            return None
        return self.calls / self.estimated_calls


class Timeline(BaseModel):
    """The bars, markers and cost meter of one run."""

    run_id: str
    started_at: datetime
    span_s: float = 0.0
    lanes: int = 0
    bars: list[Bar] = Field(default_factory=list)
    markers: list[Marker] = Field(default_factory=list)
    meter: CostMeter = Field(default_factory=CostMeter)


def run_timeline(record: RunRecord, events: list[StoredEvent]) -> Timeline:
    """The timeline of ``record`` from its event log (in order)."""
    started = next((e.at for e in events if e.kind == "run_started"),
                   events[0].at if events else record.created_at)
    last = max([e.at for e in events] + [started])
    at = _seconds_from(started)
    plan = record.plan
    ended_at: dict[str, float] = {}
    bars: list[Bar] = []
    pace = float(record.options.get("step_delay_s") or 0)
    for step in plan.steps if plan else []:
        bar = _bar(step, events, at, at(last), ended_at, pace)
        if bar is not None:
            bars.append(bar)
    _lanes(bars)
    markers = _markers(events, at)
    span = max([at(last)] + [b.end_s for b in bars])
    return Timeline(run_id=record.run_id, started_at=started, span_s=round(span, 3),
                    lanes=max((b.lane for b in bars), default=-1) + 1, bars=bars,
                    markers=markers, meter=_meter(record))


Clock = Callable[[datetime], float]  # a moment as seconds from the run's start


def _seconds_from(start: datetime) -> Clock:
    """Seconds from ``start``; what was recorded before it (a person's edit of the plan
    before approval) is at the start: the axis begins at 0, when the run did."""
    return lambda moment: max(0.0, round((moment - start).total_seconds(), 3))


def _bar(step: Step, events: list[StoredEvent], at: Clock, now_s: float,
         ended_at: dict[str, float], pace: float) -> Bar | None:
    """The step's last attempt as a bar (None when it never started nor waited)."""
    mine = [e for e in events if e.step_id == step.id]
    starts = [i for i, e in enumerate(mine) if e.kind == "step_started"]
    asks = [e for e in mine if e.kind == "waiting_confirmation"]
    if not starts and not asks:
        return None
    begin = starts[-1] if starts else None
    end_event = next((e for e in (mine[begin + 1:] if begin is not None else mine)
                      if e.kind in _ENDS), None)
    started_s = at(mine[begin].at) if begin is not None else None
    end_s = at(end_event.at) if end_event is not None else now_s
    segments: list[Segment] = []
    ready_s = max((ended_at.get(d, 0.0) for d in step.depends_on), default=0.0)
    first_s = started_s if started_s is not None else end_s
    if asks:
        asked = at(asks[-1].at)
        decided = next((at(e.at) for e in mine if e.kind in ("confirmed", "rejected")
                        and at(e.at) >= asked), started_s if started_s is not None else end_s)
        if asked > ready_s:
            segments.append(Segment(kind="queued", start_s=ready_s, end_s=asked))
        segments.append(Segment(kind="person", start_s=asked, end_s=decided))
        first_s = min(first_s, asked)
        ready_s = max(ready_s, decided)
    if started_s is not None and started_s - ready_s > 0.001 and not asks:
        segments.append(Segment(kind="queued", start_s=ready_s, end_s=started_s))
    if started_s is not None:
        segments += _work(started_s, end_s, end_event, step, pace)
    first_s = min([first_s] + [s.start_s for s in segments])
    ended_at[step.id] = end_s
    return Bar(step_id=step.id, description=step.description, tool=step.tool,
               status=step.status, start_s=first_s, end_s=end_s, ended=end_event is not None,
               segments=_merged(segments), llm_calls=step.llm_calls,
               tokens=step.prompt_tokens + step.completion_tokens)


def _merged(segments: list[Segment]) -> list[Segment]:
    """Empty segments dropped, and neighbours of one kind joined."""
    joined: list[Segment] = []
    for segment in segments:
        segment = segment.model_copy(update={"start_s": round(segment.start_s, 3),
                                             "end_s": round(segment.end_s, 3)})
        if segment.seconds <= 0:
            continue
        if joined and joined[-1].kind == segment.kind:
            joined[-1] = joined[-1].model_copy(update={"end_s": segment.end_s})
        else:
            joined.append(segment)
    return joined


def _work(started_s: float, end_s: float, end_event: StoredEvent | None, step: Step,
          pace: float) -> list[Segment]:
    """From the step's start to its end: waiting for a free slot, the demo pace (in the
    slot), then its work (model time first, tool time after: totals, not their order)."""
    data = end_event.data if end_event is not None else {}
    check = float(data.get("check_s") or 0)
    work = float(data.get("work_s") or 0)
    tool = min(float(data.get("tool_s") or 0), work)
    if end_event is None or not work:  # still running, or recorded before work was timed
        waited = min(pace, end_s - started_s)
        return [Segment(kind="pace", start_s=started_s, end_s=started_s + waited),
                Segment(kind="work", start_s=started_s + waited, end_s=end_s)]
    work_start = max(started_s, end_s - check - work)
    paced = max(started_s, work_start - pace)  # the demo pace runs in the step's slot
    segments = [Segment(kind="queued", start_s=started_s, end_s=paced),
                Segment(kind="pace", start_s=paced, end_s=work_start)]
    thinking = work - tool + check
    if step.llm_calls and thinking > 0:
        segments.append(Segment(kind="model", start_s=work_start,
                                end_s=min(end_s, work_start + thinking)))
        work_start += thinking
    elif work - tool > 0:
        segments.append(Segment(kind="work", start_s=work_start,
                                end_s=min(end_s, work_start + work - tool)))
        work_start += work - tool
    segments.append(Segment(kind="tool", start_s=min(work_start, end_s), end_s=end_s))
    return segments


def _lanes(bars: list[Bar]) -> None:
    """Give each bar the first lane free when its slot was taken (its pace or its work):
    steps that held a slot at the same time sit apart, so the lanes are the run's parallel
    slots (waiting for one takes none)."""
    free_at: list[float] = []
    for bar in sorted(bars, key=lambda b: (_working_from(b), b.step_id)):
        begins = _working_from(bar)
        lane = next((i for i, end in enumerate(free_at) if end <= begins + 1e-6),
                    len(free_at))
        if lane == len(free_at):
            free_at.append(bar.end_s)
        else:
            free_at[lane] = bar.end_s
        bar.lane = lane


def _working_from(bar: Bar) -> float:
    working = [s.start_s for s in bar.segments if s.kind not in ("queued", "person")]
    return min(working, default=bar.end_s if bar.segments else bar.start_s)


def _markers(events: list[StoredEvent], at: Clock) -> list[Marker]:
    found = []
    for event in events:
        if event.kind == "replanned":
            found.append(Marker(kind="replan", at_s=at(event.at),
                                version=event.data.get("to_version") or event.plan_version,
                                label=str(event.data.get("reason") or ""),
                                message=recorded(event.data.get("reason_message"))))
        elif event.kind in ("confirmed", "rejected"):
            found.append(Marker(kind="approved" if event.kind == "confirmed" else "rejected",
                                at_s=at(event.at), step_id=event.step_id,
                                version=event.data.get("version")))
    return found


def _meter(record: RunRecord) -> CostMeter:
    estimate = record.options.get("estimate")
    planning = Usage()
    for key in USAGE_KEYS:
        planning = planning + Usage.model_validate(record.options.get(key) or {})
    spent = step_usage(record.plan)
    return CostMeter(
        estimated_calls=int(estimate["llm_calls"]) if isinstance(estimate, dict)
        and "llm_calls" in estimate else None,
        calls=spent.llm_calls, tokens=spent.total_tokens, planning=planning)


# ---- as text ---------------------------------------------------------------------------


def meter_text(meter: CostMeter, lang: Language) -> str:
    """E.g. "LLM calls: 3 of about 4 expected · 1,234 tokens"."""
    if meter.estimated_calls is None:
        return render(msg("timeline.meter_unknown", calls=meter.calls,
                          tokens=f"{meter.tokens:,}"), lang)
    return render(msg("timeline.meter", calls=meter.calls, expected=meter.estimated_calls,
                      tokens=f"{meter.tokens:,}"), lang)


def timeline_text(timeline: Timeline, lang: Language, *, width: int = 40) -> list[str]:
    """A compact text timeline: a row per step, its bar scaled to ``width`` characters
    (░ waiting, ┄ demo pace, ▒ a person, ▓ a model, █ tools, ▆ other work), then markers
    and the meter."""
    if not timeline.bars:
        return [render(msg("timeline.empty"), lang)]
    span = timeline.span_s or 1.0
    scale = width / span
    lines = [render(msg("timeline.title", seconds=f"{timeline.span_s:.2f}",
                        lanes=timeline.lanes), lang), render(msg("timeline.lanes"), lang)]
    for bar in sorted(timeline.bars, key=lambda b: (b.start_s, b.step_id)):
        row = [" "] * width
        for segment in bar.segments:
            first = min(width - 1, int(segment.start_s * scale))
            last = max(first + 1, min(width, round(segment.end_s * scale)))
            for i in range(first, last):
                row[i] = _TEXT_MARKS[segment.kind]
        icon = STATUS_ICONS.get(bar.status, "?")
        lines.append(f"{bar.step_id:<4} {icon} |{''.join(row)}| {bar.start_s:6.2f}–"
                     f"{bar.end_s:6.2f} s · L{bar.lane + 1} · {bar.llm_calls} · "
                     f"{bar.tokens} tok")
    for marker in timeline.markers:
        lines.append("  " + _marker_text(marker, lang))
    lines.append(render(msg("timeline.legend"), lang))
    lines.append(meter_text(timeline.meter, lang))
    return lines


def marker_message(marker: Marker) -> Message:
    """What a marker says, e.g. "s3 approved", "v2 approved", "replanned to v3"."""
    version = "" if marker.step_id or marker.version is None else f"v{marker.version}"
    if marker.kind == "replan":
        version = str(marker.version or "")
    return msg(f"timeline.marker_{marker.kind}", step=marker.step_id or "", version=version)


def _marker_text(marker: Marker, lang: Language) -> str:
    what = render(marker_message(marker), lang)
    said = marker.reason(lang)
    reason = f" — {_plain(said, 60)}" if said else ""
    return f"◆ {marker.at_s:.2f} s {what}{reason}"


# ---- as a Mermaid gantt ----------------------------------------------------------------

_UNSAFE = re.compile(r"[^\w\s.,()/+\-=%·…'\u4e00-\u9fff]")


def _plain(text: str, limit: int) -> str:
    """``text`` on one line, without what Mermaid reads as syntax (``:``, ``#``, ``;``,
    quotes, brackets), shortened to ``limit`` characters."""
    flat = _UNSAFE.sub(" ", " ".join(str(text).split()))
    flat = " ".join(flat.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# Mermaid's own task colours: waiting pale (done), a person red (crit), a model light
# (active), tools and other work in the default colour
_MERMAID_TAGS = {"queued": "done, ", "pace": "done, ", "person": "crit, ", "model": "active, ",
                 "tool": "", "work": ""}


def timeline_mermaid(timeline: Timeline, lang: Language) -> list[str]:
    """The timeline as a Mermaid ``gantt`` block (lines, fence included): a section per
    step with its segments as tasks (compact: one row each), markers as milestones.
    Times are milliseconds from the run's start (``dateFormat x``); nothing a step or a
    reason says can add a Mermaid directive (no ``click``: every name is one plain line)."""
    lines = ["```mermaid", "---", "displayMode: compact", "---", "gantt",
             f"    title {_plain(render(msg('timeline.heading'), lang), 40)} "
             f"({timeline.span_s:.2f} s)", "    dateFormat x",
             "    axisFormat " + ("%S.%L" if timeline.span_s < 10 else "%M:%S")]
    number = 0
    least = max(0.005, timeline.span_s * 0.005)  # shorter stretches would not show
    for bar in sorted(timeline.bars, key=lambda b: (b.start_s, b.step_id)):
        lines.append(f"    section {bar.step_id} {_plain(bar.tool or '—', 24)}")
        shown = [s for s in bar.segments if s.seconds >= least] or [
            Segment(kind="work", start_s=bar.start_s, end_s=bar.end_s)]
        for segment in shown:
            number += 1
            kind = render(msg(f"timeline.kind_{segment.kind}"), lang)
            label = f"{bar.step_id} {_plain(kind, 20)} {segment.seconds:.2f} s"
            if segment.kind == "model" and bar.tokens:
                label += f" {bar.tokens} tok"
            lines.append(f"    {label} :{_MERMAID_TAGS[segment.kind]}t{number}, "
                         f"{round(segment.start_s * 1000)}, "
                         f"{max(round(segment.end_s * 1000), round(segment.start_s * 1000) + 1)}")
    if timeline.markers:
        lines.append(f"    section {_plain(render(msg('timeline.markers'), lang), 30)}")
        for index, marker in enumerate(timeline.markers, start=1):
            at_ms = round(marker.at_s * 1000)
            lines.append(f"    {_plain(_marker_text(marker, lang)[2:], 70)} :milestone, "
                         f"m{index}, {at_ms}, {at_ms + 1}")
    lines.append("```")
    return lines
