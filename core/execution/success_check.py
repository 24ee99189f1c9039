"""Success checks of finished steps, and the fatal / ignorable classification of failures.

A step's ``success_criteria`` is checked structurally when it can be ("status is known",
"returns at least one hit", an expression over ``result``), by one plain LLM call
otherwise, and offline not at all (the verdict says so). Seed 004's pit 2: only failures
that block later steps (or a failed side effect) should trigger a replan.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from core.base.expressions import ExpressionError, evaluate_condition
from core.base.language import Language, detect_language, pick
from core.base.usage import Usage
from core.llm.engine import Engine
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
]

logger = logging.getLogger(__name__)

FailureKind = Literal["fatal", "ignorable"]
_RESULT_NAME = re.compile(r"\bresult\b")
_EXPRESSION = re.compile(r"==|!=|<=|>=|<|>|\bin\b")
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
_ZH_FIELDS = {
    "退款单号": "refund_id", "运单号": "tracking_no", "物流单号": "tracking_no",
    "订单号": "order_id", "异常服务": "unhealthy", "状态": "status", "金额": "amount",
}
_IGNORABLE = re.compile(
    r"time(?:d)? ?out|超时|no (?:results?|hits?|documents?)|nothing (?:was )?found|empty result"
    r"|没有找到|无结果|查不到|not found|does not exist|不存在|rate limit|429|503|temporar"
    r"|connection|unavailable|try again later|holds 0 item|包含 0 条", re.IGNORECASE,
)
_PLAN_ERRORS = re.compile(r"unknown tool|unknown argument|arguments? (?:do|does) not match"
                          r"|not valid JSON|condition does not parse", re.IGNORECASE)


class SuccessVerdict(BaseModel):
    """Whether a step met its success criteria, why, and how that was decided."""

    met: bool
    reason: str = ""
    how: Literal["structural", "llm", "skipped"] = "structural"


class _Judgement(BaseModel):
    met: bool
    reason: str = ""



def check_success(step: Step, engine: Engine, *, language: Language | None = None
                  ) -> tuple[SuccessVerdict, Usage]:
    """Check ``step`` against its success_criteria: structurally, by the LLM, or skipped.

    PlanParseError (keeping the raw reply) when the model's verdict is unusable.
    """
    criteria = (step.success_criteria or "").strip()
    lang = language or detect_language(criteria or step.description)
    if not criteria:
        return SuccessVerdict(met=True, how="skipped", reason=pick(
            lang, "该步骤没有成功标准", "the step has no success criteria")), Usage()
    if step.status != "completed":
        return SuccessVerdict(met=False, reason=pick(
            lang, f"步骤没有完成（{step.status}）", f"the step did not complete ({step.status})"
        )), Usage()
    verdict = check_structurally(criteria, step.result, lang)
    if verdict is not None:
        return verdict, Usage()
    if engine.model is None:
        return SuccessVerdict(met=True, how="skipped", reason=pick(
            lang, f"未检查“{criteria}”：需要大模型判断", f"not checked (\"{criteria}\" needs "
            "an LLM to judge)")), Usage()
    messages = [{"role": "user", "content": SUCCESS_SYSTEM.substitute(
        criteria=criteria, description=step.description, result=fold(step.result),
        language=language_name(lang))}]
    reply = engine.model.chat(messages, role="executor", tools=None, json_mode=True)
    judged = parse_reply(reply.content or "", _Judgement, what="success check")
    return SuccessVerdict(met=judged.met, reason=judged.reason, how="llm"), reply.usage


def check_structurally(criteria: str, result: Any, lang: Language = "en"
                       ) -> SuccessVerdict | None:
    """A verdict when the criteria can be checked on the result's structure, else None."""
    if _RESULT_NAME.search(criteria) and _EXPRESSION.search(criteria):
        try:
            met = evaluate_condition(_RESULT_NAME.sub("s0", criteria), {"s0": result})
        except ExpressionError as exc:
            logger.debug("criteria %r is not an expression: %s", criteria, exc)
        else:
            return SuccessVerdict(met=met, reason=pick(
                lang, f"表达式“{criteria}”为{'真' if met else '假'}",
                f"the expression \"{criteria}\" is {str(met).lower()}"))
    if _NON_EMPTY.search(criteria):
        size = _size(result)
        if size is not None:
            return SuccessVerdict(met=size > 0, reason=pick(
                lang, f"结果包含 {size} 条", f"the result holds {size} item(s)"))
    if _KNOWN_WORDS.search(criteria) and isinstance(result, dict):
        field = _field_named(criteria, result)
        if field is not None:
            value = result.get(field)
            met = value is not None and value != ""
            return SuccessVerdict(met=met, reason=pick(
                lang, f"结果字段 {field} {'有值' if met else '为空'}",
                f"the result's {field} is {'set' if met else 'missing or empty'}"))
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


def _field_named(criteria: str, result: dict[str, Any]) -> str | None:
    """The result field the criteria talks about ("the order status" → status)."""
    for word, field in _ZH_FIELDS.items():
        if word in criteria:
            return field
    words = re.findall(r"[a-z0-9]+", criteria.lower())
    best: str | None = None
    for start in range(len(words)):
        for end in range(start + 1, min(start + 4, len(words)) + 1):
            key = "_".join(words[start:end])
            if key in result and (best is None or len(key) > len(best)):
                best = key
    if best is None and "status" in words:
        return "status"  # "the order status is known" on a result without one: not met
    return best


def classify_failure(step: Step, error: str | None, *, plan: Plan | None = None,
                     registry: ToolRegistry | None = None) -> FailureKind:
    """"fatal" (blocks dependents: replan) or "ignorable" (record it and go on).

    Fatal: a failed side effect, the synthesis step, a step another step (other than the
    synthesis) depends on, or an error in the plan itself (unknown tool, bad arguments).
    Ignorable: a read-only step nothing else needs that found nothing or timed out.
    """
    text = error or ""
    if _PLAN_ERRORS.search(text):
        return "fatal"
    if registry is not None and step.tool in registry and registry.get(step.tool).side_effect:
        return "fatal"
    if registry is None and step.tool and re.search(r"refund|apply|create|delete|send|update"
                                                    r"|cancel|pay|write", step.tool):
        return "fatal"
    if plan is not None:
        synthesis = plan.synthesis_step()
        if synthesis is not None and step.id == synthesis.id:
            return "fatal"
        if any(step.id in other.depends_on for other in plan.steps
               if synthesis is None or other.id != synthesis.id):
            return "fatal"
    elif step.tool is None:
        return "fatal"
    return "ignorable" if _IGNORABLE.search(text) else "fatal"
