"""Reflection after a failed run (and a short review after a run that needed a replan).

Seed 004: a failed run is explained in one plain chat call with no tools as
{root_cause, lesson, should_retry, retry_hint}; the lesson must name a concrete decision
to change (pit 3), and a successful run whose plan changed leaves a lesson too (pit 5).
Offline, rules read the failed steps' errors.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from core.base.language import Language
from core.base.messages import msg, render
from core.base.text import preview
from core.base.usage import Usage
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.prompts.adaptive import (
    REFLECTION_SYSTEM,
    REFLECTION_USER,
    REVIEW_SYSTEM,
    REVIEW_USER,
    fold,
    language_name,
    parse_reply,
)

__all__ = [
    "Reflection",
    "failure_text",
    "reflect",
    "reflect_offline",
    "review_success",
    "trajectory",
]

logger = logging.getLogger(__name__)

_NEEDS_LLM = re.compile(r"needs? an? (?:LLM|language model)|no LLM|需要大模型|需要配置大模型",
                        re.IGNORECASE)
_MISSING = re.compile(r"does not exist|not found|is unknown|unknown \w+ (?:number|id)\b|不存在",
                      re.I)
_ARGS = re.compile(r"parameter schema|field required|missing|arguments?", re.IGNORECASE)
# a tool that ran and refused what it was asked: the action is not allowed (yet)
_REFUSED = re.compile(r"\bnot (?:allowed|permitted|eligible|possible)\b|\brefus|\breject"
                      r"|\bcan(?:not| only) be\b|\bcan (?:only )?be \w+ (?:once|after|when)\b"
                      r"|\bonly (?:once|after|when)\b|\bonce it (?:has|is)\b|\bpast (?:its|the)\b"
                      r"|才能|尚未|已超过|不允许|不符合", re.IGNORECASE)
_TRANSIENT = re.compile(r"time(?:d)? ?out|超时|connection|rate limit|429|503|temporar", re.I)
_UNKNOWN_TOOL = re.compile(r"unknown tool", re.IGNORECASE)
_QUOTE_CHARS = 120


class Reflection(BaseModel):
    """A failure explained: the root cause, the lesson, and whether to try again (and how)."""

    root_cause: str = Field(min_length=1)
    lesson: str = Field(min_length=1)
    should_retry: bool = False
    retry_hint: str = ""
    tools: list[str] = Field(default_factory=list)



def trajectory(plan: Plan) -> str:
    """The steps of a plan as compact JSON lines: what each did and how it ended."""
    lines = []
    for s in plan.steps:
        entry = {"id": s.id, "description": s.description, "tool": s.tool, "args": s.args,
                 "status": s.status}
        if s.error:
            entry["error"] = s.error
        if s.status == "completed" and s.result is not None:
            entry["result"] = fold(s.result, 300)
        lines.append(json.dumps(entry, ensure_ascii=False, default=str))
    return "\n".join(lines)


def _failed(plan: Plan) -> list[Step]:
    return [s for s in plan.steps if s.status == "failed"]


def reflect(plan: Plan, failure: str, engine: Engine) -> tuple[Reflection, Usage]:
    """Explain why ``plan`` failed: one plain chat call (no tools), or rules offline.

    PlanParseError (keeping the raw reply) when the model's reflection is unusable.
    """
    if engine.model is None:
        return reflect_offline(plan, failure), Usage()
    lang = plan.language
    messages = [
        {"role": "system", "content": REFLECTION_SYSTEM.substitute(language=language_name(lang))},
        {"role": "user", "content": REFLECTION_USER.substitute(
            goal=plan.goal, versions=plan.version, failure=failure.strip() or "(none given)",
            trajectory=trajectory(plan))},
    ]
    reply = engine.model.chat(messages, role="planner", tools=None, json_mode=True)
    found = parse_reply(reply.content or "", Reflection, what="reflection")
    if not found.tools:
        found.tools = _tools_of(_failed(plan))
    return found, reply.usage


def _tools_of(steps: Sequence[Step]) -> list[str]:
    return list(dict.fromkeys(s.tool for s in steps if s.tool))


def reflect_offline(plan: Plan, failure: str = "") -> Reflection:
    """A rule-based reflection from the first failed step's error."""
    lang = plan.language
    failed = _failed(plan)
    if not failed:
        return Reflection(
            root_cause=failure.strip() or _said("lesson.unfinished", lang),
            lesson=_said("lesson.cover_request", lang),
        )
    step = failed[0]
    error = (step.error or failure or "").strip()  # what the rules read: as written
    tool = step.tool or _said("lesson.reasoning_step", lang)
    root = _said("lesson.step_failed", lang, step=step.id, description=step.description,
                 error=_worded_error(step, lang) or error)
    lesson, retry, hint = _rule(step, error, tool, lang, _looked_up_by(plan, step))
    return Reflection(root_cause=root, lesson=lesson, should_retry=retry, retry_hint=hint,
                      tools=_tools_of(failed))


