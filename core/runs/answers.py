"""Knowledge and direct answers (no plan): what they call and how they answer.

The router sends simple requests here: a retrieve-then-answer (knowledge), or a short ReAct
loop of read-only tool calls (direct; offline: the rule planner's read-only steps, run by the
one scheduling rule and the executor). Such an answer is a run like any other: the run
workflow executes it (:class:`core.runs.workflow.DurableAnswer`) with every model call and
tool call recorded as a DBOS step. This module holds what the answer does, free of DBOS and
of the store, so that it runs the same inside the workflow and on its own.

Every tool call goes through :class:`AnswerTools`: it becomes a step of the answer's plan
(what the run page, the history and the exports show), and a tool with side effects is
refused before it is called, since an answer without a plan has no approved version to run
one under.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from core.base.language import Language, terms, written_in
from core.base.messages import Message, msg, render
from core.base.text import clip
from core.base.usage import Usage
from core.errors import PlanBoardError, ToolArgumentError, ToolError
from core.execution.answer_language import in_language
from core.execution.context import resolve_args, summarize_results
from core.execution.executor import StepOutcome, apply_outcome, execute_step
from core.execution.react import run_react
from core.execution.readiness import blocked_steps, ready_steps
from core.execution.success_check import non_answer
from core.llm.engine import Engine
from core.llm.forced_call import call_round, open_with_tool
from core.plan.approval import has_side_effect
from core.plan.identifiers import Grounds
from core.plan.model import Plan, Step
from core.planning.clauses import clean_query
from core.planning.offline import offline_answer, offline_plan, tool_chain
from core.planning.router import ask_knowledge, knowledge_tool
from core.planning.shortlist import shortlist
from core.prompts.adaptive import DIRECT_SYSTEM, KNOWLEDGE_SYSTEM, language_name
from core.tools.registry import ToolRegistry

__all__ = [
    "ANSWER_MODES",
    "DIRECT_ROUNDS",
    "Answer",
    "AnswerMode",
    "AnswerTools",
    "KnowledgeHit",
    "ToolCallRecord",
    "answer_direct",
    "answer_knowledge",
    "answer_request",
    "answers_without_plan",
    "check_answerable",
]

logger = logging.getLogger(__name__)

AnswerMode = Literal["knowledge", "direct"]
ANSWER_MODES: tuple[AnswerMode, ...] = ("knowledge", "direct")
DIRECT_ROUNDS = 4  # up to three rounds of tool calls, then a round that must answer
_HIT_LINES = 6
_DOCUMENT_CHARS = 1500


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


class Answer(BaseModel):
    """An answer's text and cost; ``unanswered`` says why the text is not an answer (no
    source covers the question, the model apologised, the answer failed), which fails
    its run."""

    text: str
    usage: Usage = Field(default_factory=Usage)
    unanswered: str | None = None
    unanswered_message: Message | None = None  # the reason's code, when it has one


def answers_without_plan(options: Mapping[str, Any], plan: Plan) -> bool:
    """True for a run that answers without a plan: its mode is knowledge or direct, and it
    has no version beyond its first (a follow-up extends it into a plan, run as one)."""
    return options.get("mode") in ANSWER_MODES and plan.version == 1


# ---- the tools of an answer ---------------------------------------------------------------


StepHook = Callable[[str, Step], None]
"""Told ``(event kind, step)`` when a call starts (step_started) and ends."""


class AnswerTools(ToolRegistry):
    """A copy of a registry whose every call is a step of the answer's ``plan``, and which
    runs no side effect.

    A call of a tool with side effects raises ToolError before anything is called.
    ``perform(step)`` makes a call (by default through the source registry; the run
    workflow makes it a recorded DBOS step); ``on_step`` hears each call start and end.
    """

    def __init__(self, source: ToolRegistry, *, plan: Plan | None = None,
                 perform: Callable[[Step], Any] | None = None,
                 on_step: StepHook | None = None) -> None:
        super().__init__()
        for item in source:
            self.add(item)
        for pack in source.packs():
            self.add_pack(pack)
        self.plan = plan if plan is not None else Plan(goal="")
        self._perform = perform or (lambda step: source.call(step.tool or "", step.args or {}))
        self._on_step = on_step or (lambda kind, step: None)

    @property
    def records(self) -> list[ToolCallRecord]:
        """The calls made so far, in order."""
        return [ToolCallRecord(name=s.tool, args=s.args or {}, result=s.result, error=s.error)
                for s in self.plan.steps if s.tool is not None]

    def call(self, name: str, args: dict[str, Any], *, idempotency_key: str | None = None
             ) -> Any:
        if self.get(name).side_effect:
            raise ToolError(msg("answer.no_side_effects", tool=name))
        step = Step(id=self.plan.next_step_id(), tool=name,
                    description=render(msg("answer.tool_step", tool=name), self.plan.language),
                    args=dict(args or {}))
        self.plan.steps.append(step)
        step.advance("running")
        self._on_step("step_started", step)
        try:
            result = self._perform(step)
        except ToolError as exc:
            apply_outcome(step, StepOutcome(status="failed", error=str(exc),
                                            error_message=exc.message, resolved_args=step.args))
            self._on_step("step_failed", step)
            raise
        apply_outcome(step, StepOutcome(status="completed", result=result,
                                        resolved_args=step.args))
        self._on_step("step_completed", step)
        return result


def _answer_tools(registry: ToolRegistry) -> AnswerTools:
    """``registry`` when it already holds an answer's calls, else a new answer's tools."""
    return registry if isinstance(registry, AnswerTools) else AnswerTools(registry)


# ---- answering ----------------------------------------------------------------------------


def check_answerable(request: str, mode: AnswerMode, engine: Engine) -> None:
    """Raise before any run is recorded for an answer that cannot be made at all: a
    knowledge answer with no tool that answers questions, or one whose tool has side
    effects (ToolError), a direct answer offline for a request no rule maps to a tool
    (UnservableRequestError)."""
    answering = knowledge_tool(engine.registry)
    if mode == "knowledge" and answering is None:
        raise ToolError(msg("tool.none_answers_questions"))
    if mode == "knowledge" and answering is not None and answering.side_effect:
        raise ToolError(msg("answer.no_side_effects", tool=answering.name))
    if mode == "direct" and engine.model is None:
        offline_plan(request, engine.registry, strict=True)


def answer_request(request: str, mode: AnswerMode, engine: Engine, *, language: Language
                   ) -> Answer:
    """Answer ``request`` in ``mode``. The answer is ``unanswered`` when no knowledge-base
    source covers the question (it says so instead of quoting the closest article), when
    the model asked, apologised or restated the question
    (core.execution.success_check.non_answer), or when answering failed (a PlanBoardError:
    the model gave no answer within its rounds, the endpoint failed). The answer and why it
    is unanswered are in the request's ``language``."""
    try:
        if mode == "knowledge":
            text, usage, hits = answer_knowledge(request, engine, language=language)
            unanswered = None if hits else render(msg("answer.no_source_reason"), language)
        else:
            text, usage, _ = answer_direct(request, engine, language=language)
            unanswered = None
    except PlanBoardError as exc:
        logger.info("the %s answer failed: %s", mode, exc)
        return Answer(text="", unanswered=str(exc), unanswered_message=exc.message)
    if unanswered is None and engine.model is not None:
        unanswered = non_answer(text, question=request, language=language)
    return Answer(text=text, usage=usage, unanswered=unanswered)


