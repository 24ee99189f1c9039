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

from pydantic import BaseModel, Field

from core.base.language import Language, detect_language, pick
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
    lang = detect_language(plan.goal)
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
    lang = detect_language(plan.goal)
    failed = _failed(plan)
    if not failed:
        return Reflection(
            root_cause=failure.strip() or pick(lang, "运行没有完成", "the run did not finish"),
            lesson=pick(lang, "检查计划是否覆盖了请求的每个部分，并为每步写明成功标准",
                      "check that the plan covers every part of the request and give each "
                      "step a success criterion"),
        )
    step = failed[0]
    error = (step.error or failure or "").strip()
    tool = step.tool or pick(lang, "推理步骤", "a reasoning step")
    root = pick(lang, f"{step.id}（{step.description}）失败：{error}",
              f"{step.id} ({step.description}) failed: {error}")
    lesson, retry, hint = _rule(step, error, tool, lang, _looked_up_by(plan, step))
    return Reflection(root_cause=root, lesson=lesson, should_retry=retry, retry_hint=hint,
                      tools=_tools_of(failed))


def _looked_up_by(plan: Plan, step: Step) -> Step | None:
    """The tool step ``step`` depends on directly (the lookup that should decide it)."""
    return next((plan.step(d) for d in step.depends_on
                 if d in plan.ids() and plan.step(d).tool), None)


def _rule(step: Step, error: str, tool: str, lang: Language, lookup: Step | None
          ) -> tuple[str, bool, str]:
    """(lesson, should_retry, retry_hint) for one failed step."""
    if _NEEDS_LLM.search(error) and step.tool:  # a tool step left its arguments out
        return (render(msg("lesson.tool_args_need_llm", tool=tool,
                           description=step.description), lang), False,
                render(msg("lesson.tool_args_hint"), lang))
    if _NEEDS_LLM.search(error):
        return (pick(lang, f"没有大模型时，不要用推理步骤做“{step.description}”，"
                         "改用带明确参数的工具步骤",
                   f"without an LLM, do not plan a reasoning step for \"{step.description}\"; "
                   "use a tool step with explicit arguments"),
                False, pick(lang, "配置 OPENAI_API_KEY 后重试", "configure OPENAI_API_KEY and run "
                          "again"))
    if _UNKNOWN_TOOL.search(error):
        return (pick(lang, f"只使用已注册的工具，{tool} 不存在", f"use only registered tools; "
                   f"{tool} does not exist"), True,
                pick(lang, "换用已注册的工具", "use a registered tool instead"))
    if step.tool and _REFUSED.search(error):
        return _refused(tool, lookup, lang)
    if _MISSING.search(error):
        return (pick(lang, f"调用 {tool} 前先向用户确认编号，{_quoted(error)}",
                   f"confirm the id with the user before calling {tool}; {_quoted(error)}"),
                False, pick(lang, "向用户确认正确的编号", "ask the user for the correct id"))
    if _TRANSIENT.search(error):
        return (pick(lang, f"{tool} 可能超时或暂时不可用，减少并行调用并允许重试",
                   f"{tool} can time out or be briefly unavailable; run fewer calls in parallel "
                   "and allow a retry"),
                True, pick(lang, "稍后重试，减少并行步骤", "retry later with fewer parallel steps"))
    if step.tool and _ARGS.search(error):
        return (pick(lang, f"调用 {tool} 时给出它需要的全部参数（{_quoted(error)}）",
                   f"give {tool} every argument its schema requires ({_quoted(error)})"),
                True, pick(lang, f"从前面步骤的结果中填好 {tool} 的参数",
                         f"fill the arguments of {tool} from earlier results"))
    return (pick(lang, f"{tool} 失败（{_quoted(error)}）时，换一条路线（其他工具或缩小回答范围），"
                     "不要重复同样的调用",
               f"when {tool} fails ({_quoted(error)}), take another route (another tool or a "
               "reduced answer) instead of repeating the same call"),
            False, "")


def _refused(tool: str, lookup: Step | None, lang: Language) -> tuple[str, bool, str]:
    """The lesson of an action its tool refused: decide it on a lookup, with a condition."""
    source = lookup.id if lookup is not None else "sN"
    if lookup is not None and lookup.tool:
        check_zh, check_en = f"先用 {lookup.tool} 查询", f"check with {lookup.tool}"
    else:
        check_zh, check_en = "先查询它要操作的记录", "look up the record it acts on"
    return (pick(lang, f"调用 {tool} 之前{check_zh}，确认此时允许这样做，并把 {tool} 的条件写成"
                       f"对查询结果的判断（{source}.<字段> == <取值>）",
                 f"before {tool}, {check_en} that the action is allowed now, and make {tool} "
                 f"conditional on what it finds ({source}.<field> == <value>)"),
            False, pick(lang, "先查询，再决定是否执行", "look the record up first, then decide"))


def _quoted(error: str) -> str:
    return preview(error, _QUOTE_CHARS)


def review_success(versions: Sequence[Plan], engine: Engine
                   ) -> tuple[Reflection | None, Usage]:
    """A lesson from a successful run whose plan changed (None when it never changed)."""
    if len(versions) < 2:
        return None, Usage()
    final = versions[-1]
    lang = detect_language(final.goal)
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
    tool = what.tool or pick(lang, "推理步骤", "a reasoning step")
    fix = ", ".join(dict.fromkeys(f"{s.tool}" for s in fixes)) or pick(lang, "重新规划的步骤",
                                                                       "the replanned steps")
    return Reflection(
        root_cause=pick(lang, f"{what.id}（{tool}）失败：{_quoted(what.error or '')}",
                      f"{what.id} ({tool}) failed: {_quoted(what.error or '')}"),
        lesson=pick(lang, f"{tool} 失败（{_quoted(what.error or '')}）时，"
                          f"改用 {fix} 成功完成了任务",
                  f"when {tool} failed ({_quoted(what.error or '')}), using {fix} instead "
                  "completed the task"),
        tools=_tools_of([what, *fixes]),
    )


def failure_text(plan: Plan) -> str:
    """The failed steps of a plan and their errors, on one line."""
    return "; ".join(f"{s.id} ({s.tool or 'reasoning'}) failed: {s.error}"
                     for s in plan.steps if s.status == "failed")
