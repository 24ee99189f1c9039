"""An outside agent's AG-UI events, applied to its approved review as the run's steps go.

The agent executes the approved plan itself and reports it: ``RUN_STARTED``,
``STEP_STARTED``/``STEP_FINISHED`` (``stepName``: a step's id, ``s3``, or the agent's own
name of it), ``TOOL_CALL_START``/``ARGS``/``END``/``RESULT`` (the step named by
``metadata.stepName``, else the one step running) and ``RUN_FINISHED``/``RUN_ERROR``. Each
becomes the run's event and its step's state, as PlanBoard's own executor records them, so
the run page shows them as cards; the AG-UI event itself is kept with it (``ag_ui``) and
streamed back as it came. Nothing is applied before the plan is approved, an event for a
step the plan does not have is refused, and an event sent again under the same
``metadata.eventId`` is applied once (the id is its replay key). Each event is one
transaction that first takes the run's write lock.
"""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import Event, EventType
from pydantic import TypeAdapter, ValidationError

from core.access.identity import Actor
from core.access.policy import access_for
from core.base.messages import msg
from core.errors import ConflictError, InputError, InputTooLargeError
from core.execution.events import EventKind, RunEvent
from core.lifecycle import TERMINAL_STATUSES, run_may_become, step_may_become
from core.plan.model import Plan, Step
from core.review.reviews import REVIEW, review_record
from core.store.run_store import RunStore
from core.store.schema import (
    events,
    insert_event,
    replayed_seq,
    runs,
    stored_plan,
    update_run,
    upsert_step,
    utc_now,
)

__all__ = ["AG_UI", "AG_UI_EVENTS", "MAX_EVENTS", "TAKEN", "accept_event"]

AG_UI = "ag_ui"  # the stored event's field holding the AG-UI event as it came
MAX_EVENTS = 10_000  # events one run takes: a plan's most steps, each with a few tool calls
TAKEN: dict[EventType, EventKind] = {
    EventType.RUN_STARTED: "run_started",
    EventType.STEP_STARTED: "step_started",
    EventType.STEP_FINISHED: "step_completed",
    EventType.TOOL_CALL_START: "tool_called",
    EventType.TOOL_CALL_ARGS: "tool_called",
    EventType.TOOL_CALL_END: "tool_called",
    EventType.TOOL_CALL_RESULT: "tool_called",
    EventType.RUN_FINISHED: "run_finished",
    EventType.RUN_ERROR: "run_finished",
}
_RUN_STATUS = {EventType.RUN_STARTED: "running", EventType.RUN_FINISHED: "completed",
               EventType.RUN_ERROR: "failed"}
AG_UI_EVENTS = TypeAdapter(Event)  # any AG-UI event, by its type


def accept_event(store: RunStore, run_id: str, data: Any, actor: Actor | None) -> bool:
    """Apply the AG-UI event ``data`` to the review ``run_id``; False when it was applied
    before (its ``metadata.eventId`` recorded). InputError for an event that cannot be
    taken (ConflictError: not now), and nothing is written."""
    record = review_record(store, run_id)
    access_for(actor, store).require("steer", record)
    review = record.options[REVIEW]
    if review.get("state") != "approved":
        raise ConflictError(msg("review.not_approved", run_id=run_id,
                                status=msg(f"review.state.{review.get('state', 'pending')}")))
    event = _parse(data)
    event_id = (event.metadata or {}).get("eventId")
    key = f"ag-ui:{event_id}" if isinstance(event_id, str | int) and str(event_id) else None
    names = {name: step_id for step_id, name in (review.get("step_names") or {}).items()}
    return store.transaction(lambda conn: _apply(conn, run_id, event, key, names))


def _apply(conn: Any, run_id: str, event: Any, key: str | None, names: dict[str, str]) -> bool:
    """Write ``event`` to the run in the transaction ``conn``, the run's write lock first;
    False when its key was applied before."""
    if replayed_seq(conn, run_id, key) is not None:  # takes the run's write lock
        return False
    update_run(conn, run_id, updated_at=utc_now())  # the lock, also without a key
    status, count = conn.execute(sa_status(run_id)).one()
    if count >= MAX_EVENTS:
        raise InputTooLargeError(msg("review.too_many_events", run_id=run_id,
                                     most=MAX_EVENTS))
    plan = Plan.model_validate(stored_plan(conn, run_id))
    stored = RunEvent(kind=TAKEN[event.type], plan_version=plan.version,
                      data={AG_UI: event.model_dump(mode="json", by_alias=True,
                                                    exclude_none=True)})
    if event.type in _RUN_STATUS:
        _move_run(conn, run_id, status, event, stored)
        if event.type == EventType.RUN_ERROR:
            _fail_running(conn, run_id, plan, event.message)
    else:
        _require_running(run_id, status, event.type)
        step = _step_of(conn, run_id, plan, event, names)
        stored.step_id = step.id
        _apply_to_step(conn, run_id, step, event, stored)
        upsert_step(conn, run_id, plan.version, step, utc_now())
    insert_event(conn, run_id, stored, key)
    return True


def sa_status(run_id: str) -> Any:
    """The run's status and event count (one small query)."""
    return runs.select().with_only_columns(runs.c.status, runs.c.event_seq).where(
        runs.c.id == run_id)


