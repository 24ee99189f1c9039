"""One step of a plan: direct tool call | forced single tool | bounded ReAct | synthesis."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from core.base.expressions import ExpressionError, is_expression_condition
from core.base.messages import Message, msg
from core.base.usage import Usage
from core.errors import LLMError, PlanBoardError, ToolArgumentError, ToolError, UnknownToolError
from core.execution.answer_language import in_language
from core.execution.answer_notes import left_out_note
from core.execution.context import build_step_context, fallback_answer, resolve_args
from core.execution.in_doubt import CallLedger, in_doubt_if_repeated
from core.execution.left_out import left_out_results
from core.execution.react import MAX_REACT_ROUNDS, ReactCancelled, run_react
from core.execution.read_ahead import can_read_ahead, read_result
from core.execution.readiness import condition_holds
from core.execution.success_check import non_answer
from core.llm.engine import Engine
from core.llm.providers import weak_model_checks
from core.plan.approval import has_side_effect
from core.plan.calls import call_key
from core.plan.identifiers import plan_grounds
from core.plan.model import WHOLE_REFERENCE, Plan, Step
from core.planning.periods import request_period
from core.planning.shortlist import shortlist
from core.prompts import execution as prompts
from core.tools.registry import Tool, ToolRegistry

__all__ = [
    "StepMode",
    "StepOutcome",
    "apply_outcome",
    "execute_step",
    "is_synthesis",
    "predict_llm_calls",
    "step_mode",
]

logger = logging.getLogger(__name__)

StepMode = Literal["direct", "forced_tool", "react", "synthesis", "condition"]
_YES = re.compile(r"^\W*(?:(?:yes|true|y)\b|是|对|满足|成立)", re.IGNORECASE)
_NO = re.compile(r"^\W*(?:(?:no|false|n)\b|否|不)", re.IGNORECASE)


class StepOutcome(BaseModel):
    """What executing a step produced; the scheduler applies it to the plan."""

    status: Literal["completed", "failed", "skipped"]
    result: Any = None
    error: str | None = None
    error_message: Message | None = None  # the error's code, worded in the reader's language
    usage: Usage = Field(default_factory=Usage)
    resolved_args: dict[str, Any] | None = None
    mode: StepMode = "direct"
    notes: list[str] = Field(default_factory=list)
    in_doubt: bool = False  # its side effect began before a crash: not called again (in_doubt)
    work_s: float = 0.0  # seconds the step's work took (after any demo pace)
    tool_s: float = 0.0  # of which, inside tool calls; the rest waited on a model, if any
    read_ahead: bool = False  # its result is the call made while the plan was written

    @classmethod
    def skipped(cls, why: Message, mode: StepMode = "direct") -> StepOutcome:
        """A step skipped for ``why``: its English as the error (the run view reads it), its
        code for readers in another language."""
        return cls(status="skipped", error=str(why), error_message=why, mode=mode)


def apply_outcome(step: Step, outcome: StepOutcome) -> None:
    """Apply an outcome's status, result, error, arguments and usage to a running ``step``."""
    step.advance(outcome.status)
    step.result = outcome.result
    step.error = outcome.error
    step.error_message = outcome.error_message
    if outcome.resolved_args is not None:
        step.resolved_args = outcome.resolved_args
    usage = outcome.usage
    step.add_usage(usage.llm_calls, usage.prompt_tokens, usage.completion_tokens)


class _StepFailed(PlanBoardError):
    """Internal: ends the step as failed with a message (never leaves execute_step)."""


@dataclass
class _Tally:
    """Usage and notes gathered while a step runs (kept even when the step fails)."""

    usage: Usage = field(default_factory=Usage)
    notes: list[str] = field(default_factory=list)
    unjudged: Message | None = None  # why a condition could not be judged (the step skips)
    tool_s: float = 0.0  # seconds spent inside tool calls

    def outcome(self, status: str, mode: StepMode, *, error: str | Message | None = None,
                **fields: Any) -> StepOutcome:
        """The outcome; an ``error`` message is kept with its English wording beside it."""
        return StepOutcome(
            status=status, mode=mode, usage=self.usage, notes=list(self.notes),
            tool_s=round(self.tool_s, 4),
            error=None if error is None else str(error),
            error_message=error if isinstance(error, Message) else None, **fields,
        )


