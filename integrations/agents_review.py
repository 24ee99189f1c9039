"""An OpenAI Agents SDK agent whose ``needs_approval`` tool calls a person decides in PlanBoard.

The SDK pauses a run at a call of a tool marked ``needs_approval`` and lists what waits in
``result.interruptions``. :func:`run_reviewed` sends the waiting calls as one plan (a step
per call, with the tools' schemas), waits for the person's decision, then approves or
rejects each call on the run's state and resumes it, as often as the agent asks again. The
SDK calls a tool with the arguments the model gave, so a call whose arguments the person
changed is rejected (with that reason) rather than run differently from what was approved;
a rejection's comment is what the model is told. Once approved, the calls that ran are
reported to PlanBoard as the run's AG-UI events::

    result = await run_reviewed(agent, "Refund order 7", client)
"""

from __future__ import annotations

import json
from typing import Any

from agents import Agent, Runner
from agents.items import ToolApprovalItem, ToolCallOutputItem

from core.review.client import Decision, ReviewClient

__all__ = ["run_reviewed"]

EDITED = "the reviewer changed this call's arguments; propose it again as approved"


async def run_reviewed(agent: Agent[Any], request: str, client: ReviewClient, *,
                       timeout: float = 600.0, max_reviews: int = 10, **run: Any) -> Any:
    """Run ``agent`` on ``request``; every pause for approval is decided in PlanBoard.
    ``run``: what else Runner.run takes (``run_config``, ``max_turns``, …)."""
    result = await Runner.run(agent, request, **run)
    for _ in range(max_reviews):
        waiting = list(result.interruptions)
        if not waiting:
            return result
        decision = client.review(_plan(request, waiting), tools=_schemas(agent, waiting),
                                 agent=agent.name, timeout=timeout)
        state = result.to_state()
        approved = _decide(state, waiting, decision)
        result = await Runner.run(agent, state, **run)
        if approved:
            _report(client, decision.id, approved, result)
    return result


def _plan(request: str, waiting: list[ToolApprovalItem]) -> dict[str, Any]:
    return {"goal": request, "steps": [
        {"id": _call_id(item), "tool": item.name, "args": _arguments(item),
         "description": f"{item.name}({_arguments_text(item)})"} for item in waiting]}


def _schemas(agent: Agent[Any], waiting: list[ToolApprovalItem]) -> list[dict[str, Any]]:
    """The schemas of the tools that wait (none says it is read-only: each waits because
    it needs a person)."""
    names = {item.name for item in waiting}
    return [{"name": tool.name, "description": getattr(tool, "description", ""),
             "parameters": tool.params_json_schema}
            for tool in agent.tools if tool.name in names and hasattr(tool, "params_json_schema")]


def _decide(state: Any, waiting: list[ToolApprovalItem], decision: Decision
            ) -> list[dict[str, Any]]:
    """Approve or reject each waiting call on ``state``; the approved steps."""
    steps = {decision.step_names.get(step["id"], step["id"]): step
             for step in (decision.plan or {}).get("steps", [])}
    approved = []
    for item in waiting:
        step = steps.get(_call_id(item))
        if decision.approved and step is not None and step.get("args") == _arguments(item):
            state.approve(item)
            approved.append({**step, "call_id": _call_id(item)})
        elif decision.approved:
            state.reject(item, rejection_message=EDITED)
        else:
            state.reject(item, rejection_message=decision.comment or "rejected by a person")
    return approved


def _report(client: ReviewClient, run_id: str, approved: list[dict[str, Any]],
            result: Any) -> None:
    """The approved calls, as AG-UI events of the review's run, with what each returned."""
    outputs = {item.raw_item.get("call_id") if isinstance(item.raw_item, dict)
               else getattr(item.raw_item, "call_id", None): item.output
               for item in result.new_items if isinstance(item, ToolCallOutputItem)}
    client.report(run_id, {"type": "RUN_STARTED", "threadId": run_id, "runId": run_id})
    for step in approved:
        client.report(run_id, {"type": "STEP_STARTED", "stepName": step["id"]})
        call = step["call_id"]
        client.report(run_id, {"type": "TOOL_CALL_START", "toolCallId": call,
                               "toolCallName": step["tool"],
                               "metadata": {"stepName": step["id"]}})
        client.report(run_id, {"type": "TOOL_CALL_ARGS", "toolCallId": call,
                               "delta": json.dumps(step.get("args") or {})})
        client.report(run_id, {"type": "TOOL_CALL_END", "toolCallId": call})
        client.report(run_id, {"type": "TOOL_CALL_RESULT", "toolCallId": call,
                               "messageId": f"{call}-result",
                               "content": json.dumps(outputs.get(call), default=str)})
        client.report(run_id, {"type": "STEP_FINISHED", "stepName": step["id"]})
    client.report(run_id, {"type": "RUN_FINISHED", "threadId": run_id, "runId": run_id,
                           "result": str(result.final_output or "")})


def _call_id(item: ToolApprovalItem) -> str:
    raw = item.raw_item
    return str(raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", ""))


def _arguments_text(item: ToolApprovalItem) -> str:
    raw = item.raw_item
    return str(raw.get("arguments") if isinstance(raw, dict) else getattr(raw, "arguments", ""))


def _arguments(item: ToolApprovalItem) -> dict[str, Any]:
    try:
        value = json.loads(_arguments_text(item) or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
