"""Success checks of finished steps, and the fatal / ignorable classification of failures.

A step's ``success_criteria`` is checked structurally when it can be ("status is known",
"returns at least one hit", an expression over ``result``), by one plain LLM call
otherwise, and offline not at all (the verdict says so). Seed 004's pit 2: only failures
that block later steps (or a failed side effect) should trigger a replan. A step that
found nothing may be "ignorable"; a transport error (429, 5xx, a timeout, an unreachable
endpoint) never is: it says nothing about the answer. A text that asks for what it was
supposed to gather, apologises that it cannot, announces what it will do instead of
doing it, or restates the question is a non-answer (:func:`non_answer`, one bilingual
pattern list) and never meets any criteria.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from core.base.expressions import (
    RESULT_STEP,
    ExpressionError,
    criteria_condition,
    evaluate_condition,
)
from core.base.field_words import english_words, name_words
from core.base.language import Language, terms
from core.base.messages import Message, msg, render
from core.base.usage import Usage
from core.errors import is_transport_error
from core.llm.engine import Engine
from core.plan.approval import has_side_effect
from core.prompts.adaptive import SUCCESS_SYSTEM, fold, language_name, parse_reply

if TYPE_CHECKING:
    from core.plan.model import Plan, Step
    from core.tools.registry import ToolRegistry

__all__ = [
    "FailureKind",
    "SuccessVerdict",
    "check_structurally",
    "check_success",
    "classify_failure",
    "non_answer",
]

logger = logging.getLogger(__name__)

FailureKind = Literal["fatal", "ignorable"]
_NON_EMPTY = re.compile(
    r"at least one|non-?empty|not empty|returns? (?:some|any)\b|(?:documents?|hits?|results?"
    r"|rows?|items?) (?:are |is )?(?:found|returned)|至少一|非空|不为空"
    r"|找到.{0,6}(?:文档|结果|记录)|有结果|查到", re.IGNORECASE,
)
_COLLECTIONS = ("hits", "results", "rows", "items", "documents", "records", "events", "services")
_KNOWN_WORDS = re.compile(
    r"\b(?:is|are)\s+(?:known|returned|present|given|obtained|available|set)\b|已知|拿到|得到"
    r"|返回|明确|清楚", re.IGNORECASE,
)
# a result's status, named in Chinese (the English word is read as a field name anyway);
# other fields are named in Chinese by the tool that returns them (ToolHints.field_labels)
_STATUS_LABELS = {"状态": "status"}
_IGNORABLE = re.compile(
    r"no (?:results?|hits?|documents?)|nothing (?:was )?found|empty result|没有找到|无结果|查不到"
    r"|not found|does not exist|不存在|holds 0 item|包含 0 条", re.IGNORECASE,
)
# (why it is no answer, as a message code; what such a reply says)
_NON_ANSWERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (code, re.compile(pattern.replace("'", "[’']"), re.IGNORECASE)) for code, pattern in (
        ("check.asks_for_information",
         r"\b(?:can|could|would) you (?:please )?(?:provide|share|give|send|tell|clarify"
         r"|specify|paste|supply)\b|\bprovide (?:me with )?the (?:results|output|outcome)s? of"
         r"|\bI (?:would )?need (?:more|additional|further) (?:information|info|details|context"
         r"|data)\b|\b(?:need|require) more (?:information|info|details|context)\b"
         r"|\bI do(?:n't| not) have (?:the |enough |sufficient |any )?(?:information|data"
         r"|results|details|context)\b|能否(?:提供|告诉)|(?:提供|告诉我)(?:一下)?(?:之前|前面"
         r"|上一步|上述|先前)的?(?:步骤|结果|信息)|需要(?:更多|进一步)的?(?:信息|细节|上下文|数据)"
         r"|缺少(?:必要的?)?信息"),
        ("check.apologises",
         r"\b(?:I'?m|I am) (?:sorry|afraid)\b[^.!?\n]{0,60}\b(?:cannot|can't|can not|unable"
         r"|not able|do(?:n't| not) have)\b|\bI (?:cannot|can't|can not|am unable to|'m unable"
         r" to|am not able to)\s+(?:access|browse|retrieve|look up|check|determine|answer"
         r"|help|complete|perform|fulfil)|\bI do(?:n't| not) have access\b|\bas an AI\b"
         r"|(?:抱歉|对不起|很遗憾|不好意思)[^。！？\n]{0,30}(?:无法|不能|没法|没有办法)"
         r"|我(?:无法|不能|没有办法)(?:访问|查询|获取|回答|完成|确定|浏览)|作为(?:一个)?(?:AI|人工智能)"),
        # A small model's final answer was "To meet the goal … I will follow these steps:
        # 1. … 2. …" and nothing was done. Openings only (after a "Sure," at most), so that
        # "… I refunded it. I will send the refund id" and "Let me know" stay answers; a
        # "will"/"would" needs a verb of doing the work, so "I would recommend" is an answer.
        ("check.announces",
         r"\b(?:I|we)(?: will|'ll| would|'d| am going to|'m going to| shall| need to| plan to)"
         r" (?:\w+ ){0,2}?(?:follow|take|perform|go through) (?:these|the following|the below"
         r"|the steps|a few) (?:\w+ )?steps\b|\b(?:here are|these are|below are|the following"
         r" are) the steps (?:I|we)(?: will|'ll| would|'d| can| need to| should| plan to)"
         r"|\bhere(?:'s| is) (?:my plan|the plan|how (?:I|we) (?:will|would|'d|'ll|plan to)"
         r"|what (?:I|we) (?:will|would|'d|'ll) do)\b"
         r"|^\W*(?:(?:sure|okay|ok|certainly|alright|of course)\b\W*)?(?:(?:first(?:ly)?|to begin"
         r"|to start|next|now|to (?:meet|achieve|accomplish|answer|complete|fulfil|address"
         r"|handle|solve|do)\b[^.!?\n]{0,120}?)\W+)?(?:(?:I|we)(?: will|'ll| would|'d| am going"
         r" to|'m going to| need to| shall| must| plan to| first need to)(?: first| now| start"
         r" by| begin by)? (?:first |now )?(?:follow|take|start|begin|check|look|use|call"
         r"|query|retrieve|gather|search|find|perform|proceed|fetch|verify|get|analy[sz]e"
         r"|calculate|need|review|determine)\b|let(?:'s| me| us) (?:first |now )?(?:check|look"
         r"|start|begin|find|search|query|retrieve|gather|fetch|see|verify|try|think|figure"
         r"|calculate|analy[sz]e|get)\b)"
         r"|我们?(?:将|会|要|打算|准备|需要)(?:按照|遵循|采取|执行|通过|进行)?(?:以下|如下|下面)的?(?:几个"
         r"|这些)?步骤|以下是我(?:将|会|要|打算)?(?:采取|执行|遵循|进行)的(?:步骤|计划)|我的计划(?:是|如下)"
         r"|^\W*(?:(?:好的|当然|没问题|我?明白了?|收到)\W*)*(?:(?:首先|接下来|下面|现在|然后)\W*)?(?:我|让我)"
         r"(?:将|会|要|来|打算|准备|需要)?(?:先|首先)|^\W*(?:(?:好的|当然|没问题|我?明白了?|收到)\W*)*"
         r"(?:我|让我)(?:将|会|要|来|打算|准备)(?:帮(?:助)?(?:你|您)|为(?:你|您))?(?:检查|查询|查看|查一下|看看"
         r"|搜索|获取|调用|使用|分析|计算|确认|核实|收集|执行)|^\W*(?:(?:好的|当然|没问题|我?明白了?|收到)\W*)*"
         r"(?:首先|接下来|下面)\W*我(?:将|会|要|来|打算|准备)"
         # a whole reply that is one clause of intent: "好的，我将根据 s2 的结果生成诊断报告。"
         r"|^\W*(?:(?:好的|当然|没问题|我?明白了?|收到)\W*)*(?:我|让我)(?:将|会|要|来|打算|准备)"
         r"[^。！？!?\n，；,;]{0,60}[。！.!]?\s*$"),
    )
)
_RESTATED_OVERLAP = 0.6  # share of terms a question-shaped reply has in common with the request
_PLAN_ERRORS = re.compile(r"unknown tool|unknown argument|arguments? (?:do|does) not match"
                          r"|not valid JSON|condition does not parse", re.IGNORECASE)


class SuccessVerdict(BaseModel):
    """Whether a step met its success criteria, why, and how that was decided.

    ``reason`` is worded in the request's language (what a replan reads); ``message``, when
    PlanBoard itself decided, is that reason as a code, which a face words in its reader's
    language. A model's verdict has only its own words.
    """

    met: bool
    reason: str = ""
    how: Literal["structural", "llm", "skipped"] = "structural"
    message: Message | None = None


def _verdict(met: bool, message: Message, language: Language,
             how: Literal["structural", "skipped"] = "structural") -> SuccessVerdict:
    return SuccessVerdict(met=met, reason=render(message, language), how=how, message=message)


class _Judgement(BaseModel):
    met: bool
    reason: str = ""


def check_success(step: Step, engine: Engine, *, language: Language
                  ) -> tuple[SuccessVerdict, Usage]:
    """Check ``step`` against its success_criteria: structurally, by the LLM, or skipped;
    the reason in the request's ``language``.

    PlanParseError (keeping the raw reply) when the model's verdict is unusable.
    """
    criteria = (step.success_criteria or "").strip()
    lang = language
    if step.status == "completed" and isinstance(step.result, str):
        why = _non_answer(step.result, question=step.description)
        if why is not None:
            return _verdict(False, why, lang), Usage()
    if not criteria:
        return _verdict(True, msg("check.no_criteria"), lang, how="skipped"), Usage()
    if step.status != "completed":
        return _verdict(False, msg("check.not_completed",
                                   status=msg(f"step_status.{step.status}")), lang), Usage()
    tool = engine.registry.get(step.tool) if step.tool in engine.registry else None
    verdict = check_structurally(criteria, step.result, lang,
                                 labels=tool.hints.field_labels if tool is not None else None)
    if verdict is not None:
        return verdict, Usage()
    if engine.model is None:
        return _verdict(True, msg("check.needs_llm", criteria=criteria), lang,
                        how="skipped"), Usage()
    messages = [{"role": "user", "content": SUCCESS_SYSTEM.substitute(
        criteria=criteria, description=step.description, result=fold(step.result),
        language=language_name(lang))}]
    reply = engine.model.chat(messages, role="executor", tools=None, json_mode=True)
    judged = parse_reply(reply.content or "", _Judgement, what="success check")
    return SuccessVerdict(met=judged.met, reason=judged.reason, how="llm"), reply.usage


def non_answer(text: str, *, question: str = "", language: Language) -> str | None:
    """Why ``text`` is not an answer (it asks for information, apologises that it cannot,
    announces a plan instead of doing it, or restates ``question``), in ``language``, or
    None when it may be one."""
    why = _non_answer(text, question=question)
    return None if why is None else render(why, language)


def _non_answer(text: str, *, question: str) -> Message | None:
    for code, pattern in _NON_ANSWERS:
        if pattern.search(text):
            return msg(code)
    said, asked = terms(text), terms(question)
    restated = " ".join(text.split()).rstrip("?？.。!！ ").lower() == " ".join(
        question.split()).rstrip("?？.。!！ ").lower()
    if not restated and said and text.rstrip().endswith(("?", "？")):
        restated = len(said & asked) / len(said | asked) >= _RESTATED_OVERLAP
    if restated and question.strip():
        return msg("check.restates")
    return None


def check_structurally(criteria: str, result: Any, lang: Language = "en", *,
                       labels: Mapping[str, str] | None = None) -> SuccessVerdict | None:
    """A verdict when the criteria can be checked on the result's structure, else None.

    ``labels``: other names of the result's fields (``{"单号": "ticket_id"}``), as the
    step's tool declares them (``ToolHints.field_labels``)."""
    if (condition := criteria_condition(criteria)) is not None:
        try:
            met = evaluate_condition(condition, {RESULT_STEP: result})
        except ExpressionError as exc:
            logger.debug("criteria %r is not an expression: %s", criteria, exc)
        else:
            verdict = "check.expression_true" if met else "check.expression_false"
            return _verdict(met, msg(verdict, criteria=criteria), lang)
    if _NON_EMPTY.search(criteria):
        size = _size(result)
        if size is not None:
            return _verdict(size > 0, msg("check.result_size", size=size), lang)
    if _KNOWN_WORDS.search(criteria) and isinstance(result, dict):
        field = _field_named(criteria, result, labels or {})
        if field is not None:
            value = result.get(field)
            met = value is not None and value != ""
            held = "check.field_set" if met else "check.field_empty"
            return _verdict(met, msg(held, field=field), lang)
    return None