def _worded(exc: PlanBoardError) -> str | Message:
    """What an error says: its message (worded in any language) or its text."""
    return exc.message or str(exc)


def is_synthesis(plan: Plan, step: Step) -> bool:
    """True when ``step`` is the plan's synthesis step (only the last step may be)."""
    if not plan.steps or plan.steps[-1].id != step.id:
        return False
    synthesis = plan.synthesis_step()
    return synthesis is not None and synthesis.id == step.id


def _has_all_required(step: Step, target: Tool) -> bool:
    if step.args is None:
        return False  # no args at all: inferred by the model (offline: the defaults)
    present = {k for k, v in step.args.items() if v is not None}
    return set(target.required) <= present


def step_mode(plan: Plan, step: Step, registry: ToolRegistry) -> StepMode:
    """How a step will run: synthesis, react (reasoning), direct or forced_tool."""
    if step.tool is None:
        return "synthesis" if is_synthesis(plan, step) else "react"
    if step.tool in registry and _has_all_required(step, registry.get(step.tool)):
        return "direct"
    return "forced_tool"


def predict_llm_calls(plan: Plan, registry: ToolRegistry, *, offline: bool = False) -> int:
    """Expected LLM calls to run the plan's unfinished steps (planning not included).

    0 for a tool step with complete arguments (or an unknown tool, which fails), 1 for a
    forced tool call, a reasoning step (its ReAct loop may take up to 3) and the synthesis;
    plus 1 for every condition written in prose. Offline nothing calls a model: 0.
    """
    if offline:
        return 0
    calls = 0
    for step in plan.steps:
        if step.status not in {"pending", "running"}:
            continue
        if step.condition and not is_expression_condition(step.condition):
            calls += 1
        if step.tool is not None and step.tool not in registry:
            continue
        calls += 0 if step_mode(plan, step, registry) == "direct" else 1
    return calls


def execute_step(
    plan: Plan,
    step: Step,
    engine: Engine,
    *,
    cancel: threading.Event | None = None,
    idempotency_key: str | None = None,
    ledger: CallLedger | None = None,
    read_ahead: Mapping[str, Any] | None = None,
) -> StepOutcome:
    """Run one step and say how it ended; never mutates the plan and never raises.

    The condition is checked first (an expression over earlier results, or a prose
    condition judged by the model; offline a prose condition is noted and the step runs).
    With a ``ledger``, a side effect that is not idempotent is noted there before its
    call, and not called when it already was (:mod:`core.execution.in_doubt`). A read-only
    step whose call is in ``read_ahead`` (made while the plan was written,
    :mod:`core.execution.read_ahead`) takes its result from there.
    The outcome says how long the work took and how much of it was inside tool calls.
    """
    started = time.perf_counter()
    outcome = _execute(plan, step, engine, cancel, idempotency_key, ledger, read_ahead or {})
    outcome.work_s = round(time.perf_counter() - started, 4)
    return outcome


def _execute(plan: Plan, step: Step, engine: Engine, cancel: threading.Event | None,
             idempotency_key: str | None, ledger: CallLedger | None,
             read_ahead: Mapping[str, Any]) -> StepOutcome:
    mode = step_mode(plan, step, engine.registry)
    tally = _Tally()
    if cancel is not None and cancel.is_set():
        return tally.outcome("skipped", mode, error=msg("step.cancelled_before_start"))
    try:
        if step.condition and not _check_condition(plan, step, engine, tally):
            return tally.outcome("skipped", "condition", error=tally.unjudged or msg(
                "step.condition_not_met", condition=step.condition))
        if mode == "synthesis":
            return _synthesise(plan, step, engine, tally)
        if mode == "react":
            return _reason(plan, step, engine, tally, cancel)
        return _run_tool_step(plan, step, engine, tally, idempotency_key, ledger, read_ahead)
    except ReactCancelled as exc:
        return tally.outcome("skipped", mode, error=str(exc))
    except LLMError as exc:  # worded after LLM_FAILURE: no check reads it as "found nothing"
        return tally.outcome("failed", mode, error=msg("step.llm_failed", error=_worded(exc)))
    except PlanBoardError as exc:
        return tally.outcome("failed", mode, error=_worded(exc))
    except Exception as exc:  # a bug anywhere below must end this step, not the run
        logger.exception("step %s failed unexpectedly", step.id)
        return tally.outcome("failed", mode, error=f"{type(exc).__name__}: {exc}")