def _parse(data: Any) -> Any:
    try:
        event = AG_UI_EVENTS.validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise InputError(msg("review.event_invalid",
                             detail=f"{where}: {error['msg']}" if where else error["msg"])
                         ) from None
    if event.type not in TAKEN:
        raise InputError(msg("review.event_not_taken", kind=event.type.value))
    if event.metadata is not None and not isinstance(event.metadata, dict):
        raise InputError(msg("review.event_invalid", detail="metadata: not an object"))
    return event


def _move_run(conn: Any, run_id: str, status: str, event: Any, stored: RunEvent) -> None:
    new = _RUN_STATUS[event.type]
    if status == new or not run_may_become(status, new) or (
            new != "running" and status != "running"):
        raise ConflictError(msg("review.event_out_of_order", kind=event.type.value,
                                run_id=run_id, status=status))
    values: dict[str, Any] = {"status": new}
    if new in TERMINAL_STATUSES:
        values["finished_at"] = utc_now()
        answer = getattr(event, "result", None) if new == "completed" else event.message
        stored.data.update(status=new, answer=answer)
        if answer is not None:
            values["answer"] = answer if isinstance(answer, str) else json.dumps(
                answer, ensure_ascii=False)
    update_run(conn, run_id, **values)


def _fail_running(conn: Any, run_id: str, plan: Plan, error: str) -> None:
    """The steps still running when the agent's run failed end failed, with its error (a
    run that ended leaves no step running)."""
    for step in plan.steps:
        if step.status == "running":
            step.advance("failed")
            step.error = error
            upsert_step(conn, run_id, plan.version, step, utc_now())


def _require_running(run_id: str, status: str, kind: EventType) -> None:
    if status != "running":
        raise ConflictError(msg("review.event_out_of_order", kind=kind.value, run_id=run_id,
                                status=status))


def _step_of(conn: Any, run_id: str, plan: Plan, event: Any, names: dict[str, str]) -> Step:
    """The step ``event`` is about; InputError when the plan has no such step."""
    if event.type in (EventType.STEP_STARTED, EventType.STEP_FINISHED):
        return _named_step(run_id, plan, event.step_name, names)
    named = (event.metadata or {}).get("stepName")
    if event.type == EventType.TOOL_CALL_START:
        if named is not None:
            return _named_step(run_id, plan, str(named), names)
        running = [step for step in plan.steps if step.status == "running"]
        if len(running) != 1:
            raise InputError(msg("review.event_no_step", count=len(running)))
        return running[0]
    opened = _tool_call_events(conn, run_id, event.tool_call_id)
    if not opened:
        raise InputError(msg("review.event_unknown_call", call=json.dumps(event.tool_call_id)))
    return plan.step(opened[0][0])


def _named_step(run_id: str, plan: Plan, name: str, names: dict[str, str]) -> Step:
    step_id = names.get(name, name)
    if step_id not in plan.ids():
        raise InputError(msg("review.event_unknown_step", run_id=run_id,
                             step=json.dumps(name, ensure_ascii=False),
                             steps=", ".join(plan.ids())))
    return plan.step(step_id)


def _tool_call_events(conn: Any, run_id: str, call: str) -> list[tuple[str, dict[str, Any]]]:
    """(step id, AG-UI event) of every recorded event of tool call ``call``, in order."""
    rows = conn.execute(events.select().with_only_columns(events.c.step_id, events.c.data)
                        .where(events.c.run_id == run_id, events.c.kind == "tool_called")
                        .order_by(events.c.seq)).all()
    return [(step_id, data[AG_UI]) for step_id, data in rows
            if (data or {}).get(AG_UI, {}).get("toolCallId") == call]


def _apply_to_step(conn: Any, run_id: str, step: Step, event: Any, stored: RunEvent) -> None:
    """The step's state after ``event`` (its status, the call's arguments or result)."""
    target = {EventType.STEP_STARTED: "running", EventType.STEP_FINISHED: "completed"}.get(
        event.type)
    if target is not None:
        if not step_may_become(step.status, target):
            raise ConflictError(msg("review.step_out_of_order", kind=event.type.value,
                                    step=step.id, status=step.status))
        step.advance(target)
        return
    if step.status != "running":
        raise ConflictError(msg("review.step_out_of_order", kind=event.type.value,
                                step=step.id, status=step.status))
    if event.type == EventType.TOOL_CALL_END:
        deltas = [data.get("delta", "") for _, data in _tool_call_events(
            conn, run_id, event.tool_call_id) if data.get("type") == "TOOL_CALL_ARGS"]
        step.resolved_args = _json_object("".join(deltas))
    elif event.type == EventType.TOOL_CALL_RESULT:
        step.result = _json_value(event.content)
    stored.data["call"] = event.tool_call_id


def _json_object(text: str) -> dict[str, Any] | None:
    value = _json_value(text)
    return value if isinstance(value, dict) else None


def _json_value(content: Any) -> Any:
    """A tool's result as the agent sent it: JSON text read as its value, else as is."""
    if not isinstance(content, str):
        return content if not isinstance(content, list) else [
            part.model_dump(mode="json", by_alias=True) if hasattr(part, "model_dump") else part
            for part in content]
    try:
        return json.loads(content)
    except ValueError:
        return content
