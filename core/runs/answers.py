"""Knowledge and direct answers (no plan), recorded in the store like any other run.

The router sends simple requests here: a retrieve-then-answer workflow, or a short ReAct
loop of read-only tool calls (offline: the rule planner's read-only steps, run by the one
scheduling rule and the executor). What happened is kept as a finished run whose plan
lists the tool calls made, so that history, export and the run page show these answers.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pydantic import BaseModel, Field

from core.base import tracing
from core.base.language import Language, detect_language, pick, terms
from core.base.messages import msg
from core.base.text import clip
from core.base.usage import Usage
from core.errors import ToolArgumentError, ToolError
from core.execution.answer_language import in_language
from core.execution.context import resolve_args, summarize_results
from core.execution.events import RunEvent
from core.execution.executor import StepOutcome, apply_outcome, execute_step
from core.execution.react import run_react
from core.execution.readiness import blocked_steps, ready_steps
from core.execution.success_check import non_answer
from core.llm.engine import Engine
from core.llm.forced_call import open_with_tool
from core.plan.identifiers import Grounds
from core.plan.model import Plan, Step, now
from core.planning.clauses import clean_query
from core.planning.offline import offline_answer, offline_plan, tool_chain
from core.planning.router import ask_knowledge, knowledge_tool
from core.planning.routes import Route
from core.prompts.adaptive import DIRECT_SYSTEM, KNOWLEDGE_SYSTEM, language_name
from core.runs.executors import embedded_executor_id
from core.store.run_store import RunStore
from core.tools.registry import ToolRegistry

__all__ = [
    "DIRECT_ROUNDS",
    "KnowledgeHit",
    "ToolCallRecord",
    "answer_direct",
    "answer_knowledge",
    "answer_without_plan",
]

logger = logging.getLogger(__name__)

DIRECT_ROUNDS = 4  # up to three rounds of tool calls, then a round that must answer
_HIT_LINES = 6
_DOCUMENT_CHARS = 1500
_NOT_DONE = ("前置步骤没有完成", "an earlier step did not complete")
_NO_SOURCE = ("知识库里没有资料涵盖这个问题，因此这里不作回答。"
              "可以改用规划模式（让工具去查），或联系人工客服。",
              "No source in the knowledge base covers this question, so it is not answered "
              "here. Try plan mode (the tools may find it), or ask a person.")
_NO_SIDE_EFFECTS = ("直接模式不执行有副作用的操作，请使用规划模式",
                    "direct mode never runs side effects; use plan mode")


class KnowledgeHit(BaseModel):
    """One document found by the tool that answers questions."""

    title: str
    content: str = ""
    score: float = 0.0
    source: str = ""


class ToolCallRecord(BaseModel):
    """One tool call made while answering directly: what was asked and what came back."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = None


# ---- recording ------------------------------------------------------------------------------


def answer_without_plan(
    request: str, route: Route, engine: Engine, store: RunStore, *,
    settings_public: dict[str, Any], usage_before: Usage | None = None,
) -> str:
    """Answer a knowledge or direct request and record it as a finished run; return its id.

    The run is "failed" when the answer is not one: no knowledge-base source covers the
    question (the answer says so instead of quoting the closest article), or the model
    asked, apologised or restated the question (core.execution.success_check.non_answer).
    Traced as a span ``run`` around its model and tool calls (core.base.tracing).
    """
    with tracing.span("run", {"planboard.run.mode": route.mode}) as span:
        run_id = _answer_and_record(request, route, engine, store,
                                    settings_public=settings_public, usage_before=usage_before)
        span.set({"planboard.run.id": run_id, "planboard.run.status":
                  store.get_run(run_id).status if span.recording else None})
        return run_id


