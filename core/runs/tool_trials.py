"""A tool tried by hand (the dashboard's Tools page), recorded as a one-step run.

A refund tried there is as real as one in a plan, so it leaves the same traces: a run in
the store whose single step is started and finished through ``Step.advance``, its events,
and, for a tool with side effects, the idempotency key the call carried.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from core.access.identity import Actor
from core.access.policy import access_for, call_action
from core.base.messages import Message
from core.base.usage import Usage
from core.errors import ToolError
from core.execution.events import RunEvent
from core.plan.model import Plan, Step
from core.runs.executors import embedded_executor_id
from core.store.run_store import RunStore
from core.tools.registry import ToolRegistry

__all__ = ["TRIAL_MODE", "ToolTrial", "try_tool"]

TRIAL_MODE = "tool_trial"  # the run's recorded mode: what the history can tell apart
_STEP = "s1"


class ToolTrial(BaseModel):
    """How a tried call went: its run, and the result or the one-line error."""

    run_id: str
    ok: bool
    result: Any = None
    error: str | None = None
    error_message: Message | None = None  # the error's code, to word it in any language
    idempotency_key: str | None = None


def try_tool(name: str, args: dict[str, Any], *, registry: ToolRegistry,
             store: RunStore, actor: Actor | None = None) -> ToolTrial:
    """Call tool ``name`` with ``args`` once, recorded as a finished one-step run owned by
    ``actor`` (a side effect is an approver's to cause, a read an editor's).

    Raises ToolError, recording nothing, when the tool is unknown or ``args`` do not fit
    its schema (the tool was not called), AccessDeniedError when ``actor`` may not call
    it. A call that fails is recorded as a failed run and returned with its error. Asking
    a person before a side effect is the caller's part (the Tools page has an explicit tick).
    """
    access_for(actor, store).require(call_action(name, registry))
    tool = registry.get(name)
    tool.validate_args(args)
    request = f"{name}({json.dumps(args, ensure_ascii=False, default=str)})"
    step = Step(id=_STEP, description=f"Try {name} by hand", tool=name, args=args)
    plan = Plan(goal=request, steps=[step])
    run_id = store.create_run(request, {"offline": True}, plan, status="running",
                              options={"mode": TRIAL_MODE, "executor": embedded_executor_id()})
    key = f"{run_id}:{_STEP}:v{plan.version}" if tool.side_effect else None
    store.append_event(run_id, RunEvent(kind="run_started", data={"mode": TRIAL_MODE}))
    step.resolved_args = args
    step.advance("running")
    store.record_step(run_id, RunEvent(kind="step_started", step_id=_STEP,
                                       data={"tool": name, "idempotency_key": key}), plan)
    try:
        result = registry.call(name, args, idempotency_key=key)
    except ToolError as exc:
        return _finish(store, run_id, plan, error=_one_line(exc), key=key,
                       message=exc.message)
    step.result = result
    return _finish(store, run_id, plan, result=result, key=key)


def _finish(store: RunStore, run_id: str, plan: Plan, *, result: Any = None,
            error: str | None = None, key: str | None,
            message: Message | None = None) -> ToolTrial:
    step = plan.steps[0]
    step.error = error
    step.error_message = message
    step.advance("failed" if error else "completed")
    kind = "step_failed" if error else "step_completed"
    store.record_step(run_id, RunEvent(kind=kind, step_id=step.id,
                                       data={"result": result, "error": error}), plan)
    status = "failed" if error else "completed"
    answer = error or json.dumps(result, ensure_ascii=False, default=str)
    store.append_event(run_id, RunEvent(kind="run_finished",
                                        data={"status": status, "answer": answer}))
    store.finish_run(run_id, status, answer=answer, usage=Usage(), plans=[plan])
    return ToolTrial(run_id=run_id, ok=error is None, result=result, error=error,
                     error_message=message, idempotency_key=key)


def _one_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