# ---- knowledge answers --------------------------------------------------------------------


def answer_knowledge(request: str, engine: Engine, *, language: Language, limit: int = 3
                     ) -> tuple[str, Usage, list[KnowledgeHit]]:
    """Retrieve with the tool that answers questions, then answer: one plain LLM call, or
    offline from the top hit. With no relevant document the answer says that no source
    covers the question (the model is not asked). Raises ToolError when no tool answers
    questions or the one that does fails (or has side effects: see AnswerTools)."""
    query = clean_query(request) or request.strip()
    answering = knowledge_tool(engine.registry)
    if answering is None:
        raise ToolError(msg("tool.none_answers_questions"))
    tools = _answer_tools(engine.registry)
    raw = tools.call(answering.name, ask_knowledge(answering, query))
    hits = [KnowledgeHit.model_validate(h) for h in (raw or {}).get("hits", [])][:limit]
    lang = language
    if not hits:
        return render(msg("answer.no_source"), lang), Usage(), hits
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
    """The lines of the first document that has some in the request's language that share
    the most words with it; with no such document, the top one's, quoted as written."""
    wanted = terms(request)
    documents = [(hit, _document_lines(hit.content)) for hit in hits]
    top, lines = next(((hit, lines) for hit, lines in documents
                       if any(written_in(line, lang) for line in lines)), documents[0])
    same = [line for line in lines if written_in(line, lang)]
    lines = same or lines
    ranked = sorted(range(len(lines)), key=lambda i: -len(terms(lines[i]) & wanted))
    picked = sorted(ranked[:_HIT_LINES])
    quoted = "> " if lines and not same else ""
    body = "\n".join(f"{quoted}- {lines[i]}" for i in picked)
    head = render(msg("answer.quoted_as_written" if quoted else "answer.quoted_from",
                      title=top.title), lang)
    tail = render(msg("answer.quoted_source", source=top.source), lang)
    return f"{head}\n{body}\n{tail}"