def _answer_and_record(
    request: str, route: Route, engine: Engine, store: RunStore, *,
    settings_public: dict[str, Any], usage_before: Usage | None,
) -> str:
    started = now()
    unanswered: str | None = None
    if route.mode == "knowledge":
        answer, usage, hits = answer_knowledge(request, engine)
        answering = knowledge_tool(engine.registry)
        name = answering.name if answering is not None else "knowledge"
        args = ask_knowledge(answering, request) if answering is not None else {}
        calls = [ToolCallRecord(name=name, args=args,
                                result={"hits": [h.model_dump() for h in hits]})]
        if not hits:
            unanswered = pick(detect_language(request), "没有资料涵盖这个问题",
                              "no knowledge-base source covers the question")
    else:
        answer, usage, calls = answer_direct(request, engine)
    if unanswered is None and engine.model is not None:
        unanswered = non_answer(answer, question=request)
    steps = [_finished(_started_step(f"s{n}", c.name, tool=c.name, args=c.args),
                       StepOutcome(status="failed" if c.error else "completed", result=c.result,
                                   error=c.error, resolved_args=c.args))
             for n, c in enumerate(calls, 1)]
    final = _finished(_started_step(f"s{len(steps) + 1}", "Answer",
                                depends_on=[s.id for s in steps]),
                      StepOutcome(status="failed" if unanswered else "completed",
                                  result=answer, error=unanswered, usage=usage))
    for step in [*steps, final]:
        step.started_at = started  # the answer began before its tool calls were recorded
    plan = Plan(goal=request, steps=[*steps, final])
    total = (usage_before or Usage()) + usage
    run_id = store.create_run(request, settings_public, plan, status="running",
                              options={"mode": route.mode, "route_reason": route.reason,
                                       "executor": embedded_executor_id()})
    status = "failed" if unanswered else "completed"
    for event in _events(plan, route, status):
        store.append_event(run_id, event)
    store.finish_run(run_id, status, answer=answer, usage=total, plans=[plan])
    return run_id


def _started_step(step_id: str, description: str, **fields: Any) -> Step:
    """A new step, running (its status moves only through Step.advance)."""
    step = Step(id=step_id, description=description, **fields)
    step.advance("running")
    return step


def _finished(step: Step, outcome: StepOutcome) -> Step:
    apply_outcome(step, outcome)
    return step


def _events(plan: Plan, route: Route, status: str) -> list[RunEvent]:
    events = [RunEvent(kind="run_started", data={"mode": route.mode, "reason": route.reason})]
    for step in plan.steps:
        kind = "step_failed" if step.status == "failed" else "step_completed"
        events.append(RunEvent(kind=kind, step_id=step.id,
                               data={"result": step.result, "error": step.error}))
    events.append(RunEvent(kind="run_finished", data={"status": status,
                                                      "answer": plan.steps[-1].result}))
    return events


# ---- knowledge workflow -------------------------------------------------------------------


def answer_knowledge(request: str, engine: Engine, *, limit: int = 3
                     ) -> tuple[str, Usage, list[KnowledgeHit]]:
    """Retrieve with the tool that answers questions, then answer: one plain LLM call, or
    offline from the top hit. With no relevant document the answer says that no source
    covers the question (the model is not asked). Raises ToolError when no tool answers
    questions or the one that does fails."""
    query = clean_query(request) or request.strip()
    answering = knowledge_tool(engine.registry)
    if answering is None:
        raise ToolError(msg("tool.none_answers_questions"))
    raw = engine.registry.call(answering.name, ask_knowledge(answering, query))
    hits = [KnowledgeHit.model_validate(h) for h in (raw or {}).get("hits", [])][:limit]
    lang = detect_language(request)
    if not hits:
        return pick(lang, *_NO_SOURCE), Usage(), hits
    if engine.model is None:
        return _knowledge_offline(request, hits, lang), Usage(), hits
    documents = "\n\n".join(
        f"[{n}] {h.title} ({h.source})\n{clip(h.content, _DOCUMENT_CHARS)}"
        for n, h in enumerate(hits, 1)
    )
    messages = [
        {"role": "system", "content": KNOWLEDGE_SYSTEM.substitute(
            language=language_name(lang), documents=documents)},
        {"role": "user", "content": request},
    ]
    reply = engine.model.chat(messages, role="executor", tools=None)
    answer = (reply.content or "").strip() or _knowledge_offline(request, hits, lang)
    return answer, reply.usage, hits


def _knowledge_offline(request: str, hits: list[KnowledgeHit], lang: Language) -> str:
    top = hits[0]
    wanted = terms(request)
    lines = []
    for raw in top.content.splitlines():
        line = raw.strip().lstrip("-* ").replace("**", "").strip()
        if not line or line.startswith("#") or re.match(
            r"^(关键词|keywords|来源|source)[:：]", line, re.I
        ):
            continue
        lines.append(line)
    same = [line for line in lines if detect_language(line) == lang]
    lines = same or lines
    ranked = sorted(range(len(lines)), key=lambda i: -len(terms(lines[i]) & wanted))
    picked = sorted(ranked[:_HIT_LINES])
    body = "\n".join(f"- {lines[i]}" for i in picked)
    head = pick(lang, f"根据《{top.title}》：", f"From \"{top.title}\":")
    tail = pick(lang, f"（来源：{top.source}，本地知识库）",
                f"(source: {top.source}, local knowledge base)")
    return f"{head}\n{body}\n{tail}"