def _size(result: Any) -> int | None:
    if isinstance(result, list):
        return len(result)
    if isinstance(result, dict):
        for key in _COLLECTIONS:
            if isinstance(result.get(key), list):
                return len(result[key])
        for key in ("count", "row_count", "total"):
            if isinstance(result.get(key), int):
                return result[key]
    return None


def _field_named(criteria: str, result: dict[str, Any], labels: Mapping[str, str]
                 ) -> str | None:
    """The result field the criteria talks about ("the order status" → status): a label
    the tool declares (the longest that appears), else the words of a field name, else
    (criteria in Chinese) the field whose name's words its nouns all mean ("服务列表" →
    services), the longest."""
    for word in sorted({**_STATUS_LABELS, **labels}, key=len, reverse=True):
        if word in criteria:
            return {**_STATUS_LABELS, **labels}[word]
    words = re.findall(r"[a-z0-9]+", criteria.lower())
    best: str | None = None
    for start in range(len(words)):
        for end in range(start + 1, min(start + 4, len(words)) + 1):
            key = "_".join(words[start:end])
            if key in result and (best is None or len(key) > len(best)):
                best = key
    meant = set(english_words(criteria))
    if best is None and meant:
        best = max((key for key in result if set(name_words(key)) <= meant),
                   key=len, default=None)
    if best is None and "status" in words:
        return "status"  # "the order status is known" on a result without one: not met
    return best


def classify_failure(step: Step, error: str | None, *, registry: ToolRegistry,
                     plan: Plan | None = None) -> FailureKind:
    """"fatal" (blocks dependents: replan) or "ignorable" (record it and go on).

    Fatal: a transport error (429, 5xx, a timeout, an unreachable endpoint), a failed side
    effect (a tool has one unless it says it only reads: an unknown tool counts), the
    synthesis step, a reasoning step, a step another step (other than the synthesis)
    depends on, or an error in the plan itself (unknown tool, bad arguments). Ignorable: a
    read-only tool step nothing else needs that found nothing.
    """
    text = error or ""
    if step.tool is None or is_transport_error(text) or _PLAN_ERRORS.search(text):
        return "fatal"
    if has_side_effect(step, registry):
        return "fatal"
    if plan is not None:
        synthesis = plan.synthesis_step()
        if synthesis is not None and step.id == synthesis.id:
            return "fatal"
        if any(step.id in other.depends_on for other in plan.steps
               if synthesis is None or other.id != synthesis.id):
            return "fatal"
    return "ignorable" if _IGNORABLE.search(text) else "fatal"