# ---- condition ----------------------------------------------------------------------------


def _check_condition(plan: Plan, step: Step, engine: Engine, tally: _Tally) -> bool:
    try:
        holds = condition_holds(plan, step)
    except ExpressionError as exc:
        raise _StepFailed(msg("step.condition_unchecked", step=step.id, error=str(exc))) from None
    if holds is not None:
        return holds
    condition = step.condition or ""
    if engine.model is None:  # nobody can judge it: never run a step on a guess
        tally.unjudged = msg("step.condition_prose_offline", condition=repr(condition))
        tally.notes.append(str(tally.unjudged))
        return False
    messages = prompts.condition_messages(build_step_context(plan, step), condition)
    reply = engine.model.chat(messages, role="executor")
    tally.usage = tally.usage + reply.usage
    verdict = (reply.content or "").strip()
    if _YES.match(verdict):
        return True
    if not _NO.match(verdict):
        tally.unjudged = msg("step.condition_unclear", reply=repr(verdict[:80]))
        tally.notes.append(str(tally.unjudged))
    return False


# ---- synthesis and reasoning ----------------------------------------------------------------


def _synthesise(plan: Plan, step: Step, engine: Engine, tally: _Tally) -> StepOutcome:
    if engine.model is None:
        tally.notes.append("no LLM is configured: the answer was composed from the results")
        return tally.outcome("completed", "synthesis",
                             result=fallback_answer(plan, engine.registry))
    language = plan.language
    period = request_period(plan.goal, engine.registry)
    messages = prompts.synthesis_messages(
        build_step_context(plan, step), plan.goal, language,
        period=None if period is None else (period.describe(language), period.start.isoformat(),
                                            period.end.isoformat()))
    reply = engine.model.chat(messages, role="executor", tools=None)
    tally.usage = tally.usage + reply.usage
    text = (reply.content or "").strip()
    if not text:
        raise _StepFailed(msg("step.empty_synthesis"))
    text = in_language(engine.model, text, language, tally)
    _require_answer(text, plan, step)
    if weak_model_checks(engine.model):
        text = _with_left_out(text, messages, plan, step, engine, tally)
    return tally.outcome("completed", "synthesis", result=text)


def _with_left_out(text: str, messages: list[dict[str, Any]], plan: Plan, step: Step,
                   engine: Engine, tally: _Tally) -> str:
    """``text``, or the model's answer when asked once more, naming the results ``text``
    leaves out (core.execution.left_out), if that answer leaves out fewer."""
    left_out = left_out_results(text, plan, step, engine.registry)
    if not left_out or engine.model is None:
        return text
    named = "\n".join(f"- {dep.id} ({dep.description})" for dep in left_out)
    try:
        reply = engine.model.chat(
            [*messages, {"role": "assistant", "content": text},
             {"role": "user", "content": prompts.LEFT_OUT_TEMPLATE.format(steps=named)}],
            role="executor", tools=None)
    except LLMError as exc:  # the first answer stands: asking again was a second chance
        logger.info("asking again for what the answer left out failed: %s", exc)
        again = ""
    else:
        tally.usage = tally.usage + reply.usage
        again = in_language(engine.model, (reply.content or "").strip(), plan.language, tally)
    ids = ", ".join(dep.id for dep in left_out)
    if (not again or non_answer(again, question=plan.goal, language=plan.language) is not None
            or len(left_out_results(again, plan, step, engine.registry)) >= len(left_out)):
        tally.notes.append(f"the answer leaves out what {ids} found; asked again, the model "
                           "did not add it")
        return f"{text}\n\n{left_out_note(plan, left_out)}"
    tally.notes.append(f"the answer left out what {ids} found; the model was asked again")
    return again


def _require_answer(text: str, plan: Plan, step: Step) -> None:
    """Fail the step when the model's text asks, apologises or restates instead of answering."""
    why = non_answer(text, question=plan.goal, language=plan.language)
    if why is None and step.description.strip() != plan.goal.strip():
        why = non_answer(text, question=step.description, language=plan.language)
    if why is not None:
        raise _StepFailed(msg("step.prefixed", step=step.id, error=f"{why} ({text[:160]!r})"))