# ---- direct answers -----------------------------------------------------------------------


class _RecordingRegistry(ToolRegistry):
    """A copy of a registry that records every call made through it."""

    def __init__(self, source: ToolRegistry) -> None:
        super().__init__()
        for item in source:
            self.add(item)
        for pack in source.packs():
            self.add_pack(pack)
        self.records: list[ToolCallRecord] = []

    def call(self, name: str, args: dict[str, Any], *, idempotency_key: str | None = None
             ) -> Any:
        record = ToolCallRecord(name=name, args=dict(args or {}))
        self.records.append(record)
        try:
            record.result = super().call(name, args, idempotency_key=idempotency_key)
        except ToolError as exc:
            record.error = str(exc)
            raise
        return record.result


class _Tally:
    def __init__(self) -> None:
        self.usage = Usage()


def answer_direct(request: str, engine: Engine) -> tuple[str, Usage, list[ToolCallRecord]]:
    """Answer with a short ReAct loop (1-3 read-only tool calls), or offline with the rule
    planner's tool steps run directly (side effects are never run here). When a read-only
    tool fits the request, the loop's first rounds are forced calls of it and of the lookup
    it leads to (an order, then its parcel).

    Raises ToolError when the model gives no answer within the rounds.
    """
    lang = detect_language(request)
    if engine.model is None:
        return _direct_offline(request, engine, lang)
    recorder = _RecordingRegistry(engine.registry)
    tally = _Tally()
    messages = [
        {"role": "system", "content": DIRECT_SYSTEM.substitute(language=language_name(lang))},
        {"role": "user", "content": request},
    ]
    rounds = DIRECT_ROUNDS
    results: dict[str, Any] = {}
    grounds = Grounds([request])  # an id the model names must be seen first

    def grounded_call(name: str, args: dict[str, Any]) -> Any:
        for parameter, value in grounds.invented(args):
            raise ToolArgumentError(msg("tool.invented_id", tool=name, name=parameter,
                                        value=repr(value)))
        output = recorder.call(name, args)
        grounds.add(output)
        return output

    for step in tool_chain(request, engine.registry):
        # a tool fits: the first rounds call it (and the lookup it leads to), so the answer
        # rests on their results, not on the model's memory
        try:
            fallback = resolve_args(step.args or {}, results)
        except ToolArgumentError:
            break  # the step before found nothing to go on (an unknown order)
        name = step.tool or ""
        made = open_with_tool(engine.model, messages, engine.registry.get(name),
                              lambda args, name=name: grounded_call(name, args),
                              fallback_args=fallback)
        tally.usage = tally.usage + made.usage
        if not made.messages:
            break
        messages += made.messages
        results[step.id] = recorder.records[-1].result if recorder.records else None
        rounds -= 1
    result = run_react(engine.model, recorder, messages, tally=tally, rounds=rounds,
                       grounds=grounds)
    text = in_language(engine.model, result.text, lang, tally)
    return text, tally.usage, recorder.records


def _direct_offline(request: str, engine: Engine, lang: Language
                    ) -> tuple[str, Usage, list[ToolCallRecord]]:
    """Run the read-only steps of the offline plan as the scheduler would, one at a time.

    A side-effecting step is skipped (as if a person declined it), and so is every step
    that waits on a failed one; the answer is composed from the results, not by a model.
    """
    plan = offline_plan(request, engine.registry, strict=True)  # nothing mapped: no run
    synthesis = plan.synthesis_step()
    records: list[ToolCallRecord] = []
    while True:
        for step, _ in blocked_steps(plan):
            if step is not synthesis:
                apply_outcome(step, StepOutcome(status="skipped", error=pick(lang, *_NOT_DONE)))
        ready = [s for s in ready_steps(plan) if s is not synthesis]
        if not ready:
            break
        for step in ready:
            if step.tool in engine.registry and engine.registry.get(step.tool).side_effect:
                apply_outcome(step, StepOutcome(status="skipped",
                                                error=pick(lang, *_NO_SIDE_EFFECTS)))
                continue
            step.advance("running")
            outcome = execute_step(plan, step, engine)
            apply_outcome(step, outcome)
            if step.tool is not None and outcome.status != "skipped":
                records.append(ToolCallRecord(name=step.tool, args=outcome.resolved_args or
                                              step.args or {}, result=outcome.result,
                                              error=outcome.error))
    logger.debug("direct offline answer from %s", [r.name for r in records])
    answer = offline_answer(plan, engine.registry) or summarize_results(plan)
    return answer, Usage(), records
