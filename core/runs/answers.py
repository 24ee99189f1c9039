"""Knowledge and direct answers (no plan), recorded in the store like any other run.

The router sends simple requests here: a retrieve-then-answer workflow, or a short ReAct
loop. What happened is kept as a finished run whose plan lists the tool calls made, so
that history, export and the run page show these answers too.
"""

from __future__ import annotations

from typing import Any

from core.base.usage import Usage
from core.execution.events import RunEvent
from core.llm.engine import Engine
from core.plan.model import Plan, Step, now
from core.planning.router import Route, answer_direct, answer_knowledge
from core.store.run_store import RunStore

__all__ = ["answer_without_plan"]


def answer_without_plan(
    request: str, route: Route, engine: Engine, store: RunStore, *,
    settings_public: dict[str, Any], usage_before: Usage | None = None,
) -> str:
    """Answer a knowledge or direct request, record it as a completed run; return its id."""
    started = now()
    if route.mode == "knowledge":
        answer, usage, hits = answer_knowledge(request, engine)
        steps = [_step("s1", "search_knowledge", {"query": request},
                       {"hits": [h.model_dump() for h in hits]}, started)]
    else:
        answer, usage, calls = answer_direct(request, engine)
        steps = [_step(f"s{n}", c.name, c.args, c.result, started, c.error)
                 for n, c in enumerate(calls, 1)]
    final = Step(id=f"s{len(steps) + 1}", description="Answer", depends_on=[s.id for s in steps],
                 status="completed", result=answer, started_at=started, finished_at=now(),
                 llm_calls=usage.llm_calls, prompt_tokens=usage.prompt_tokens,
                 completion_tokens=usage.completion_tokens)
    plan = Plan(goal=request, steps=[*steps, final])
    total = (usage_before or Usage()) + usage
    run_id = store.create_run(request, settings_public, plan, status="running",
                              options={"mode": route.mode, "route_reason": route.reason})
    for event in _events(plan, route):
        store.append_event(run_id, event)
    store.finish_run(run_id, "completed", answer=answer, usage=total, plans=[plan])
    return run_id


def _step(step_id: str, tool: str, args: dict[str, Any], result: Any, at: Any,
          error: str | None = None) -> Step:
    return Step(id=step_id, description=f"{tool}", tool=tool, args=args, resolved_args=args,
                status="failed" if error else "completed", result=result, error=error,
                started_at=at, finished_at=now())


def _events(plan: Plan, route: Route) -> list[RunEvent]:
    events = [RunEvent(kind="run_started", data={"mode": route.mode, "reason": route.reason})]
    for step in plan.steps:
        kind = "step_failed" if step.status == "failed" else "step_completed"
        events.append(RunEvent(kind=kind, step_id=step.id,
                               data={"result": step.result, "error": step.error}))
    events.append(RunEvent(kind="run_finished", data={"status": "completed",
                                                      "answer": plan.steps[-1].result}))
    return events
