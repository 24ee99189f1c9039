"""Any run as AG-UI events, for any AG-UI front-end: an outside agent's, and PlanBoard's own.

An event an outside agent reported (:mod:`core.review.agent_events`) is sent as it came.
PlanBoard's own events are translated: ``run_started`` is ``RUN_STARTED``; a step that
starts is ``STEP_STARTED``, and when it ends its tool call (when it has a tool) is
``TOOL_CALL_START``/``ARGS``/``END``/``RESULT``, then ``STEP_FINISHED`` (a failed step ends
the same way, its error as the call's result; AG-UI has no failed step); the end of the
run is ``RUN_FINISHED`` (``RUN_ERROR`` when it failed). Every other event of the run (a new
version, a confirmation, a pause) is a ``CUSTOM`` event named ``planboard.<kind>`` with its
data, so nothing of the run is hidden. :func:`follow_events` streams them as server-sent
events while the run goes on, up to :data:`STREAM_S`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunStartedEvent,
    StepFinishedEvent,
    StepStartedEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

from core.access.identity import Actor
from core.access.policy import access_for
from core.lifecycle import TERMINAL_STATUSES
from core.plan.model import Plan, Step
from core.review.agent_events import AG_UI, AG_UI_EVENTS
from core.store.run_store import RunStore, StoredEvent

__all__ = ["MEDIA_TYPE", "STREAM_S", "agui_events", "follow_events", "open_stream"]

STREAM_S = 60.0  # a stream ends after this long; an AG-UI client opens it again
MEDIA_TYPE = EventEncoder().get_content_type()
_POLL_S = 0.1
_STEP_ENDS = ("step_completed", "step_failed")


def agui_events(store: RunStore, run_id: str, *, after: int = 0) -> list[tuple[int, BaseEvent]]:
    """The run's events after seq ``after`` as AG-UI events, each with the seq it came from;
    RunNotFoundError for no run."""
    store.get_run(run_id)  # RunNotFoundError names the run
    stored = store.events(run_id, after=after)
    plans = {v.version: v.plan for v in store.plan_versions(run_id)} if any(
        e.kind in _STEP_ENDS and AG_UI not in e.data for e in stored) else {}
    found: list[tuple[int, BaseEvent]] = []
    for event in stored:
        found += [(event.seq, item) for item in _translated(run_id, event, plans)]
    return found


def follow_events(store: RunStore, run_id: str, *, stream_s: float = STREAM_S
                  ) -> Iterator[str]:
    """The run's AG-UI events as server-sent events: those recorded, then each new one,
    until the run has ended (or ``stream_s`` passed)."""
    encoder = EventEncoder()
    seen = 0
    started = time.monotonic()
    while True:
        status = store.status(run_id)
        for seq, event in agui_events(store, run_id, after=seen):
            seen = seq
            yield encoder.encode(event)
        if status in TERMINAL_STATUSES or time.monotonic() - started > stream_s:
            return
        time.sleep(_POLL_S)


def open_stream(store: RunStore, run_id: str, actor: Actor | None) -> Iterator[str]:
    """:func:`follow_events` of the run, once ``actor`` may read it (RunNotFoundError or
    AccessDeniedError here, before the stream starts)."""
    access_for(actor, store).require("read", store.get_run(run_id))
    return follow_events(store, run_id)


def _translated(run_id: str, event: StoredEvent, plans: dict[int, Plan]) -> list[BaseEvent]:
    if AG_UI in event.data:
        return [AG_UI_EVENTS.validate_python(event.data[AG_UI])]
    if event.kind == "run_started":
        return [RunStartedEvent(thread_id=run_id, run_id=run_id)]
    if event.kind == "step_started" and event.step_id:
        return [StepStartedEvent(step_name=event.step_id)]
    if event.kind in _STEP_ENDS and event.step_id:
        return [*_tool_call(run_id, event, plans), StepFinishedEvent(step_name=event.step_id)]
    if event.kind == "run_finished":
        return [_run_end(run_id, event.data)]
    return [CustomEvent(name=f"planboard.{event.kind}",
                        value={"step": event.step_id, "version": event.plan_version,
                               **_json_safe(event.data)})]


def _tool_call(run_id: str, event: StoredEvent, plans: dict[int, Plan]) -> list[BaseEvent]:
    """The tool call a finished step made, as AG-UI's four events (none for a step
    without a tool)."""
    step = _step(plans.get(event.plan_version), event.step_id or "")
    if step is None or step.tool is None:
        return []
    call = f"{run_id}-{event.step_id}-{event.seq}"
    args = event.data.get("resolved_args") or step.resolved_args or step.args or {}
    outcome = event.data.get("result") if event.kind == "step_completed" else {
        "error": event.data.get("error")}
    return [ToolCallStartEvent(tool_call_id=call, tool_call_name=step.tool),
            ToolCallArgsEvent(tool_call_id=call, delta=_text(args)),
            ToolCallEndEvent(tool_call_id=call),
            ToolCallResultEvent(tool_call_id=call, message_id=f"{call}-result",
                                content=_text(outcome))]


def _run_end(run_id: str, data: dict[str, Any]) -> BaseEvent:
    status, answer = data.get("status"), data.get("answer")
    if status == "failed":
        return RunErrorEvent(message=str(answer or "the run failed"), code="failed")
    if status == "cancelled":
        return RunFinishedEvent(thread_id=run_id, run_id=run_id,
                                outcome=RunFinishedCancelledOutcome())
    return RunFinishedEvent(thread_id=run_id, run_id=run_id, result=answer)


def _step(plan: Plan | None, step_id: str) -> Step | None:
    if plan is None:
        return None
    return next((step for step in plan.steps if step.id == step_id), None)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)


def _json_safe(data: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(data, ensure_ascii=False, default=str))
