"""A LangGraph plan-and-execute graph whose plan a person reviews in PlanBoard first.

The graph has three nodes: ``plan`` asks the given planner for a plan (``{"goal", "steps":
[{"id", "tool", "args", "depends_on", "description"}]}``), ``review`` sends it to PlanBoard
and waits for the person's decision, and ``execute`` runs exactly the approved version
(a person's edits included), step after step in dependency order, reporting each as AG-UI
events so that the run page shows it. A rejection, or no decision in time, ends the graph
with the reason in ``rejected`` and no tool called::

    graph = review_graph(planner, {"search": search, "send_email": send_email}, client,
                         tool_schemas=schemas)
    final = graph.invoke({"request": "Mail Ann a summary of today's news"})
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from core.review.client import ReviewClient

__all__ = ["PlanState", "execute_approved", "review_graph"]

Planner = Callable[[str], dict[str, Any]]


class PlanState(TypedDict, total=False):
    """The graph's state: the request, the plan sent, the decision, what each step
    returned, and why nothing ran (``rejected``)."""

    request: str
    plan: dict[str, Any]
    review_id: str
    approved: dict[str, Any]
    results: dict[str, Any]
    rejected: str


def review_graph(planner: Planner, tools: Mapping[str, Callable[..., Any]],
                 client: ReviewClient, *, tool_schemas: list[dict[str, Any]] | None = None,
                 agent: str = "langgraph", timeout: float = 600.0) -> Any:
    """The compiled graph: plan, review in PlanBoard, execute the approved steps."""
    def plan(state: PlanState) -> PlanState:
        return {"plan": planner(state["request"])}

    def review(state: PlanState) -> PlanState:
        decision = client.review(state["plan"], tools=tool_schemas, agent=agent,
                                 timeout=timeout)
        if decision.approved and decision.plan is not None:
            return {"review_id": decision.id, "approved": decision.plan}
        reason = decision.comment if decision.rejected else "no decision in time"
        return {"review_id": decision.id, "rejected": reason or "rejected"}

    def execute(state: PlanState) -> PlanState:
        return {"results": execute_approved(state["approved"], tools, client,
                                            state["review_id"])}

    graph = StateGraph(PlanState)
    graph.add_node("plan", plan)
    graph.add_node("review", review)
    graph.add_node("execute", execute)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "review")
    graph.add_conditional_edges("review", lambda s: "execute" if "approved" in s else END,
                                ["execute", END])
    graph.add_edge("execute", END)
    return graph.compile()


def execute_approved(plan: dict[str, Any], tools: Mapping[str, Callable[..., Any]],
                     client: ReviewClient, run_id: str) -> dict[str, Any]:
    """Run the approved ``plan``'s steps in dependency order (a step without a tool is the
    agent's own reasoning: its description stands for its result), reporting each."""
    report = _Reporter(client, run_id)
    report("RUN_STARTED", threadId=run_id, runId=run_id)
    results: dict[str, Any] = {}
    try:
        for step in _in_order(plan["steps"]):
            report("STEP_STARTED", stepName=step["id"])
            if step.get("tool"):
                results[step["id"]] = _call(report, step, tools[step["tool"]])
            else:
                results[step["id"]] = step["description"]
            report("STEP_FINISHED", stepName=step["id"])
    except Exception as exc:  # the run page shows the run failed; the graph raises
        report("RUN_ERROR", message=f"{type(exc).__name__}: {exc}")
        raise
    report("RUN_FINISHED", threadId=run_id, runId=run_id,
           result=json.dumps(results, ensure_ascii=False, default=str))
    return results


def _call(report: _Reporter, step: dict[str, Any], tool: Callable[..., Any]) -> Any:
    call = uuid.uuid4().hex
    args = step.get("args") or {}
    report("TOOL_CALL_START", toolCallId=call, toolCallName=step["tool"],
           metadata={"stepName": step["id"]})
    report("TOOL_CALL_ARGS", toolCallId=call, delta=json.dumps(args, ensure_ascii=False))
    report("TOOL_CALL_END", toolCallId=call)
    result = tool(**args)
    report("TOOL_CALL_RESULT", toolCallId=call, messageId=f"{call}-result",
           content=json.dumps(result, ensure_ascii=False, default=str))
    return result


def _in_order(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps so that each comes after those it depends on (plan order otherwise)."""
    done: set[str] = set()
    ordered: list[dict[str, Any]] = []
    while len(ordered) < len(steps):
        ready = [s for s in steps if s["id"] not in done
                 and set(s.get("depends_on") or []) <= done]
        if not ready:  # PlanBoard refuses cycles, so an approved plan has none
            raise ValueError("the approved plan's dependencies form a cycle")
        ordered += ready
        done |= {s["id"] for s in ready}
    return ordered


class _Reporter:
    """Sends the run's AG-UI events to PlanBoard, each under an id of its own."""

    def __init__(self, client: ReviewClient, run_id: str) -> None:
        self.client, self.run_id = client, run_id

    def __call__(self, kind: str, **fields: Any) -> None:
        self.client.report(self.run_id, {"type": kind, **fields})