def _reason(
    plan: Plan, step: Step, engine: Engine, tally: _Tally, cancel: threading.Event | None
) -> StepOutcome:
    if engine.model is None:
        raise _StepFailed(msg("step.reasoning_needs_llm", step=step.id))
    language = plan.language
    messages = prompts.react_messages(
        build_step_context(plan, step), plan.goal, language, MAX_REACT_ROUNDS
    )
    offered = shortlist(f"{plan.goal}\n{step.description}", engine.registry,
                        keep=[s.tool for s in plan.steps if s.tool]).described
    try:
        outcome = run_react(engine.model, engine.registry, messages, tally=tally, cancel=cancel,
                            grounds=plan_grounds(plan, literals=True),
                            offered=[tool.name for tool in offered])
    except ToolError as exc:
        raise _StepFailed(msg("step.prefixed", step=step.id, error=_worded(exc))) from None
    tally.tool_s += outcome.tool_s
    if outcome.tools_used:
        tally.notes.append("used read-only tools: " + ", ".join(outcome.tools_used))
    _require_answer(outcome.text, plan, step)
    return tally.outcome("completed", "react", result=outcome.text)


# ---- tool steps -----------------------------------------------------------------------------


def _run_tool_step(
    plan: Plan, step: Step, engine: Engine, tally: _Tally, idempotency_key: str | None,
    ledger: CallLedger | None, read_ahead: Mapping[str, Any],
) -> StepOutcome:
    try:
        target = engine.registry.get(step.tool or "")
    except UnknownToolError as exc:
        raise _StepFailed(msg("step.uses_unknown_tool", step=step.id, error=_worded(exc))) from None
    try:
        known = resolve_args(step.args or {}, plan.results())
    except ToolArgumentError as exc:
        raise _StepFailed(msg("step.bad_arguments", step=step.id, error=_worded(exc))) from None
    mode: StepMode = "direct"
    args = known
    if read_ahead and can_read_ahead(step, engine.registry):
        # the lookup first: a plan's steps are scanned only for a step that was read ahead
        found, result = read_result(read_ahead, call_key(step, engine.registry), plan.version)
        if found and not _effect_started(plan, engine.registry):
            outcome = tally.outcome("completed", mode, result=result, resolved_args=args)
            outcome.read_ahead = True
            return outcome
    if not _has_all_required(step, target):
        given = {k: v for k, v in known.items() if v is not None}
        args = given  # offline, a tool that requires nothing runs with its defaults
        if engine.model is not None or not set(target.required) <= set(given):
            mode = "forced_tool"
            args = _infer_args(plan, step, engine, target, given, tally)
            _refuse_invented(plan, step, target,
                             {k: v for k, v in args.items() if k not in given})
    key = idempotency_key if target.side_effect else None
    if (ledger is not None and key is not None and in_doubt_if_repeated(target)
            and not ledger.begin(key)):
        return tally.outcome("failed", mode, resolved_args=args, in_doubt=True,
                             error=msg("step.in_doubt", step=step.id, tool=target.name))
    try:
        result = _timed_call(engine, target, args, key, tally)
    except ToolError as exc:
        if mode == "direct":
            given = _written_by_plan(step, known)
        if target.side_effect or engine.model is None or (mode == "direct" and given == args):
            return tally.outcome("failed", mode, error=_worded(exc), resolved_args=args)
        return _call_again(plan, step, engine, target, given, args, exc, tally)
    return tally.outcome("completed", mode, result=result, resolved_args=args)


def _written_by_plan(step: Step, known: dict[str, Any]) -> dict[str, Any]:
    """The resolved arguments the plan wrote itself: all but those that pass another
    step's value on whole, which may not be in the form the tool takes (a timestamp where
    it wants HH:MM) and the model may write again; an expression around a reference stays."""
    return {name: value for name, value in known.items()
            if not (isinstance(raw := (step.args or {}).get(name), str)
                    and WHOLE_REFERENCE.match(raw))}


def _effect_started(plan: Plan, registry: ToolRegistry) -> bool:
    """True once a side-effecting step of ``plan`` has started (it may have changed what a
    read made before it saw)."""
    return any(step.status in ("running", "completed", "failed")
               and has_side_effect(step, registry) for step in plan.steps)