def _document_lines(content: str) -> list[str]:
    """A document's lines of text: no headings, keywords or sources, no list marks."""
    lines = []
    for raw in content.splitlines():
        line = raw.strip().lstrip("-* ").replace("**", "").strip()
        if line and not line.startswith("#") and not re.match(
                r"^(关键词|keywords|来源|source)[:：]", line, re.I):
            lines.append(line)
    return lines


# ---- direct answers -----------------------------------------------------------------------


class _Tally:
    def __init__(self) -> None:
        self.usage = Usage()


def answer_direct(request: str, engine: Engine, *, language: Language
                  ) -> tuple[str, Usage, list[ToolCallRecord]]:
    """Answer with a short ReAct loop (1-3 read-only tool calls), or offline with the rule
    planner's tool steps run directly (side effects are never run here). When a read-only
    tool fits the request, the loop's first rounds are calls of it and of the lookup it
    leads to (an order, then its parcel): made directly when the rules read every argument
    (from the request, or the result before), as a plan's step with all its arguments is;
    else forced calls of the model. When every one of those lookups found its record, the
    model answers from them in one call that offers no tools (a small model reads a shorter
    prompt, and does not wander off into lookups the rules did not ask for).

    Every call goes through the answer's tools (:class:`AnswerTools`: the engine's own when
    it has them), whose records are returned. Raises ToolError when the model gives no
    answer within the rounds.
    """
    lang = language
    recorder = _answer_tools(engine.registry)
    if engine.model is None:
        return _direct_offline(request, Engine(registry=recorder), lang)
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

    chain = tool_chain(request, engine.registry)
    for step in chain:
        # a tool fits: the first rounds call it (and the lookup it leads to), so the answer
        # rests on their results, not on the model's memory
        try:
            fallback = resolve_args(step.args or {}, results)
        except ToolArgumentError:
            break  # the step before found nothing to go on (an unknown order)
        name = step.tool or ""
        target = engine.registry.get(name)
        if set(target.required) <= set(fallback):  # the rules read every argument: no call
            messages += call_round(target, fallback, lambda args, name=name: grounded_call(
                name, args), f"call_{step.id}")
            results[step.id] = recorder.records[-1].result if recorder.records else None
            rounds -= 1
            continue
        made = open_with_tool(engine.model, messages, target,
                              lambda args, name=name: grounded_call(name, args),
                              fallback_args=fallback)
        tally.usage = tally.usage + made.usage
        if not made.messages:
            break
        messages += made.messages
        results[step.id] = recorder.records[-1].result if recorder.records else None
        rounds -= 1
    if chain and len(recorder.records) == len(chain) and not any(
            record.error for record in recorder.records):
        rounds = 1  # every lookup the rules drafted found its record: answer from them
    offered = shortlist(request, engine.registry,
                        keep=[record.name for record in recorder.records]).described
    result = run_react(engine.model, recorder, messages, tally=tally, rounds=rounds,
                       grounds=grounds, offered=[tool.name for tool in offered])
    text = in_language(engine.model, result.text, lang, tally)
    return text, tally.usage, recorder.records


def _direct_offline(request: str, engine: Engine, lang: Language
                    ) -> tuple[str, Usage, list[ToolCallRecord]]:
    """Run the read-only steps of the offline plan as the scheduler would, one at a time
    (each call through the answer's tools).

    A side-effecting step is skipped (as if a person declined it), and so is every step
    that waits on a failed one; the answer is composed from the results, not by a model.
    """
    plan = offline_plan(request, engine.registry, strict=True)  # nothing mapped: no run
    synthesis = plan.synthesis_step()
    tools = _answer_tools(engine.registry)
    while True:
        for step, _ in blocked_steps(plan):
            if step is not synthesis:
                apply_outcome(step, StepOutcome(
                    status="skipped", error=render(msg("answer.earlier_not_done"), lang)))
        ready = [s for s in ready_steps(plan) if s is not synthesis]
        if not ready:
            break
        for step in ready:
            if has_side_effect(step, engine.registry):
                apply_outcome(step, StepOutcome(status="skipped",
                                                error=render(msg("answer.direct_no_side_effects"),
                                                             lang)))
                continue
            step.advance("running")
            apply_outcome(step, execute_step(plan, step, Engine(registry=tools)))
    logger.debug("direct offline answer from %s", [r.name for r in tools.records])
    answer = offline_answer(plan, engine.registry) or summarize_results(plan)
    return answer, Usage(), tools.records