def _said(code: str, lang: Language, **params: Any) -> str:
    """A lesson's words in the request's language (lessons are kept as text)."""
    return render(msg(code, **params), lang)


def _looked_up_by(plan: Plan, step: Step) -> Step | None:
    """The tool step ``step`` depends on directly (the lookup that should decide it)."""
    return next((plan.step(d) for d in step.depends_on
                 if d in plan.ids() and plan.step(d).tool), None)


def _rule(step: Step, error: str, tool: str, lang: Language, lookup: Step | None
          ) -> tuple[str, bool, str]:
    """(lesson, should_retry, retry_hint) for one failed step."""
    if _NEEDS_LLM.search(error) and step.tool:  # a tool step left its arguments out
        return (_said("lesson.tool_args_need_llm", lang, tool=tool,
                      description=step.description), False, _said("lesson.tool_args_hint", lang))
    quoted = _quoted(_worded_error(step, lang) or error)
    if _NEEDS_LLM.search(error):
        return (_said("lesson.needs_llm", lang, description=step.description), False,
                _said("lesson.needs_llm_hint", lang))
    if _UNKNOWN_TOOL.search(error):
        return (_said("lesson.unknown_tool", lang, tool=tool), True,
                _said("lesson.unknown_tool_hint", lang))
    if step.tool and _REFUSED.search(error):
        return _refused(tool, lookup, lang)
    if _MISSING.search(error):
        return (_said("lesson.missing", lang, tool=tool, error=quoted), False,
                _said("lesson.missing_hint", lang))
    if _TRANSIENT.search(error):
        return (_said("lesson.transient", lang, tool=tool), True,
                _said("lesson.transient_hint", lang))
    if step.tool and _ARGS.search(error):
        return (_said("lesson.arguments", lang, tool=tool, error=quoted), True,
                _said("lesson.arguments_hint", lang, tool=tool))
    return (_said("lesson.other_route", lang, tool=tool, error=quoted), False, "")


def _refused(tool: str, lookup: Step | None, lang: Language) -> tuple[str, bool, str]:
    """The lesson of an action its tool refused: decide it on a lookup, with a condition."""
    source = lookup.id if lookup is not None else "sN"
    if lookup is not None and lookup.tool:
        check = msg("lesson.check_with", tool=lookup.tool)
    else:
        check = msg("lesson.check_record")
    return (_said("lesson.refused", lang, tool=tool, check=check, source=source), False,
            _said("lesson.refused_hint", lang))


def _worded_error(step: Step, lang: Language) -> str:
    """The step's error in ``lang`` when PlanBoard worded it (a tool's own words as written)."""
    return render(step.error_message or step.error, lang).strip()


def _quoted(error: str) -> str:
    return preview(error, _QUOTE_CHARS)


def review_success(versions: Sequence[Plan], engine: Engine
                   ) -> tuple[Reflection | None, Usage]:
    """A lesson from a successful run whose plan changed (None when it never changed)."""
    if len(versions) < 2:
        return None, Usage()
    final = versions[-1]
    lang = final.language
    if engine.model is not None:
        history = "\n\n".join(f"Version {p.version}:\n{trajectory(p)}" for p in versions)
        messages = [
            {"role": "system", "content": REVIEW_SYSTEM.substitute(language=language_name(lang))},
            {"role": "user", "content": REVIEW_USER.substitute(goal=final.goal, history=history)},
        ]
        reply = engine.model.chat(messages, role="planner", tools=None, json_mode=True)
        found = parse_reply(reply.content or "", Reflection, what="review")
        found.should_retry = False
        if not found.tools:
            found.tools = _tools_of([s for p in versions for s in _failed(p)])
        return found, reply.usage
    return _review_offline(versions, lang), Usage()


def _review_offline(versions: Sequence[Plan], lang: Language) -> Reflection | None:
    failed = [s for p in versions[:-1] for s in _failed(p)]
    if not failed:
        return None
    first_ids = set(versions[0].ids())
    fixes = [s for s in versions[-1].steps if s.id not in first_ids and s.status == "completed"
             and s.tool]
    what = failed[0]
    tool = what.tool or _said("lesson.reasoning_step", lang)
    fix = ", ".join(dict.fromkeys(f"{s.tool}" for s in fixes)) or _said(
        "lesson.replanned_steps", lang)
    error = _quoted(_worded_error(what, lang))
    return Reflection(
        root_cause=_said("lesson.tool_failed", lang, step=what.id, tool=tool, error=error),
        lesson=_said("lesson.fixed_by", lang, tool=tool, error=error, fix=fix),
        tools=_tools_of([what, *fixes]),
    )


def failure_text(plan: Plan) -> str:
    """The failed steps of a plan and their errors, on one line."""
    return "; ".join(f"{s.id} ({s.tool or 'reasoning'}) failed: {s.error}"
                     for s in plan.steps if s.status == "failed")