def _timed_call(engine: Engine, target: Tool, args: dict[str, Any], key: str | None,
                tally: _Tally) -> Any:
    """Call the tool, adding the time it took to the step's tool time (failed or not)."""
    called = time.perf_counter()
    try:
        return engine.registry.call(target.name, args, idempotency_key=key)
    finally:
        tally.tool_s += time.perf_counter() - called


def _call_again(plan: Plan, step: Step, engine: Engine, target: Tool, given: dict[str, Any],
                tried: dict[str, Any], error: ToolError, tally: _Tally) -> StepOutcome:
    """A read-only call whose arguments the model wrote or the plan read from other steps,
    once more with the tool's error shown to the model (a wrong format, a wrong name),
    which rewrites all but ``given``: the tool says what it expects, as to any agent
    calling it. A side effect is never called twice this way."""
    tally.notes.append(f"{target.name} refused the arguments {sorted(set(tried) - set(given))}; "
                       "the model was asked again with its error")
    args = _infer_args(plan, step, engine, target, given, tally,
                       refused=(tried, _worded(error)))
    _refuse_invented(plan, step, target, {k: v for k, v in args.items() if k not in given})
    try:
        result = _timed_call(engine, target, args, None, tally)
    except ToolError as exc:
        return tally.outcome("failed", "forced_tool", error=_worded(exc), resolved_args=args)
    return tally.outcome("completed", "forced_tool", result=result, resolved_args=args)


def _refuse_invented(plan: Plan, step: Step, target: Tool, inferred: dict[str, Any]) -> None:
    """Fail the step when the model filled an identifier argument with a value seen nowhere:
    in neither the goal, a completed step's result nor a value the approved plan writes. A
    lookup made with it would answer about another record (a description's example)."""
    for name, value in plan_grounds(plan, literals=True).invented(inferred):
        raise _StepFailed(msg("step.prefixed", step=step.id, error=msg(
            "tool.invented_id", tool=target.name, name=name, value=repr(value))))


def _infer_args(
    plan: Plan, step: Step, engine: Engine, target: Tool, known: dict[str, Any], tally: _Tally,
    refused: tuple[dict[str, Any], str] | None = None,
) -> dict[str, Any]:
    """The tool's arguments, the missing ones written by the model (``refused``: the
    arguments the tool last refused and its error, for the model to correct)."""
    missing = [name for name in target.required if name not in known]
    if engine.model is None:
        raise _StepFailed(msg("step.args_need_llm", step=step.id, tool=target.name,
                              missing=", ".join(missing) or msg("step.all_args")))
    from core.llm.forced_call import arguments_as_json, force_tool_call

    messages = prompts.forced_tool_messages(
        build_step_context(plan, step), target.name, known, plan.goal
    )
    if refused is not None:
        messages.append({"role": "user", "content": prompts.refused_call(target.name, *refused)})
    forced = force_tool_call(engine.model, messages, target, role="executor")
    tally.usage = tally.usage + forced.usage
    tally.notes.extend(forced.notes)
    rung = forced.mode_used  # the one the error names; a JSON ask is in the notes
    if forced.call is None and missing and weak_model_checks(engine.model):
        forced = arguments_as_json(
            engine.model, prompts.arguments_json_messages(messages, target.name,
                                                          target.parameters),
            target, role="executor")
        tally.usage = tally.usage + forced.usage
        tally.notes.extend(forced.notes)
    if forced.call is None:
        if set(target.required) <= set(known):
            # nothing was missing (a plan that wrote no args for, e.g., get_current_time):
            # the tool runs with what the plan gave and its own defaults
            tally.notes.append(f"the model did not call {target.name}; it ran with the "
                               "plan's arguments and its defaults")
            return known
        raise _StepFailed(msg("step.tool_not_called", step=step.id, tool=target.name,
                              mode=repr(rung)))
    try:
        inferred = json.loads(forced.call.arguments or "{}")
    except ValueError:
        raise _StepFailed(msg("step.args_not_json", step=step.id, tool=target.name,
                              arguments=repr(forced.call.arguments[:200]))) from None
    if not isinstance(inferred, dict):
        raise _StepFailed(msg("step.args_not_object", step=step.id, tool=target.name))
    args = {**inferred, **known}  # values written in the approved plan win
    try:
        target.validate_args(args)
    except ToolArgumentError as exc:
        raise _StepFailed(msg("step.args_rejected", step=step.id, error=_worded(exc))) from None
    return args
